//! `dedup find --summary`: duplicated bytes per top-level directory.

use crate::common;

use common::*;

#[test]
fn summary_ranks_top_level_directories_by_reclaimable_bytes() {
    let t = tmp();
    write(t.path(), "photos/a.jpg", &pattern(10_000, 1));
    write(t.path(), "photos/2020/b.jpg", &pattern(20_000, 2));
    write(t.path(), "backup/a.jpg", &pattern(10_000, 1));
    write(t.path(), "backup/b.jpg", &pattern(20_000, 2));
    write(t.path(), "music/x", &pattern(3000, 3));
    write(t.path(), "music/y", &pattern(3000, 3));
    write(t.path(), "music/z", &pattern(5000, 4));

    let out = find_json(t.path(), &["--summary", "."]);
    out.assert_code(0);
    let r = out.json();
    let rows = r.raw["dir_summary"].as_array().expect("a dir_summary array");
    let path = |v: &serde_json::Value| String::from_utf8(decode_path(v).unwrap()).unwrap();
    let order: Vec<String> = rows.iter().map(|s| path(&s["path"])).collect();
    assert_eq!(order, ["./backup", "./photos", "./music"]);
    let photos = &rows[1];
    assert_eq!(photos["duplicated_bytes"], 30_000);
    assert_eq!(photos["reclaimable_bytes"], 30_000);
    assert_eq!(path(&photos["shared_with"][0]["path"]), "./backup");
    assert_eq!(photos["shared_with"][0]["bytes"], 30_000);
    let music = &rows[2];
    assert_eq!(music["internal_bytes"], 3000);
    assert_eq!(music["reclaimable_bytes"], 3000);
    assert_eq!(music["shared_with"].as_array().unwrap().len(), 0);
    // The groups are still in the JSON report.
    assert_eq!(r.groups.len(), 3);

    let out = find(t.path(), &["--summary", "."]);
    out.assert_code(0);
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        "./backup: 29.3 KiB reclaimable; 29.3 KiB in 2 duplicated files; 0 B duplicated within\n\
         \x20   29.3 KiB also in ./photos\n\
         ./photos: 29.3 KiB reclaimable; 29.3 KiB in 2 duplicated files; 0 B duplicated within\n\
         \x20   29.3 KiB also in ./backup\n\
         ./music: 2.9 KiB reclaimable; 5.9 KiB in 2 duplicated files; 2.9 KiB duplicated within\n"
    );
}

#[test]
fn summary_is_not_available_as_csv() {
    let t = tmp();
    find(t.path(), &["--summary", "--format", "csv", "."]).assert_code(2);
}
