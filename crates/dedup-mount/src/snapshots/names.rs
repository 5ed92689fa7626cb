//! The names snapshots get in the mounted file system: their time in UTC as
//! `2026-11-25T14:00:53Z`, which sorts in time order and reads at a glance, with `-` and the
//! short id after it for snapshots that share a second; and finding a snapshot by id prefix.

use dedup_store::Id;

/// Hex digits of the id added to a time that two snapshots share.
const SUFFIX_DIGITS: usize = 8;
/// The fewest hex digits an id prefix needs to name a snapshot (as the CLI's `SNAPSHOT`).
const MIN_PREFIX: usize = 4;

/// `ns` since the epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn time_name(ns: i64) -> String {
    let secs = ns.div_euclid(1_000_000_000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (year, month, day) = dedup_store::forget::civil(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// One unique name for each snapshot of `snapshots` (id, time in ns), in the same order.
pub fn snapshot_names(snapshots: &[(Id, i64)]) -> Vec<String> {
    let times: Vec<String> = snapshots.iter().map(|(_, ns)| time_name(*ns)).collect();
    let mut count = std::collections::HashMap::<&str, usize>::new();
    for time in &times {
        *count.entry(time).or_default() += 1;
    }
    let mut names: Vec<String> = times
        .iter()
        .zip(snapshots)
        .map(|(time, (id, _))| match count[time.as_str()] {
            1 => time.clone(),
            _ => format!("{time}-{}", id.short(SUFFIX_DIGITS)),
        })
        .collect();
    // Eight digits of two ids alike within one second: the whole id tells them apart.
    let mut seen = std::collections::HashMap::<String, usize>::new();
    for name in &names {
        *seen.entry(name.clone()).or_default() += 1;
    }
    for (name, (id, _)) in names.iter_mut().zip(snapshots) {
        if seen[name.as_str()] > 1 {
            *name = format!("{}-{}", times_prefix(name), id.to_hex());
        }
    }
    names
}

/// The name of a snapshot that comes while mounted, unlike every name `taken`: its time, with
/// the short id (or the whole id) after it when that is taken. Names already shown stay.
pub fn unique_name(ns: i64, id: &Id, taken: &std::collections::HashSet<String>) -> String {
    let time = time_name(ns);
    [time.clone(), format!("{time}-{}", id.short(SUFFIX_DIGITS)), format!("{time}-{}", id.to_hex())]
        .into_iter()
        .find(|name| !taken.contains(name))
        .unwrap_or_else(|| format!("{time}-{}", id.to_hex()))
}

fn times_prefix(name: &str) -> &str {
    name.split_once("Z-").map_or(name, |(time, _)| &name[..time.len() + 1])
}

/// Whether `name` can be an id prefix (at least 4 hex digits).
pub fn is_id_prefix(name: &[u8]) -> bool {
    name.len() >= MIN_PREFIX && name.len() <= 64 && name.iter().all(u8::is_ascii_hexdigit)
}

/// The one snapshot among `ids` whose id starts with `prefix`, if exactly one does.
pub fn find_by_prefix<'a>(prefix: &[u8], ids: impl Iterator<Item = &'a Id>) -> Option<&'a Id> {
    let prefix = String::from_utf8_lossy(prefix).to_ascii_lowercase();
    let mut found = ids.filter(|id| id.to_hex().starts_with(&prefix));
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(first: u8, second: u8) -> Id {
        let mut bytes = [0u8; 32];
        bytes[0] = first;
        bytes[1] = second;
        Id(bytes)
    }

    #[test]
    fn names_are_times_with_the_id_only_where_a_second_is_shared() {
        let second = 1_700_000_000_000_000_000;
        let snapshots = [
            (id(1, 0), second - 1_000_000_000),
            (id(2, 0), second),
            (id(3, 0), second + 500_000_000),
        ];
        assert_eq!(
            snapshot_names(&snapshots),
            [
                "2023-11-14T22:13:19Z",
                "2023-11-14T22:13:20Z-02000000",
                "2023-11-14T22:13:20Z-03000000"
            ]
        );
    }

    #[test]
    fn ids_alike_in_eight_digits_get_the_whole_id() {
        let (a, b) = (id(0xab, 0), id(0xab, 1));
        let mut a_bytes = a.0;
        a_bytes[5] = 9;
        let a = Id(a_bytes);
        let mut b_bytes = b.0;
        b_bytes[1] = 0;
        b_bytes[6] = 9;
        let b = Id(b_bytes);
        let names = snapshot_names(&[(a, 0), (b, 0)]);
        assert_eq!(names[0], format!("1970-01-01T00:00:00Z-{}", a.to_hex()));
        assert_eq!(names[1], format!("1970-01-01T00:00:00Z-{}", b.to_hex()));
    }

    #[test]
    fn a_snapshot_that_comes_later_takes_a_name_not_taken() {
        let mut taken = std::collections::HashSet::new();
        assert_eq!(unique_name(0, &id(5, 0), &taken), "1970-01-01T00:00:00Z");
        taken.insert("1970-01-01T00:00:00Z".to_string());
        assert_eq!(unique_name(0, &id(5, 0), &taken), "1970-01-01T00:00:00Z-05000000");
        taken.insert("1970-01-01T00:00:00Z-05000000".to_string());
        assert_eq!(
            unique_name(0, &id(5, 0), &taken),
            format!("1970-01-01T00:00:00Z-{}", id(5, 0).to_hex())
        );
    }

    #[test]
    fn a_prefix_finds_one_snapshot_or_none() {
        let ids = [id(0xab, 0xcd), id(0xab, 0xce), id(0x12, 0)];
        assert!(is_id_prefix(b"abcd") && is_id_prefix(b"ABCD12") && !is_id_prefix(b"abc"));
        assert!(!is_id_prefix(b"2026-11-25T14:00:53Z"));
        assert_eq!(find_by_prefix(b"abcd", ids.iter()), Some(&ids[0]));
        assert_eq!(find_by_prefix(b"ABCE", ids.iter()), Some(&ids[1]));
        assert_eq!(find_by_prefix(b"abc", ids.iter()), None);
        assert_eq!(find_by_prefix(b"ffff", ids.iter()), None);
    }
}
