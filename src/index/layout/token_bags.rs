//! Token bags as format 3 stores them: per entry, LEB128 pairs of a token id's difference from
//! the previous one and its count.

/// Appends `value` as LEB128.
pub fn write_varint(out: &mut Vec<u8>, mut value: u32) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a LEB128 number at `*at`, advancing it; `None` at the end or past 32 bits.
pub fn read_varint(bytes: &[u8], at: &mut usize) -> Option<u32> {
    let mut value: u64 = 0;
    for shift in (0..35).step_by(7) {
        let byte = *bytes.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return u32::try_from(value).ok();
        }
    }
    None
}

/// A bag as it is stored: the token ids' differences and the counts, as LEB128.
pub fn encode_bag(bag: &[(u32, u32)], out: &mut Vec<u8>) {
    let mut previous = 0;
    for &(id, count) in bag {
        write_varint(out, id - previous);
        write_varint(out, count);
        previous = id;
    }
}

/// Decodes a stored bag; a malformed or out-of-vocabulary remainder is dropped, never trusted.
pub fn decode_bag(bytes: &[u8], vocabulary: usize) -> Vec<(u32, u32)> {
    let mut bag = Vec::with_capacity(bytes.len() / 2);
    let mut at = 0;
    let mut id: u32 = 0;
    while at < bytes.len() {
        let (Some(delta), Some(count)) = (read_varint(bytes, &mut at), read_varint(bytes, &mut at))
        else {
            break;
        };
        if !bag.is_empty() && delta == 0 {
            break;
        }
        match id.checked_add(delta) {
            Some(next) if (next as usize) < vocabulary => id = next,
            _ => break,
        }
        bag.push((id, count));
    }
    bag
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_and_bags_round_trip() {
        let bag = vec![(0, 1), (3, 200), (70_000, 5), (u32::MAX - 1, u32::MAX)];
        let mut bytes = Vec::new();
        encode_bag(&bag, &mut bytes);
        assert_eq!(decode_bag(&bytes, u32::MAX as usize), bag);
        // A token outside the vocabulary ends the bag; so does a truncated number.
        assert_eq!(decode_bag(&bytes, 70_000), &bag[..2]);
        assert_eq!(
            decode_bag(&bytes[..bytes.len() - 1], u32::MAX as usize),
            &bag[..3]
        );
    }
}
