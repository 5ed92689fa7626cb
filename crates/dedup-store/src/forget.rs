//! `forget`'s retention policy, in restic's terms: snapshots are grouped by host and paths, and in
//! each group, newest first, a snapshot is kept by `last` while any remain, by a time-bucket rule
//! (hourly … yearly) when it is the newest of a bucket not yet kept and that rule has a count
//! left, by `within` when it is younger than the newest snapshot of its group by less than the
//! duration, and by `tags` when it carries one. Buckets are calendar units in UTC.
//!
//! Incomplete snapshots (some entries could not be read) never take a place a complete one could
//! have: the rules are applied to a group's complete snapshots alone, and each incomplete one is
//! kept only in addition, when the rules applied to the whole group keep it. A run of failed
//! nights therefore never pushes the last good snapshots out.

use std::collections::BTreeMap;

use crate::format::Snapshot;
use crate::id::Id;

const NS_PER_SEC: i64 = 1_000_000_000;

/// What to keep. Counts of `None` do not apply.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeepPolicy {
    /// The newest N.
    pub last: Option<u32>,
    /// The newest of each of the last N hours that have one.
    pub hourly: Option<u32>,
    /// … days.
    pub daily: Option<u32>,
    /// … ISO weeks (Monday to Sunday).
    pub weekly: Option<u32>,
    /// … months.
    pub monthly: Option<u32>,
    /// … years.
    pub yearly: Option<u32>,
    /// Every snapshot less than this many nanoseconds older than its group's newest.
    pub within_ns: Option<i64>,
    /// Every snapshot with any of these tags.
    pub tags: Vec<String>,
}

impl KeepPolicy {
    /// Whether no rule is given (forget would remove everything; callers refuse that).
    pub fn is_empty(&self) -> bool {
        self == &KeepPolicy::default()
    }

    /// Whether no rule can keep any snapshot (`--keep-last 0` and the like, or none at all):
    /// forget would remove every one, which callers refuse unless told to.
    pub fn keeps_nothing(&self) -> bool {
        let counts = [self.last, self.hourly, self.daily, self.weekly, self.monthly, self.yearly];
        counts.iter().all(|n| n.unwrap_or(0) == 0)
            && self.within_ns.is_none()
            && self.tags.is_empty()
    }
}

/// A group of snapshots: the same host and the same set of paths.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GroupKey {
    /// The host.
    pub host: String,
    /// The paths, sorted.
    pub paths: Vec<Vec<u8>>,
}

/// The verdict on one snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The snapshot.
    pub id: Id,
    /// Its time.
    pub time: i64,
    /// Whether it is incomplete (kept only in addition to the complete ones).
    pub incomplete: bool,
    /// The rules that keep it (`last`, `daily`, `within`, `tag`…); empty: it is removed.
    pub kept_by: Vec<&'static str>,
}

/// Groups `snapshots` by host and paths, each group newest first.
pub fn groups(snapshots: &[(Id, Snapshot)]) -> BTreeMap<GroupKey, Vec<(Id, &Snapshot)>> {
    let mut out: BTreeMap<GroupKey, Vec<(Id, &Snapshot)>> = BTreeMap::new();
    for (id, snapshot) in snapshots {
        let mut paths = snapshot.paths.clone();
        paths.sort();
        out.entry(GroupKey { host: snapshot.host.clone(), paths })
            .or_default()
            .push((*id, snapshot));
    }
    for group in out.values_mut() {
        group.sort_by(|a, b| b.1.time.cmp(&a.1.time).then(b.0.cmp(&a.0)));
    }
    out
}

/// The verdicts on one group, given newest first: a complete snapshot by the rules applied to the
/// complete ones alone, an incomplete one by the rules applied to the whole group.
pub fn apply(policy: &KeepPolicy, group: &[(Id, &Snapshot)]) -> Vec<Verdict> {
    let complete: Vec<(Id, &Snapshot)> =
        group.iter().filter(|(_, s)| !s.incomplete).copied().collect();
    let mut among_complete = apply_rules(policy, &complete).into_iter();
    let among_all = apply_rules(policy, group);
    group
        .iter()
        .zip(among_all)
        .map(|((_, snapshot), all)| {
            if snapshot.incomplete {
                all
            } else {
                among_complete.next().expect("one verdict per complete snapshot")
            }
        })
        .collect()
}

