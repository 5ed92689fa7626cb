//! Dropping a tree's pages from the page cache, so that a test reads it from its device again
//! (the disk-order tests of the store and sync on a loop device).

use std::fs;
use std::path::Path;
use std::process::Command;

/// Drop the page cache's copy of every file under `dir`.
pub fn evict(dir: &Path) {
    assert!(Command::new("sync").status().unwrap().success());
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let kind = fs::symlink_metadata(&path).unwrap().file_type();
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                // The name as bytes: some are not UTF-8.
                let mut input = std::ffi::OsString::from("if=");
                input.push(path.as_os_str());
                let status = Command::new("dd")
                    .arg(input)
                    .args(["iflag=nocache", "count=0", "status=none"])
                    .status()
                    .unwrap();
                assert!(status.success());
            }
        }
    }
}
