//! What `forget` says: each group's verdicts with the rules that keep each snapshot, and the
//! `--keep-within` duration read from its text.

use super::{quote, show_time, Line};
use crate::commands::ForgetPlan;
use crate::forget::KeepPolicy;

/// Why `forget` refuses to remove anything, if it does: both ways of choosing at once (`named`:
/// snapshots named; `policy`: the --keep-* options), or a policy that would keep no snapshot
/// without `remove_all` (--unsafe-allow-remove-all).
pub fn forget_refusal(policy: &KeepPolicy, named: bool, remove_all: bool) -> Option<&'static str> {
    if named {
        return (!policy.is_empty() || remove_all)
            .then_some("give either SNAPSHOTs or --keep-* options, not both");
    }
    if !policy.keeps_nothing() || remove_all {
        return None;
    }
    Some(if policy.is_empty() {
        "no snapshot and no --keep-* option given: nothing would be kept, so nothing is removed \
         (--unsafe-allow-remove-all removes every snapshot)"
    } else {
        "this policy keeps no snapshot (every --keep-* count is 0), so nothing is removed \
         (--unsafe-allow-remove-all removes every snapshot)"
    })
}

/// Why a plan must not be carried out without --unsafe-allow-remove-all, if it must not: a
/// group of which it keeps no snapshot (only --keep-tag alone can do that: any count or
/// --keep-within keeps a group's newest).
pub fn forget_plan_refusal(plan: &ForgetPlan) -> Option<String> {
    let (key, verdicts) = plan.group_left_empty()?;
    Some(format!(
        "host {}, paths {}: the policy keeps none of its {} snapshot(s), so nothing is removed \
         (--unsafe-allow-remove-all removes them all)",
        quote(key.host.as_bytes()),
        group_paths(&key.paths),
        verdicts.len()
    ))
}

/// The plan's lines: snapshot files that could not be read (problems), then each group (host
/// and paths) with how many it keeps, and one line per snapshot: kept (by which rules) or
/// removed.
pub fn forget_lines(plan: &ForgetPlan) -> Vec<Line> {
    let mut lines: Vec<Line> =
        plan.unreadable.iter().map(|err| Line::Problem(format!("{err} (left alone)"))).collect();
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
    fn forget_refuses_to_choose_twice_or_to_keep_nothing() {
        let none = KeepPolicy::default();
        let last = KeepPolicy { last: Some(1), ..KeepPolicy::default() };
        let zero = KeepPolicy { last: Some(0), ..KeepPolicy::default() };
        assert!(forget_refusal(&none, true, false).is_none());
        assert!(forget_refusal(&last, true, false).unwrap().contains("not both"));
        assert!(forget_refusal(&none, true, true).unwrap().contains("not both"));
        assert!(forget_refusal(&none, false, false).unwrap().starts_with("no snapshot"));
        assert!(forget_refusal(&zero, false, false).unwrap().contains("keeps no snapshot"));
        assert!(forget_refusal(&zero, false, true).is_none());
        assert!(forget_refusal(&last, false, false).is_none());
    }

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
