//! Seeded random edits of a source file, for the tests that hold a read which keeps what the last
//! one found ([`crate::signals::rescan`], the language server's kept reads) to a whole read.

use rand::{Rng, SeedableRng};
use rand_xoshiro::SplitMix64;

/// Edits of one source file: every even step an insertion of one of `pieces` or a short deletion,
/// anywhere; every odd step the undoing of it (the source itself).
pub struct RandomEdits<'a> {
    source: &'a str,
    pieces: &'a [&'a str],
    rng: SplitMix64,
    step: usize,
}

impl<'a> RandomEdits<'a> {
    pub fn new(source: &'a str, pieces: &'a [&'a str], seed: u64) -> RandomEdits<'a> {
        RandomEdits {
            source,
            pieces,
            rng: SplitMix64::seed_from_u64(seed),
            step: 0,
        }
    }

    /// A number from 0 to `bound` (excluded).
    fn below(&mut self, bound: usize) -> usize {
        ((u128::from(self.rng.next_u64()) * bound as u128) >> 64) as usize
    }
}

impl Iterator for RandomEdits<'_> {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        let mut text = self.source.to_string();
        self.step += 1;
        if self.step.is_multiple_of(2) {
            return Some(text);
        }
        let mut at = self.below(text.len().max(1));
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        if self.below(3) == 0 {
            let mut end = (at + 1 + self.below(3)).min(text.len());
            while !text.is_char_boundary(end) {
                end += 1;
            }
            text.replace_range(at..end, "");
        } else {
            text.insert_str(at, self.pieces[self.below(self.pieces.len())]);
        }
        Some(text)
    }
}
