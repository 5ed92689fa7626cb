//! The cache's behaviour through its public calls: open, look up, update, save, damage.

use std::os::unix::fs::MetadataExt;

use super::*;

fn meta(ino: u64, size: u64) -> FileMeta {
    FileMeta { id: FileId { dev: 1, ino }, size, mtime_ns: 5, ctime_ns: 6 }
}

/// An entry with a full digest made of `n`.
fn full(n: u8) -> Entry {
    let fingerprint = Fingerprint { kind: FingerprintKind::Whole, value: u64::from(n) };
    Entry { fingerprint: Some(fingerprint), digest: Some([n; 32]) }
}

/// An update that learned these files.
fn learned(files: &[(FileMeta, Entry, &[u8])]) -> Update {
    let (mut learned, mut names) = (Vec::new(), Vec::new());
    for &(meta, entry, name) in files {
        let start = names.len();
        names.extend_from_slice(name);
        learned.push((meta, entry, (start, names.len())));
    }
    let mut update = Update::default();
    update.learn_many(learned, names);
    update
}

fn open(dir: &Path) -> Cache {
    match Cache::open(dir).unwrap() {
        Opened::Ready { cache, damaged: None } => cache,
        other => panic!("{other:?}"),
    }
}

#[test]
fn looking_many_up_at_once_answers_each_as_one_lookup_would() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = open(dir.path());
    let known: Vec<_> = (0..50).map(|i| (meta(i * 3, 10), full(i as u8), &b"x"[..])).collect();
    cache.save(learned(&known)).unwrap();
    // Asked out of key order, some twice, some stale, some unknown (before, between and
    // after the keys the cache holds).
    let asked: Vec<FileMeta> = (0..160u64)
        .rev()
        .map(|i| (i * 7) % 160)
        .chain([9, 9, 0, 1000])
        .map(|i| meta(i, if i % 6 == 0 { 10 } else { 11 }))
        .collect();
    let one_by_one: Vec<Lookup> = asked.iter().map(|m| cache.lookup(m)).collect();
    assert_eq!(cache.lookup_all(&asked), one_by_one);
    let kinds = |want: fn(&Lookup) -> bool| one_by_one.iter().filter(|l| want(l)).count();
    assert!(kinds(|l| matches!(l, Lookup::Valid(_))) > 10);
    assert!(kinds(|l| matches!(l, Lookup::Stale)) > 10);
    assert!(kinds(|l| matches!(l, Lookup::Missing)) > 10);
}

#[test]
fn entries_survive_a_reopen_and_are_valid_only_while_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = open(dir.path());
    let update = learned(&[(meta(3, 10), full(3), b"c"), (meta(1, 10), full(1), b"a")]);
    cache.save(Update { lookups: 2, ..update }).unwrap();
    drop(cache);
    let mut cache = open(dir.path());
    assert_eq!(cache.lookup(&meta(1, 10)), Lookup::Valid(full(1)));
    assert_eq!(cache.lookup(&meta(1, 11)), Lookup::Stale);
    let touched = FileMeta { ctime_ns: 7, ..meta(1, 10) };
    assert_eq!(cache.lookup(&touched), Lookup::Stale);
    assert_eq!(cache.lookup(&meta(2, 10)), Lookup::Missing);
    // A new entry replaces the old one; a stale one goes; others stay.
    let update = Update { stale: vec![meta(1, 0).id], ..learned(&[(meta(3, 12), full(9), b"c2")]) };
    cache.save(update).unwrap();
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.lookup(&meta(3, 12)), Lookup::Valid(full(9)));
    let s = stats(dir.path()).unwrap();
    assert_eq!(s.entries, 1);
    cache.clear().unwrap();
    assert_eq!(stats(dir.path()).unwrap(), Stats::default());
}

#[test]
fn a_run_that_learned_nothing_new_leaves_the_entries_file_alone_but_counts() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = open(dir.path());
    let a: &[(FileMeta, Entry, &[u8])] = &[(meta(1, 10), full(1), b"a")];
    cache.save(learned(a)).unwrap();
    let file = dir.path().join(FILE_NAME);
    let written = fs::metadata(&file).unwrap().ino();
    cache.save(Update { lookups: 5, hits: 4, ..learned(a) }).unwrap();
    assert_eq!(fs::metadata(&file).unwrap().ino(), written, "the entries were rewritten");
    let s = stats(dir.path()).unwrap();
    assert_eq!((s.entries, s.last.lookups, s.last.hits), (1, 5, 4));
    // A run that does learn something writes the counters into the file again.
    let b = learned(&[(meta(2, 10), full(2), b"b")]);
    cache.save(Update { lookups: 7, hits: 1, ..b }).unwrap();
    assert_ne!(fs::metadata(&file).unwrap().ino(), written);
    let s = stats(dir.path()).unwrap();
    assert_eq!((s.entries, s.last.lookups, s.last.hits), (2, 7, 1));
    assert!(!dir.path().join(LAST_RUN_NAME).exists());
}

