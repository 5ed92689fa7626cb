//! What `forget` says: each group's verdicts with the rules that keep each snapshot, and the
//! `--keep-within` duration read from its text.

use super::{quote, show_time, Line};
use crate::commands::{ForgetDone, ForgetPlan};

/// The plan's snapshot files that could not be read (problems).
pub fn forget_unreadable_lines(plan: &ForgetPlan) -> Vec<Line> {
    plan.unreadable.iter().map(|err| Line::Problem(format!("{err} (left alone)"))).collect()
}

/// The plan's verdicts: each group (host and paths) with how many it keeps, and one line per
/// snapshot: kept (by which rules) or removed.
pub fn forget_verdict_lines(plan: &ForgetPlan) -> Vec<Line> {
    let mut lines = Vec::new();
    for (key, verdicts) in &plan.groups {
        let keep = verdicts.iter().filter(|v| !v.kept_by.is_empty()).count();
        lines.push(Line::Info(format!(
            "host {}, paths {}: keep {keep} of {} snapshot(s)",
            quote(key.host.as_bytes()),
            group_paths(&key.paths),
            verdicts.len()
        )));
        for verdict in verdicts {
            let (what, why) = if verdict.kept_by.is_empty() {
                ("remove", String::new())
            } else {
                ("keep  ", verdict.kept_by.join(", "))
            };
            // An incomplete snapshot is kept only in addition to the complete ones.
            let mark = if verdict.incomplete { " (incomplete)" } else { "" };
            let (id, time) = (verdict.id.short(8), show_time(verdict.time));
            lines.push(Line::Info(format!("  {what}  {id}  {time}  {why}{mark}")));
        }
    }
    lines
}

/// What `forget` removed (or would remove).
pub fn forget_done_line(done: &ForgetDone) -> Line {
    let verb = if done.dry_run { "would remove" } else { "removed" };
    Line::Info(format!("{verb} {} snapshot(s)", done.doomed.len()))
}

/// A group's paths, quoted, on one line.
pub fn group_paths(paths: &[Vec<u8>]) -> String {
    paths.iter().map(|p| quote(p)).collect::<Vec<_>>().join(" ")
}

/// `2y5m7d3h` in nanoseconds (y = 365 days, m = 30 days, w = 7 days); the error says what is
/// wrong with the text.
pub fn parse_keep_within(text: &str) -> Result<i64, String> {
    let mut total: i64 = 0;
    let mut number = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let hours: i64 = match c {
            'y' => 365 * 24,
            'm' => 30 * 24,
            'w' => 7 * 24,
            'd' => 24,
            'h' => 1,
            _ => return Err(format!("unknown unit {c:?} (use y, m, w, d, h)")),
        };
        let n: i64 = number.parse().map_err(|_| format!("a number must precede {c:?}"))?;
        number.clear();
        total = n
            .checked_mul(hours * 3600 * 1_000_000_000)
            .and_then(|ns| total.checked_add(ns))
            .ok_or("too long")?;
    }
    if !number.is_empty() || total == 0 {
        return Err("give a duration such as 7d or 1y6m".into());
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_add_their_units() {
        let hour = 3600 * 1_000_000_000i64;
        assert_eq!(parse_keep_within("3h").unwrap(), 3 * hour);
        assert_eq!(parse_keep_within("1y2m1w1d").unwrap(), (365 + 60 + 7 + 1) * 24 * hour);
        for bad in ["", "7", "d", "3x", "0d", "99999999999y"] {
            assert!(parse_keep_within(bad).is_err(), "{bad}");
        }
    }
}
