//! A restore into a target that runs out of space: a file the target could not take whole is
//! not left at its name (the repository still holds its data, so a file with holes there would
//! be kept as if it were whole by the next restore), and once space is freed the same restore
//! brings it back whole.

use crate::common;

use std::ffi::OsStr;
use std::fs;

use common::act::Tmpfs;
use common::store::*;
use common::*;

#[test]
fn a_file_the_full_target_could_not_take_is_not_left_with_holes_at_its_name() {
    let test = "a_file_the_full_target_could_not_take_is_not_left_with_holes_at_its_name";
    let Some(disk) = Tmpfs::new(test) else { return };
    let dir = tmp();
    let (src, repo) = (dir.path().join("src"), dir.path().join("repo"));
    fs::create_dir(&src).unwrap();
    fs::write(src.join("big"), pattern(4 << 20, 7)).unwrap();
    fs::write(src.join("small"), b"small and whole").unwrap();
    init_repo(&repo);
    backup_json(&repo, &src);

    // The 64 MiB tmpfs keeps about 2 MiB free: not room enough for the big file.
    let filler = disk.mnt.join("filler");
    fs::write(&filler, vec![1u8; 62 << 20]).unwrap();
    let target = disk.mnt.join("restored");
    let spec = format!("latest:{}", src.display());
    let args = [OsStr::new("restore"), spec.as_ref(), "--target".as_ref(), target.as_os_str()];
    let full = store(&repo, &args);
    full.assert_code(1);
    full.assert_message("error", "big");
    assert!(full.dump().contains("No space left on device"), "{}", full.dump());
    assert!(!full.dump().contains("panicked"), "{}", full.dump());
    let names: Vec<_> = fs::read_dir(&target).unwrap().map(|e| e.unwrap().file_name()).collect();
    // Neither a file with holes at its name nor its temporary file (whose space is freed); the
    // small one is there whole if it was written before the disk filled, which the order of
    // the writes decides.
    assert!(names.iter().all(|n| n == "small"), "{names:?}\n{}", full.dump());
    if !names.is_empty() {
        assert_eq!(fs::read(target.join("small")).unwrap(), b"small and whole");
    }

    fs::remove_file(&filler).unwrap();
    let again = store(&repo, &args);
    again.assert_code(0);
    assert_eq!(fs::read(target.join("big")).unwrap(), pattern(4 << 20, 7));
    assert_eq!(fs::read(target.join("small")).unwrap(), b"small and whole");
}
