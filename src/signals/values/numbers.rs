//! Numbers and units: integer and float literals of every language, and the milliseconds a unit
//! stands for.

/// Milliseconds per unit named by a Java `TimeUnit` or `ChronoUnit` constant (or a Python or
/// Rust spelling of one): `TimeUnit.SECONDS`, `MILLISECONDS`, `ChronoUnit.MINUTES`.
pub(crate) fn unit_ms(name: &str) -> Option<f64> {
    let name = name.rsplit(['.', ':']).next()?.to_ascii_uppercase();
    let units = [
        ("NANO", 1e-6),
        ("MICRO", 1e-3),
        ("MILLI", 1.0),
        ("SECOND", 1000.0),
        ("MINUTE", 60_000.0),
        ("HOUR", 3_600_000.0),
        ("DAY", 86_400_000.0),
    ];
    units
        .iter()
        .find(|(stem, _)| name.starts_with(stem))
        .map(|(_, ms)| *ms)
}

/// Milliseconds per unit of a catalogue entry's `unit` setting.
pub(crate) fn default_unit_ms(unit: &str) -> Option<f64> {
    match unit {
        "ns" => Some(1e-6),
        "us" => Some(1e-3),
        "ms" => Some(1.0),
        "s" => Some(1000.0),
        "min" => Some(60_000.0),
        _ => None,
    }
}

pub(super) fn parse_integer(literal: &str) -> Option<f64> {
    let cleaned: String = literal.chars().filter(|c| *c != '_').collect();
    let lower = cleaned.to_ascii_lowercase();
    // Java's `L`, Rust's `u64`, `i32`, `usize`.
    let digits = strip_rust_suffix(lower.trim_end_matches('l'));
    let (radix, body) = if let Some(hex) = digits.strip_prefix("0x") {
        (16, hex)
    } else if let Some(binary) = digits.strip_prefix("0b") {
        (2, binary)
    } else if let Some(octal) = digits.strip_prefix("0o") {
        (8, octal)
    } else {
        (10, digits)
    };
    u64::from_str_radix(body, radix)
        .ok()
        .map(|value| value as f64)
}

fn strip_rust_suffix(literal: &str) -> &str {
    for suffix in [
        "usize", "isize", "u128", "i128", "u64", "i64", "u32", "i32", "u16", "i16", "u8", "i8",
    ] {
        if let Some(stripped) = literal.strip_suffix(suffix) {
            return stripped;
        }
    }
    literal
}

pub(super) fn parse_float(literal: &str) -> Option<f64> {
    let cleaned: String = literal.chars().filter(|c| *c != '_').collect();
    let trimmed = cleaned
        .trim_end_matches("f64")
        .trim_end_matches("f32")
        .trim_end_matches(['f', 'F', 'd', 'D']);
    trimmed.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_floats_of_every_language_parse() {
        assert_eq!(parse_integer("1_000L"), Some(1000.0));
        assert_eq!(parse_integer("0x10"), Some(16.0));
        assert_eq!(parse_integer("250u64"), Some(250.0));
        assert_eq!(parse_integer("0b101"), Some(5.0));
        assert_eq!(parse_float("0.5f"), Some(0.5));
        assert_eq!(parse_float("1e3"), Some(1000.0));
        assert_eq!(parse_float("2.5f64"), Some(2.5));
    }

    #[test]
    fn units_are_read_from_their_names() {
        assert_eq!(unit_ms("TimeUnit.MILLISECONDS"), Some(1.0));
        assert_eq!(unit_ms("SECONDS"), Some(1000.0));
        assert_eq!(unit_ms("ChronoUnit.MINUTES"), Some(60_000.0));
        assert_eq!(unit_ms("TimeUnit.FOO"), None);
    }
}
