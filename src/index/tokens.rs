//! Finding a token's vocabulary id: a hash table over the stored vocabulary, built when an index
//! first embeds a test, so that embedding does not binary-search the vocabulary's text.

use std::hash::Hasher;

use rustc_hash::FxHasher;

/// What an empty slot holds; no vocabulary has that many tokens.
const EMPTY: u32 = u32::MAX;

/// Vocabulary ids, each in the slot its token's hash names or the first empty one after it
/// (open addressing, linear probing), in a table twice as large as the vocabulary.
#[derive(Debug, Clone, Default)]
pub struct TokenTable {
    slots: Vec<u32>,
}

fn hash(text: &[u8]) -> usize {
    let mut hasher = FxHasher::default();
    hasher.write(text);
    hasher.finish() as usize
}

impl TokenTable {
    /// The table of a vocabulary of `len` tokens, `text(id)` being a token's bytes.
    pub fn new<'a>(len: usize, text: impl Fn(u32) -> &'a [u8]) -> TokenTable {
        let len = len.min(EMPTY as usize);
        let mut slots = vec![EMPTY; len.saturating_mul(2).next_power_of_two()];
        let mask = slots.len() - 1;
        for id in 0..len as u32 {
            let mut at = hash(text(id)) & mask;
            while slots[at] != EMPTY {
                at = (at + 1) & mask;
            }
            slots[at] = id;
        }
        TokenTable { slots }
    }

    /// The id of the token `token`, comparing it with the text of the ids its hash leads to.
    /// A vocabulary holds each token once, as every writer makes it; were one to appear twice
    /// (a crafted file), the lower id is found.
    pub fn find<'a>(&self, token: &[u8], text: impl Fn(u32) -> &'a [u8]) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = hash(token) & mask;
        loop {
            match self.slots[at] {
                EMPTY => return None,
                id if text(id) == token => return Some(id),
                _ => at = (at + 1) & mask,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_token_is_found_and_no_other() {
        let vocabulary: Vec<String> = (0..1000).map(|number| format!("token{number}")).collect();
        let text = |id: u32| vocabulary[id as usize].as_bytes();
        let table = TokenTable::new(vocabulary.len(), text);
        for (id, token) in vocabulary.iter().enumerate() {
            assert_eq!(table.find(token.as_bytes(), text), Some(id as u32));
        }
        assert_eq!(table.find(b"token1000", text), None);
        assert_eq!(table.find(b"", text), None);
        let empty = TokenTable::new(0, text);
        assert_eq!(empty.find(b"token1", text), None);
    }
}
