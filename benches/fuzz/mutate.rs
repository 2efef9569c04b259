//! The mutations: stacked byte flips, interesting values, dictionary words, repeats, splices and
//! truncations of a seed, bounded in length.

use rand::{Rng, RngExt};

const INTERESTING: &[u64] = &[
    0,
    1,
    0x7f,
    0xff,
    0xffff,
    0x7fff_ffff,
    0xffff_ffff,
    0x1_0000,
    u64::MAX,
    0x7ff8_0000_0000_0000, // f64 NaN
    0x7ff0_0000_0000_0000, // f64 infinity
    0xfff0_0000_0000_0000, // f64 negative infinity
    0x7fc0_0000,           // f32 NaN
];

/// One to four stacked mutations of `base`, at most `max_len` bytes.
pub fn mutate(
    base: &[u8],
    pool: &[Vec<u8>],
    dictionary: &[&str],
    max_len: usize,
    rng: &mut impl Rng,
) -> Vec<u8> {
    let mut input = base.to_vec();
    for _ in 0..rng.random_range(1..=4) {
        let len = input.len();
        let at = if len == 0 {
            0
        } else {
            rng.random_range(0..=len)
        };
        match rng.random_range(0..11) {
            0 if len > 0 => {
                let at = at.min(len - 1);
                input[at] ^= 1 << rng.random_range(0..8);
            }
            1 if len > 0 => {
                let at = at.min(len - 1);
                input[at] = rng.random();
            }
            2 => {
                let count = rng.random_range(1..=8);
                let bytes: Vec<u8> = (0..count).map(|_| rng.random()).collect();
                input.splice(at..at, bytes);
            }
            3 if len > 0 => {
                let end = (at + rng.random_range(1..=len.min(64))).min(len);
                input.drain(at.min(end)..end);
            }
            4 if len > 0 => {
                // Repeat a short range many times: brackets, attributes, nesting.
                let start = at.min(len - 1);
                let end = (start + rng.random_range(1..=16)).min(len);
                let piece = input[start..end].to_vec();
                let times = rng.random_range(2..=512);
                let repeated: Vec<u8> = piece
                    .iter()
                    .copied()
                    .cycle()
                    .take(piece.len() * times)
                    .collect();
                input.splice(start..start, repeated);
            }
            5 | 6 if !dictionary.is_empty() => {
                let word = dictionary[rng.random_range(0..dictionary.len())].as_bytes();
                if rng.random_bool(0.5) || at + word.len() > len {
                    input.splice(at..at, word.iter().copied());
                } else {
                    input[at..at + word.len()].copy_from_slice(word);
                }
            }
            7 => {
                let value = INTERESTING[rng.random_range(0..INTERESTING.len())];
                let width = [1, 2, 4, 8][rng.random_range(0..4)];
                let bytes = value.to_le_bytes();
                if at + width <= len {
                    input[at..at + width].copy_from_slice(&bytes[..width]);
                } else {
                    input.splice(at..at, bytes[..width].iter().copied());
                }
            }
            8 => {
                let other = &pool[rng.random_range(0..pool.len())];
                let from = if other.is_empty() {
                    0
                } else {
                    rng.random_range(0..other.len())
                };
                input.truncate(at);
                input.extend_from_slice(&other[from..]);
            }
            9 => input.truncate(at),
            _ => {
                // A decimal number where digits are: lengths, counts, ports.
                let number = [
                    0u64,
                    1,
                    7,
                    255,
                    65_536,
                    4_294_967_296,
                    9_223_372_036_854_775_807,
                ][rng.random_range(0..7)]
                .to_string();
                input.splice(at..at, number.bytes());
            }
        }
        input.truncate(max_len);
    }
    input
}
