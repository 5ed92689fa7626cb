//! The temporary files a killed restore leaves behind are removed by the next restore into the
//! same directories, without `--delete`: only names of exactly dedup's form holding what dedup
//! leaves there, never a name the snapshot has, never anything in a dry run.

use crate::common;

use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::symlink;

use common::store::*;
use common::*;

const FILE_STRAY: &str = ".dedup-new.0123456789abcdef";
const LINK_STRAY: &str = ".dedup-tmp.0123456789abcdef";

#[test]
fn a_restore_removes_the_temporaries_of_an_interrupted_one_and_nothing_else() {
    let dir = tmp();
    let (src, repo, target) =
        (dir.path().join("src"), dir.path().join("repo"), dir.path().join("target"));
    fs::create_dir_all(src.join("sub")).unwrap();
    fs::write(src.join("sub/file"), b"file").unwrap();
    // A name of dedup's form that the user backed up is data like any other.
    fs::write(src.join(".dedup-new.00000000000000ff"), b"the user's own").unwrap();
    init_repo(&repo);
    backup_json(&repo, &src);
    let spec = format!("{}:{}", &snapshot_of(&repo, &src)[..8], src.display());
    let restore = |extra: &[&str]| {
        let mut args: Vec<&OsStr> = vec!["restore".as_ref(), spec.as_ref(), "--target".as_ref()];
        args.push(target.as_os_str());
        args.extend(extra.iter().map(OsStr::new));
        store(&repo, &args)
    };
    restore(&[]).assert_code(0);

    // What a run killed mid-write leaves, and names that only look like it.
    let sub = target.join("sub");
    fs::write(sub.join(FILE_STRAY), b"half writ").unwrap();
    symlink("file", sub.join(LINK_STRAY)).unwrap();
    fs::write(target.join(".dedup-new.short"), b"not our form").unwrap();
    fs::create_dir(target.join(".dedup-new.fedcba9876543210")).unwrap();
    fs::write(target.join(".dedup-new.00000000000000ff"), b"changed since").unwrap();

    restore(&["--dry-run"]).assert_code(0);
    assert!(sub.join(FILE_STRAY).exists(), "a dry run removed a temporary");

    restore(&["--overwrite", "if-changed"]).assert_code(0);
    assert!(!sub.join(FILE_STRAY).exists(), "the half-written temporary stayed");
    assert!(fs::symlink_metadata(sub.join(LINK_STRAY)).is_err(), "the link temporary stayed");
    assert_eq!(fs::read(sub.join("file")).unwrap(), b"file");
    assert_eq!(fs::read(target.join(".dedup-new.short")).unwrap(), b"not our form");
    assert!(target.join(".dedup-new.fedcba9876543210").is_dir(), "a directory is never ours");
    assert_eq!(fs::read(target.join(".dedup-new.00000000000000ff")).unwrap(), b"the user's own");
}
