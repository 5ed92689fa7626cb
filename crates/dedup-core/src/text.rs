//! Words and numbers as dedup shows them to people: a path kept on one line whatever bytes it
//! holds, byte sizes in binary units ("1.46 KiB") and counts with thousands separators
//! ("2,048 files"). Libraries build their lines with these so that every command, and every
//! crate that formats a line for the binary to print, spells a path or a size the same way.

use std::fmt::{self, Write as _};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A path as it can be shown on one line: printable UTF-8 as it is, anything else in quotes
/// with escapes (`\n`, `\xff`), so names with newlines or odd bytes cannot forge extra lines.
pub fn quote_path(path: &Path) -> String {
    let bytes = path.as_os_str().as_bytes();
    match std::str::from_utf8(bytes) {
        Ok(text) if !text.chars().any(|c| c.is_control() || c == '"') => text.to_owned(),
        _ => {
            let mut out = String::from("\"");
            for chunk in bytes.utf8_chunks() {
                for c in chunk.valid().chars() {
                    match c {
                        '"' => out.push_str("\\\""),
                        '\\' => out.push_str("\\\\"),
                        c if c.is_control() => out.extend(c.escape_default()),
                        c => out.push(c),
                    }
                }
                for b in chunk.invalid() {
                    let _ = write!(out, "\\x{b:02x}");
                }
            }
            out.push('"');
            out
        }
    }
}

/// A number of bytes in binary units with two decimals ("15 B", "1.46 KiB", "1.43 MiB"), the
/// way the progress display (indicatif's `HumanBytes`) shows them, so summaries and progress
/// agree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes(pub u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const PREFIXES: [&str; 8] = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"];
        // Divided as a float, step by step, so that the rounding at each unit's edge ("1024.00
        // KiB" just below a mebibyte) is the progress display's too.
        let mut amount = self.0 as f64;
        let mut prefix = 0;
        while amount >= 1024.0 && prefix < PREFIXES.len() {
            amount /= 1024.0;
            prefix += 1;
        }
        match prefix {
            0 => write!(f, "{amount:.0} B"),
            n => write!(f, "{amount:.2} {}B", PREFIXES[n - 1]),
        }
    }
}

/// A count with a comma between each group of three digits: "7,654", "1,234,567".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count(pub u64);

impl fmt::Display for Count {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = self.0.to_string();
        for (i, c) in digits.chars().enumerate() {
            let left = digits.len() - i - 1;
            f.write_char(c)?;
            if left > 0 && left.is_multiple_of(3) {
                f.write_char(',')?;
            }
        }
        Ok(())
    }
}

/// `n` and the noun that fits it: "1 file", "2,048 files".
pub fn count(n: u64, one: &str, many: &str) -> String {
    format!("{} {}", Count(n), if n == 1 { one } else { many })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn q(bytes: &[u8]) -> String {
        quote_path(Path::new(OsStr::from_bytes(bytes)))
    }

    #[test]
    fn plain_paths_are_shown_as_they_are() {
        assert_eq!(q(b"photos/2024 summer/a.jpg"), "photos/2024 summer/a.jpg");
        assert_eq!(q("é`*".as_bytes()), "é`*");
    }

    #[test]
    fn odd_bytes_are_escaped_on_one_line() {
        assert_eq!(q(b"a\nb"), "\"a\\nb\"");
        assert_eq!(q(b"x\xffy"), "\"x\\xffy\"");
        assert_eq!(q(b"say \"hi\""), "\"say \\\"hi\\\"\"");
    }

    #[test]
    fn bytes_read_in_binary_units_with_two_decimals() {
        let cases: [(u64, &str); 12] = [
            (0, "0 B"),
            (15, "15 B"),
            (1023, "1023 B"),
            (1024, "1.00 KiB"),
            (1536, "1.50 KiB"),
            (1_500, "1.46 KiB"),
            (1_048_575, "1024.00 KiB"),
            (1_500_000, "1.43 MiB"),
            (1_500_000_000, "1.40 GiB"),
            (1_500_000_000_000, "1.36 TiB"),
            (1_500_000_000_000_000, "1.33 PiB"),
            (u64::MAX, "16.00 EiB"),
        ];
        for (n, shown) in cases {
            assert_eq!(Bytes(n).to_string(), shown, "{n}");
        }
    }

    #[test]
    fn counts_group_digits_in_threes() {
        assert_eq!(Count(0).to_string(), "0");
        assert_eq!(Count(999).to_string(), "999");
        assert_eq!(Count(7654).to_string(), "7,654");
        assert_eq!(Count(123_456).to_string(), "123,456");
        assert_eq!(Count(1_234_567_890).to_string(), "1,234,567,890");
        assert_eq!(count(1, "file", "files"), "1 file");
        assert_eq!(count(2048, "file", "files"), "2,048 files");
        assert_eq!(count(0, "file", "files"), "0 files");
    }
}
