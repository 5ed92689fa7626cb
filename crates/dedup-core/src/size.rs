//! Sizes as users write them: `4096`, `64K`, `1.5M`, `2GiB`, `10 MB` (powers of 1024), for every
//! job's options (find's `--min-size`, the store's pack sizes) and the tuning variables.

/// Parse a size with an optional K/M/G/T suffix (case-insensitive, `B`/`iB` allowed).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim().to_ascii_lowercase();
    let shift = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(format!("unknown unit {unit:?} in size {text:?} (use K, M, G or T)")),
    };
    let bad = || format!("invalid size {text:?} (expected e.g. 4096, 64K, 1.5M, 2G)");
    if number.is_empty() {
        return Err(bad());
    }
    if let Ok(whole) = number.parse::<u64>() {
        return whole
            .checked_mul(1u64 << shift)
            .ok_or_else(|| format!("size {text:?} is too large"));
    }
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bytes = value * (1u64 << shift) as f64;
    if bytes >= u64::MAX as f64 {
        return Err(format!("size {text:?} is too large"));
    }
    Ok(bytes.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn suffixes_are_powers_of_1024() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("64k"), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("10 MB"), Ok(10 << 20));
        assert_eq!(parse_size("1T"), Ok(1 << 40));
        assert_eq!(parse_size("1.5K"), Ok(1536));
    }

    #[test]
    fn nonsense_is_refused_with_the_input_named() {
        for bad in ["", "K", "12Q", "-1", "1..2M", "abc"] {
            let err = parse_size(bad).unwrap_err();
            assert!(err.contains(bad), "{err}");
        }
        assert!(parse_size("99999999999T").is_err());
    }
}
