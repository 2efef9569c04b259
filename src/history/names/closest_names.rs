//! Suggestions for a name that matched no test: the tests whose names are closest to it by edit
//! distance. Only the tests whose function names share most trigrams with the name are measured,
//! so that a thousand names against ten thousand tests take a moment, not minutes.

use super::Catalogue;
use super::spelling::Spelling;

/// How many names, those sharing most trigrams with a spelling, are measured by edit distance.
const CANDIDATE_NAMES: usize = 64;

/// The trigrams of a name padded with a space at both ends, each once.
pub(super) fn trigrams(name: &str) -> Vec<[char; 3]> {
    let padded: Vec<char> = std::iter::once(' ')
        .chain(name.chars())
        .chain(std::iter::once(' '))
        .collect();
    let mut grams: Vec<[char; 3]> = padded
        .windows(3)
        .map(|window| [window[0], window[1], window[2]])
        .collect();
    if padded.len() < 3 {
        grams.push([padded[0], padded[padded.len() - 1], ' ']);
    }
    grams.sort_unstable();
    grams.dedup();
    grams
}

impl Catalogue {
    /// The tests whose function names share most trigrams with the spelling's: those worth
    /// measuring by edit distance.
    fn candidates(&self, spelling: &Spelling) -> Vec<usize> {
        let Some(last) = spelling.segments.last() else {
            return Vec::new();
        };
        let mut shared = vec![0u32; self.names.len()];
        for gram in trigrams(last) {
            for &name in self.trigrams.get(&gram).map_or(&[][..], Vec::as_slice) {
                shared[name as usize] += 1;
            }
        }
        let mut ranked: Vec<(u32, usize)> = shared
            .into_iter()
            .enumerate()
            .filter(|&(_, count)| count > 0)
            .map(|(name, count)| (count, name))
            .collect();
        ranked.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut tests: Vec<usize> = ranked
            .into_iter()
            .take(CANDIDATE_NAMES)
            .flat_map(|(_, name)| &self.by_name[&self.names[name]])
            .map(|&(test, _)| test)
            .collect();
        tests.sort_unstable();
        tests.dedup();
        tests
    }

    /// Up to `limit` tests whose names are closest to a spelling that matched none, by edit
    /// distance between the spelling and as many trailing segments of each key; only those within
    /// a third of the spelling's length (at least 2 edits), and within one edit of the closest,
    /// count, the closest first. Only the tests whose function names share most trigrams with the
    /// spelling's are measured (see [`Catalogue::candidates`]), so that a thousand names against
    /// ten thousand tests take a moment, not minutes.
    pub fn closest(&self, spelling: &Spelling, limit: usize) -> Vec<usize> {
        let wanted_len = spelling.joined().chars().count();
        let bound = (wanted_len / 3).max(2);
        let mut scored: Vec<(usize, usize)> = Vec::new();
        for test in self.candidates(spelling) {
            let named = &self.tests[test];
            if spelling
                .language
                .is_some_and(|language| language != named.language)
            {
                continue;
            }
            let distance = named
                .keys
                .iter()
                .filter_map(|key| {
                    let shared = key.len().min(spelling.segments.len());
                    let key_tail = key[key.len() - shared..].join(".");
                    let spelling_tail =
                        spelling.segments[spelling.segments.len() - shared..].join(".");
                    // A key shorter than the spelling is compared with the spelling's tail, but
                    // the dropped segments still count against it.
                    let dropped = wanted_len - spelling_tail.chars().count();
                    bounded_edit_distance(&spelling_tail, &key_tail, bound)
                        .map(|distance| distance + dropped.min(1))
                })
                .min();
            if let Some(distance) = distance.filter(|&distance| distance <= bound) {
                scored.push((distance, test));
            }
        }
        scored.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| self.id(a.1).cmp(self.id(b.1))));
        // Only the nearest few: a name one edit from the spelling makes those four edits away noise.
        let nearest = scored.first().map_or(0, |&(distance, _)| distance);
        scored
            .into_iter()
            .take_while(|&(distance, _)| distance <= nearest + 1)
            .take(limit)
            .map(|(_, test)| test)
            .collect()
    }
}

/// Levenshtein distance between `a` and `b` in characters, or `None` when it exceeds `bound`.
/// Gives up as soon as a whole row of the table exceeds the bound, so that comparing one name with
/// every test of a large repository stays cheap.
pub fn bounded_edit_distance(a: &str, b: &str, bound: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > bound {
        return None;
    }
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0; b.len() + 1];
    for (i, &from) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &to) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(from != to);
            current[j + 1] = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
        }
        if current.iter().all(|&distance| distance > bound) {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    Some(previous[b.len()]).filter(|&distance| distance <= bound)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::names::Lookup;
    use crate::history::names::tests::catalogue;

    #[test]
    fn the_closest_names_are_suggested_for_a_renamed_test() {
        let catalogue = catalogue();
        let renamed = Spelling::parse("py/tests/test_cart.py::TestCart::test_add").expect("a name");
        assert_eq!(catalogue.lookup(&renamed), Lookup::Missing);
        assert_eq!(catalogue.closest(&renamed, 3), [3]);
        let unknown = Spelling::parse("com.shop.PaymentTest#charges").expect("a name");
        assert!(catalogue.closest(&unknown, 3).is_empty());
    }

    #[test]
    fn edit_distance_is_bounded() {
        assert_eq!(bounded_edit_distance("kitten", "sitting", 5), Some(3));
        assert_eq!(bounded_edit_distance("kitten", "sitting", 2), None);
        assert_eq!(bounded_edit_distance("", "abc", 3), Some(3));
        assert_eq!(bounded_edit_distance("größe", "grösse", 2), Some(2));
    }
}
