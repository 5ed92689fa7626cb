//! `dedup store copy` between a local repository and one on a real S3 server (s3s-fs): local to
//! S3 and back, each copy checked with `--read-data` and restored, and a second run copying
//! nothing.

use crate::common;
use crate::common::s3server::S3Server;

use std::ffi::OsStr;
use std::path::Path;

use common::store::*;
use common::*;

fn copy_from(to: &Path, from: &Path) -> String {
    let args: [&OsStr; 3] = ["copy".as_ref(), "--from-repo".as_ref(), from.as_os_str()];
    let out = run(store_cmd(to).args(args).env("DEDUP_FROM_PASSWORD", PASSWORD));
    out.assert_code(0);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn snapshots_copy_from_a_local_repository_to_s3_and_back() {
    let Some(server) = S3Server::start("snapshots_copy_from_a_local_repository_to_s3_and_back")
    else {
        return;
    };
    let dir = tmp();
    let src = dir.path().join("src");
    write(&src, "a", &pattern(500_000, 5));
    write(&src, "dir/b", b"small\n");
    let (local, s3, back) =
        (dir.path().join("local"), server.repo("copy"), dir.path().join("back"));
    init_repo(&local);
    store_ok(&local, &[OsStr::new("backup"), OsStr::new("--tag=t"), src.as_os_str()]);
    init_repo(&s3);

    let said = copy_from(&s3, &local);
    assert!(said.contains("copied 1 snapshot(s), 0 already there"), "{said}");
    assert!(copy_from(&s3, &local).contains("copied 0 snapshot(s), 1 already there"));
    store_ok(&s3, &["check", "--read-data"]);
    let target = dir.path().join("out-s3");
    let spec = format!("latest:{}", src.display());
    store_ok(&s3, &["restore", &spec, "--target", target.to_str().unwrap()]);
    assert_looks_equal(&look(&src), &look(&target), "restored from the S3 copy");

    init_repo(&back);
    assert!(copy_from(&back, &s3).contains("copied 1 snapshot(s)"));
    store_ok(&back, &["check", "--read-data"]);
    let listed: serde_json::Value =
        serde_json::from_str(&store_ok(&back, &["snapshots", "--json"])).unwrap();
    let original: serde_json::Value =
        serde_json::from_str(&store_ok(&local, &["snapshots", "--json"])).unwrap();
    assert_eq!(listed[0]["original"], original[0]["id"], "a copy of a copy names the first");
    assert_eq!(listed[0]["tags"], serde_json::json!(["t"]));
}
