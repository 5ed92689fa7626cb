//! A generated script on hostile names: command substitutions, backticks, quotes, newlines,
//! leading dashes and bytes that are not UTF-8 in the names of duplicates and of the kept file.
//! Running the script must run none of them and do exactly what the tool does itself.

use crate::common;

use std::fs;
use std::path::Path;

use common::act::*;
use common::*;

const HOSTILE: [&[u8]; 6] = [
    b"-rf $(touch PWNED1)",
    b"`touch PWNED2`",
    b"it's \"quoted\"",
    b"new\nline; touch PWNED3",
    b"-n",
    b"\xff\xfe latin-1 \xe9",
];

fn tree(d: &Path) {
    write(d, "t/keep", b"same bytes");
    for name in HOSTILE {
        write_b(d, &[b"t/".as_slice(), name].concat(), b"same bytes");
    }
}

#[test]
fn scripts_run_no_name_and_match_the_tool() {
    for action in [&["remove"][..], &["link"], &["symlink"], &["move", "--to", "dups"]] {
        let (direct, scripted) = (tmp(), tmp());
        tree(direct.path());
        tree(scripted.path());
        dedup(direct.path(), &[action, &["t"]].concat()).assert_code(0);
        let script = dedup(scripted.path(), &[action, &["--script", "t"]].concat());
        script.assert_code(0);
        let text = String::from_utf8_lossy(&script.stdout);
        // Calls, not the definitions of the header; a name with a newline continues a call.
        let steps = text.lines().filter(|l| l.starts_with("do_") && !l.contains("() {")).count();
        assert_eq!(steps, HOSTILE.len(), "{action:?}: one step per duplicate");
        let dir = fs::canonicalize(scripted.path()).unwrap();
        fs::write(dir.join("plan.sh"), &script.stdout).unwrap();
        let ran = std::process::Command::new("sh").arg("plan.sh").current_dir(&dir).output();
        let ran = ran.unwrap();
        assert!(ran.status.success(), "{action:?}: {}", String::from_utf8_lossy(&ran.stderr));
        fs::remove_file(dir.join("plan.sh")).unwrap();
        for pwned in ["PWNED1", "PWNED2", "PWNED3", "t/PWNED1", "t/PWNED2", "t/PWNED3"] {
            assert!(!dir.join(pwned).exists(), "{action:?}: the script ran a name ({pwned})");
        }
        let view =
            |p: &Path| contents(p).into_iter().map(|(k, v)| (k, v.len())).collect::<Vec<_>>();
        assert_eq!(view(direct.path()), view(scripted.path()), "{action:?}");
    }
}
