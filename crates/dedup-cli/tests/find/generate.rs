//! Shell completions and manual pages: generated from the parser's own definitions, they must
//! load in the shell and render in `man`, and name every command the binary has.

use crate::common;

use std::process::Command;

use common::*;

/// Every command and subcommand path `dedup --help` offers, as `dedup store backup` etc.
const COMMANDS: &[&str] = &[
    "dedup",
    "dedup find",
    "dedup link",
    "dedup reflink",
    "dedup symlink",
    "dedup remove",
    "dedup move",
    "dedup cache",
    "dedup store",
    "dedup store init",
    "dedup store backup",
    "dedup store restore",
    "dedup store snapshots",
    "dedup store forget",
    "dedup store prune",
    "dedup store check",
    "dedup store mount",
    "dedup store repair",
    "dedup store key",
    "dedup sync",
    "dedup completions",
];

/// What the bash completion offers after typing `words` (the last one being completed).
fn bash_complete(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; \
         COMP_POINT=${{#COMP_LINE}}; _dedup dedup '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        words.iter().map(|w| format!("'{w}'")).collect::<Vec<_>>().join(" "),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash").args(["--norc", "-c", &program]).output().expect("bash runs");
    assert!(out.status.success(), "bash: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn the_bash_completion_loads_and_completes_subcommands_and_options() {
    let d = tmp();
    let out = run(cmd(d.path()).args(["completions", "bash"]));
    out.assert_code(0);
    let script = d.path().join("dedup.bash");
    std::fs::write(&script, &out.stdout).unwrap();

    let mut offered = bash_complete(&script, &["dedup", "store", "re"]);
    offered.sort();
    assert_eq!(offered, ["repair", "restore", "rewrite"], "completions of `dedup store re`");
    let offered = bash_complete(&script, &["dedup", "sync", "--del"]);
    assert!(
        offered.iter().any(|o| o == "--delete"),
        "completions of `dedup sync --del`: {offered:?}"
    );
    let offered = bash_complete(&script, &["dedup", "f"]);
    assert_eq!(offered, ["find"], "completions of `dedup f`");
}

#[test]
fn every_shell_gets_a_script_that_names_the_commands() {
    let d = tmp();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = run(cmd(d.path()).args(["completions", shell]));
        out.assert_code(0);
        let text = String::from_utf8_lossy(&out.stdout);
        for word in ["restore", "sync", "dry-run"] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
    let out = run(cmd(d.path()).args(["completions", "tcsh"]));
    out.assert_code(2);
}

#[test]
fn every_command_has_a_manual_page_that_man_renders() {
    if !require(
        Command::new("man").arg("--version").output().is_ok_and(|o| o.status.success()),
        "every_command_has_a_manual_page_that_man_renders",
        "man (man-db) is not installed",
    ) {
        return;
    }
    let d = tmp();
    let dir = d.path().join("man1");
    run(cmd(d.path()).arg("man").arg(&dir)).assert_code(0);
    for command in COMMANDS {
        let page = dir.join(format!("{}.1", command.replace(' ', "-")));
        assert!(page.is_file(), "no manual page {}", page.display());
        let out = Command::new("man")
            .arg("-l")
            .arg(&page)
            .env("MANWIDTH", "100")
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .output()
            .expect("man runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "man -l {}: {}",
            page.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains("NAME") && text.contains("SYNOPSIS"), "{}: {text}", page.display());
    }
    let out = Command::new("man")
        .arg("-l")
        .arg(dir.join("dedup-store-restore.1"))
        .env("MANPAGER", "cat")
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("--target"),
        "restore's page lists --target"
    );
}

#[test]
fn every_command_outside_the_store_shows_a_newcomer_an_example() {
    let d = tmp();
    for command in [
        "",
        "find",
        "link",
        "reflink",
        "symlink",
        "remove",
        "move",
        "cache",
        "sync",
        "completions",
        "man",
    ] {
        let out = run(cmd(d.path()).args(command.split_whitespace()).arg("--help"));
        out.assert_code(0);
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(
            help.to_lowercase().contains("example") && help.contains("  dedup "),
            "`dedup {command} --help` shows no example:\n{help}"
        );
    }
}
