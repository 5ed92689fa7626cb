//! `dedup store --help` and each store command's `--help` end with examples a newcomer can
//! paste (each example's options are checked by a unit test beside them).

use crate::common;

use common::*;

#[test]
fn every_store_command_shows_a_newcomer_examples() {
    let d = tmp();
    for command in [
        "",
        "init",
        "backup",
        "snapshots",
        "ls",
        "restore",
        "dump",
        "diff",
        "mount",
        "stats",
        "check",
        "key",
        "forget",
        "prune",
        "repair",
        "find",
        "tag",
        "rewrite",
        "copy",
    ] {
        let out = run(cmd(d.path()).arg("store").args(command.split_whitespace()).arg("--help"));
        out.assert_code(0);
        let help = String::from_utf8_lossy(&out.stdout);
        let example = |line: &&str| {
            line.starts_with("  ") && line.contains("dedup store") && line.contains(command)
        };
        assert!(
            help.contains("Example") && help.lines().any(|l| example(&l)),
            "`dedup store {command} --help` shows no example of itself:\n{help}"
        );
    }
}
