//! Times as a person types them for `find --oldest/--newest`: a UTC date, with a clock time or
//! without, read as ns since the epoch.

use crate::error::{Error, Result};

/// Days since the epoch of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD[ HH:MM[:SS]]` (or with a `T`) in UTC as ns since the epoch; with `end`, the last
/// nanosecond of what it names (a date alone: its last second).
pub fn parse_time(text: &str, end: bool) -> Result<i64> {
    let bad =
        || Error::Invalid(format!("{text:?}: not a time; give YYYY-MM-DD[ HH:MM[:SS]] (UTC)"));
    let (date, clock) = match text.trim().split_once([' ', 'T']) {
        Some((date, clock)) => (date, Some(clock)),
        None => (text.trim(), None),
    };
    let numbers = |s: &str, sep: char| -> Option<Vec<i64>> {
        s.split(sep).map(|n| n.parse::<i64>().ok()).collect()
    };
    let [year, month, day] = numbers(date, '-').ok_or_else(bad)?[..] else { return Err(bad()) };
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return Err(bad());
    }
    let (clock, span) = match clock.map(|c| numbers(c, ':')) {
        None => ([0, 0, 0], 86_400),
        Some(Some(parts)) if parts.len() == 2 => ([parts[0], parts[1], 0], 60),
        Some(Some(parts)) if parts.len() == 3 => ([parts[0], parts[1], parts[2]], 1),
        _ => return Err(bad()),
    };
    if clock[0] > 23 || clock[1] > 59 || clock[2] > 60 || clock.iter().any(|&n| n < 0) {
        return Err(bad());
    }
    // A year far outside what a snapshot can hold is refused, not wrapped around.
    if !(-1_000_000..=1_000_000).contains(&year) {
        return Err(bad());
    }
    let secs = days_from_civil(year, month, day) * 86_400
        + clock[0] * 3600
        + clock[1] * 60
        + clock[2]
        + if end { span } else { 0 };
    let ns = secs.checked_mul(1_000_000_000).ok_or_else(bad)?;
    Ok(if end { ns - 1 } else { ns })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_as_utc_and_an_end_covers_what_it_names() {
        assert_eq!(parse_time("1970-01-01", false).unwrap(), 0);
        assert_eq!(parse_time("1970-01-01", true).unwrap(), 86_400_000_000_000 - 1);
        assert_eq!(parse_time("2000-02-29 00:00", false).unwrap(), 951_782_400_000_000_000);
        assert_eq!(parse_time("2023-11-14T22:13:20", false).unwrap(), 1_700_000_000_000_000_000);
        assert_eq!(parse_time("2023-11-14 22:13", true).unwrap(), 1_700_000_039_999_999_999);
        for bad in ["", "2023", "2023-13-01", "2023-01-01 25:00", "2023-01-01 1:2:3:4", "x-y-z"] {
            assert!(parse_time(bad, false).is_err(), "{bad}");
        }
        for bad in ["99999999999999-01-01", "-99999999999999-01-01", "300000-01-01"] {
            assert!(parse_time(bad, false).is_err(), "{bad}");
        }
    }
}