/// The verdicts of the rules on `group`, newest first, as restic applies them.
fn apply_rules(policy: &KeepPolicy, group: &[(Id, &Snapshot)]) -> Vec<Verdict> {
    type Bucket = fn(i64) -> i64;
    let buckets: [(&'static str, Option<u32>, Bucket); 5] = [
        ("hourly", policy.hourly, |t| t.div_euclid(3600 * NS_PER_SEC)),
        ("daily", policy.daily, day),
        ("weekly", policy.weekly, |t| (day(t) + 3).div_euclid(7)),
        ("monthly", policy.monthly, |t| {
            let (y, m, _) = civil(day(t));
            y * 12 + i64::from(m)
        }),
        ("yearly", policy.yearly, |t| civil(day(t)).0),
    ];
    let mut left: Vec<Option<u32>> = buckets.iter().map(|b| b.1).collect();
    let mut last_bucket: Vec<Option<i64>> = vec![None; buckets.len()];
    let mut last_left = policy.last;
    let newest = group.first().map(|(_, s)| s.time);
    group
        .iter()
        .map(|(id, snapshot)| {
            let mut kept_by = Vec::new();
            if let Some(n) = last_left.as_mut().filter(|n| **n > 0) {
                *n -= 1;
                kept_by.push("last");
            }
            for (i, (name, _, bucket)) in buckets.iter().enumerate() {
                let Some(n) = left[i].as_mut().filter(|n| **n > 0) else { continue };
                let b = bucket(snapshot.time);
                if last_bucket[i] != Some(b) {
                    last_bucket[i] = Some(b);
                    *n -= 1;
                    kept_by.push(*name);
                }
            }
            if let (Some(within), Some(newest)) = (policy.within_ns, newest) {
                if newest.saturating_sub(snapshot.time) < within {
                    kept_by.push("within");
                }
            }
            if snapshot.tags.iter().any(|t| policy.tags.contains(t)) {
                kept_by.push("tag");
            }
            Verdict { id: *id, time: snapshot.time, incomplete: snapshot.incomplete, kept_by }
        })
        .collect()
}

/// Days since 1970-01-01 (UTC) of a time in ns.
fn day(t: i64) -> i64 {
    t.div_euclid(86_400 * NS_PER_SEC)
}

/// Year, month (1-12) and day of days since 1970-01-01, proleptic Gregorian (the algorithm of
/// Howard Hinnant's `civil_from_days`).
pub fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3600 * NS_PER_SEC;
    const DAY: i64 = 24 * HOUR;

    /// 2026-01-05 00:00 UTC, a Monday.
    const MONDAY: i64 = 1_767_571_200 * NS_PER_SEC;

    fn snapshots(times: &[i64]) -> Vec<(Id, Snapshot)> {
        times
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let snapshot = Snapshot {
                    time: *t,
                    host: "h".into(),
                    paths: vec![b"/p".to_vec()],
                    ..Snapshot::default()
                };
                (Id([i as u8; 32]), snapshot)
            })
            .collect()
    }

    fn kept(policy: &KeepPolicy, times: &[i64]) -> Vec<i64> {
        let all = snapshots(times);
        let groups = groups(&all);
        let group = groups.values().next().unwrap();
        apply(policy, group).into_iter().filter(|v| !v.kept_by.is_empty()).map(|v| v.time).collect()
    }

    #[test]
    fn civil_dates_are_right() {
        assert_eq!(civil(0), (1970, 1, 1));
        assert_eq!(civil(day(MONDAY)), (2026, 1, 5));
        assert_eq!(civil(day(MONDAY) - 5), (2025, 12, 31));
        assert_eq!(civil(11_016), (2000, 2, 29));
    }

    #[test]
    fn last_keeps_the_newest_n() {
        let policy = KeepPolicy { last: Some(2), ..KeepPolicy::default() };
        assert_eq!(kept(&policy, &[1, 5, 3, 4]), [5, 4]);
    }

    #[test]
    fn daily_keeps_the_newest_of_each_of_the_last_n_days_that_have_one() {
        let policy = KeepPolicy { daily: Some(2), ..KeepPolicy::default() };
        let times = [MONDAY + HOUR, MONDAY + 2 * HOUR, MONDAY + DAY + HOUR, MONDAY + 3 * DAY];
        assert_eq!(kept(&policy, &times), [MONDAY + 3 * DAY, MONDAY + DAY + HOUR]);
    }

    #[test]
    fn weeks_start_on_monday_and_months_and_years_follow_the_calendar() {
        let weekly = KeepPolicy { weekly: Some(5), ..KeepPolicy::default() };
        // Sunday night and Monday morning are different weeks; Monday and Wednesday are one.
        let times = [MONDAY - HOUR, MONDAY + HOUR, MONDAY + 2 * DAY];
        assert_eq!(kept(&weekly, &times), [MONDAY + 2 * DAY, MONDAY - HOUR]);
        let monthly = KeepPolicy { monthly: Some(5), ..KeepPolicy::default() };
        // 2025-12-31 23:00 and 2026-01-05: two months, two years.
        assert_eq!(kept(&monthly, &[MONDAY - 5 * DAY + 23 * HOUR, MONDAY]).len(), 2);
        let yearly = KeepPolicy { yearly: Some(1), ..KeepPolicy::default() };
        assert_eq!(kept(&yearly, &[MONDAY - 5 * DAY + 23 * HOUR, MONDAY]), [MONDAY]);
    }

    #[test]
    fn within_counts_from_the_newest_snapshot_and_tags_keep_regardless() {
        let policy = KeepPolicy { within_ns: Some(2 * DAY), ..KeepPolicy::default() };
        assert_eq!(kept(&policy, &[0, 10 * DAY, 11 * DAY, 12 * DAY]), [12 * DAY, 11 * DAY]);
        let mut all = snapshots(&[1, 2, 3]);
        all[0].1.tags = vec!["keep".into()];
        let policy =
            KeepPolicy { last: Some(1), tags: vec!["keep".into()], ..KeepPolicy::default() };
        let groups = groups(&all);
        let verdicts = apply(&policy, groups.values().next().unwrap());
        let reasons: Vec<_> = verdicts.iter().map(|v| (v.time, v.kept_by.clone())).collect();
        assert_eq!(reasons, [(3, vec!["last"]), (2, vec![]), (1, vec!["tag"])]);
    }

    #[test]
    fn incomplete_snapshots_never_displace_complete_ones() {
        let kept_of = |policy: &KeepPolicy, times: &[i64], incomplete: &[usize]| {
            let mut all = snapshots(times);
            for &i in incomplete {
                all[i].1.incomplete = true;
            }
            let grouped = groups(&all);
            let verdicts = apply(policy, grouped.values().next().unwrap());
            verdicts
                .iter()
                .filter(|v| !v.kept_by.is_empty())
                .map(|v| (v.time, v.incomplete))
                .collect::<Vec<_>>()
        };
        // One good night, then two that found the disk unreadable: keep-last 2 keeps the good
        // one, and the bad ones only in addition.
        let last2 = KeepPolicy { last: Some(2), ..KeepPolicy::default() };
        assert_eq!(
            kept_of(&last2, &[DAY, 2 * DAY, 3 * DAY], &[1, 2]),
            [(3 * DAY, true), (2 * DAY, true), (DAY, false)]
        );
        // Older complete snapshots beyond the rule's count still go.
        let last1 = KeepPolicy { last: Some(1), ..KeepPolicy::default() };
        assert_eq!(
            kept_of(&last1, &[DAY, 2 * DAY, 3 * DAY, 4 * DAY], &[3]),
            [(4 * DAY, true), (3 * DAY, false)]
        );
        // Daily slots: an incomplete snapshot of a day does not take that day's slot.
        let daily = KeepPolicy { daily: Some(1), ..KeepPolicy::default() };
        assert_eq!(kept_of(&daily, &[MONDAY + HOUR, MONDAY + 2 * HOUR], &[1]).len(), 2);
    }

    #[test]
    fn a_policy_of_zero_counts_keeps_nothing() {
        assert!(KeepPolicy::default().keeps_nothing());
        assert!(
            KeepPolicy { last: Some(0), daily: Some(0), ..KeepPolicy::default() }.keeps_nothing()
        );
        assert!(!KeepPolicy { last: Some(1), ..KeepPolicy::default() }.keeps_nothing());
        assert!(!KeepPolicy { tags: vec!["t".into()], ..KeepPolicy::default() }.keeps_nothing());
        assert!(!KeepPolicy { within_ns: Some(1), ..KeepPolicy::default() }.keeps_nothing());
    }

    #[test]
    fn groups_part_hosts_and_path_sets_whatever_the_order_of_paths() {
        let mut all = snapshots(&[1, 2, 3]);
        all[1].1.host = "other".into();
        all[2].1.paths = vec![b"/q".to_vec(), b"/p".to_vec()];
        all[0].1.paths = vec![b"/p".to_vec(), b"/q".to_vec()];
        let groups = groups(&all);
        assert_eq!(groups.len(), 2);
        assert!(groups.values().any(|g| g.len() == 2));
    }
}