#[test]
fn a_file_read_again_without_a_digest_keeps_the_one_known_for_its_content() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = open(dir.path());
    cache.save(learned(&[(meta(1, 10), full(1), b"a")])).unwrap();
    let bare = Entry { digest: None, ..full(1) };
    cache.save(learned(&[(meta(1, 10), bare, b"a2")])).unwrap();
    assert_eq!(cache.lookup(&meta(1, 10)), Lookup::Valid(full(1)));
    // Changed content: what was known of the old content goes.
    let changed = FileMeta { mtime_ns: 99, ..meta(1, 10) };
    let value = 42;
    let other = Entry {
        fingerprint: Some(Fingerprint { value, ..full(1).fingerprint.unwrap() }),
        digest: None,
    };
    cache.save(learned(&[(changed, other, b"a")])).unwrap();
    assert_eq!(cache.lookup(&changed), Lookup::Valid(other));
}

/// Each entry's inode and recorded path, in key order.
fn paths(cache: &Cache) -> Vec<(u64, Vec<u8>)> {
    let c = &cache.contents;
    c.records.iter().map(|r| (r.meta.id.ino, c.name(r).to_vec())).collect()
}

#[test]
fn paths_learned_in_any_order_stay_with_their_files_through_merges_and_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let mut cache = open(dir.path());
    let mut update = learned(&[(meta(5, 10), full(5), b"five")]);
    // Paths written in another order than the entries, added to an update that already
    // learned one file.
    let many = vec![(meta(3, 10), full(3), (4, 9)), (meta(1, 10), full(1), (0, 4))];
    update.learn_many(many, b"one/three".to_vec());
    cache.save(update).unwrap();
    let want = |v: &[(u64, &[u8])]| -> Vec<(u64, Vec<u8>)> {
        v.iter().map(|&(i, p)| (i, p.to_vec())).collect()
    };
    assert_eq!(paths(&cache), want(&[(1, b"one/"), (3, b"three"), (5, b"five")]));
    // A later run learns one file again (moved) and one new; the rest keep their paths.
    let mut update = Update::default();
    update.learn_many(
        vec![(meta(4, 10), full(4), (0, 1)), (meta(3, 10), full(3), (1, 7))],
        b"4moved3".to_vec(),
    );
    cache.save(update).unwrap();
    let after = want(&[(1, b"one/"), (3, b"moved3"), (4, b"4"), (5, b"five")]);
    assert_eq!(paths(&cache), after);
    drop(cache);
    assert_eq!(paths(&open(dir.path())), after);
}

#[test]
fn a_second_opener_is_told_busy() {
    let dir = tempfile::tempdir().unwrap();
    let first = open(dir.path());
    assert!(matches!(Cache::open(dir.path()).unwrap(), Opened::Busy));
    drop(first);
    open(dir.path());
}

#[test]
fn a_damaged_file_is_set_aside_and_the_cache_starts_empty() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(FILE_NAME), b"garbage").unwrap();
    match Cache::open(dir.path()).unwrap() {
        Opened::Ready { cache, damaged: Some(aside) } => {
            assert!(cache.is_empty());
            assert_eq!(fs::read(&aside.moved_to).unwrap(), b"garbage");
        }
        other => panic!("{other:?}"),
    }
    assert!(!dir.path().join(FILE_NAME).exists());
}

#[test]
fn prune_keeps_only_files_still_at_their_path_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let stat = |p: &Path| FileMeta::of(&fs::symlink_metadata(p).unwrap());
    let (a, b) = (dir.path().join("a\nx"), dir.path().join("b"));
    fs::write(&a, b"1").unwrap();
    fs::write(&b, b"2").unwrap();
    let name = |p: &Path| p.as_os_str().as_bytes().to_vec();
    let (name_a, name_b) = (name(&a), name(&b));
    let update = learned(&[(stat(&a), full(1), &name_a), (stat(&b), full(2), &name_b)]);
    let cache_dir = dir.path().join("cache");
    let mut cache = open(&cache_dir);
    cache.save(update).unwrap();
    fs::remove_file(&b).unwrap();
    assert_eq!(cache.prune().unwrap(), 1);
    assert_eq!(cache.lookup(&stat(&a)), Lookup::Valid(full(1)));
}
