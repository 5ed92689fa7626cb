//! `--script`: the plan as a shell script a user can read, edit and run later. Every step re-checks
//! the duplicate before touching it (same device, inode, size and mtime; not a symlink; bytes
//! equal to the kept file) and replaces it through a temporary name and a rename, as the tool
//! itself does. It needs `sh` and GNU coreutils (`stat -c`, `cmp`, `mv -T`).

use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use dedup_fs::{temp_name, TempKind};

use crate::action::Action;
use crate::plan::{Plan, Step};

/// A script that cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The output could not be written.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// No standard shell command shares extents after a kernel-side comparison.
    #[error("--script is not available for reflink: no standard shell command makes the kernel compare and share extents (FIDEDUPERANGE); run `dedup reflink` itself, or --dry-run to see the plan")]
    Reflink,
}

const PRELUDE: &str = r#"set -u
status=0
# same KEPT TARGET STAMP: TARGET is still the scanned file and equal to KEPT, byte for byte.
same() {
  [ -f "$1" ] && [ ! -L "$1" ] && [ -f "$2" ] && [ ! -L "$2" ] &&
    [ "$(stat -c '%d:%i:%s:%.9Y' -- "$2")" = "$3" ] && cmp -s -- "$1" "$2"
}
skip() { printf 'dedup script: skipped (changed or failed): %s\n' "$1" >&2; status=1; }
do_link() { # KEPT TARGET STAMP TMP
  same "$1" "$2" "$3" || { skip "$2"; return; }
  { ln -- "$1" "$4" && mv -fT -- "$4" "$2"; } || { rm -f -- "$4"; skip "$2"; }
}
do_symlink() { # KEPT TARGET STAMP TMP TEXT
  same "$1" "$2" "$3" || { skip "$2"; return; }
  { ln -s -- "$5" "$4" && mv -fT -- "$4" "$2"; } || { rm -f -- "$4"; skip "$2"; }
}
do_remove() { # KEPT TARGET STAMP
  same "$1" "$2" "$3" || { skip "$2"; return; }
  rm -f -- "$2" || skip "$2"
}
do_move() { # KEPT TARGET STAMP DEST DESTDIR
  same "$1" "$2" "$3" || { skip "$2"; return; }
  { [ ! -e "$4" ] && [ ! -L "$4" ] && mkdir -p -- "$5" && mv -nT -- "$2" "$4" && [ ! -e "$2" ]; } || skip "$2"
}
"#;

/// Write `plan` as a POSIX shell script.
pub fn write_script(plan: &Plan, tool: &str, out: &mut dyn Write) -> Result<(), ScriptError> {
    if plan.action == Action::Reflink {
        return Err(ScriptError::Reflink);
    }
    writeln!(out, "#!/bin/sh")?;
    writeln!(out, "# {tool}: `{}` plan of {} steps.", plan.action.verb(), plan.steps.len())?;
    writeln!(out, "# Each step re-checks its file first and is skipped if it changed.")?;
    out.write_all(PRELUDE.as_bytes())?;
    for skipped in &plan.skipped {
        writeln!(out, "# not planned: {}: {}", comment(&skipped.path), skipped.reason)?;
    }
    for step in &plan.steps {
        write_step(plan, step, out)?;
    }
    writeln!(out, "exit \"$status\"")?;
    Ok(())
}

fn write_step(plan: &Plan, step: &Step, out: &mut dyn Write) -> io::Result<()> {
    let m = &step.target.meta;
    let stamp = format!(
        "{}:{}:{}:{}.{:09}",
        m.id.dev,
        m.id.ino,
        m.size,
        m.mtime_ns.div_euclid(1_000_000_000),
        m.mtime_ns.rem_euclid(1_000_000_000)
    );
    let tmp = match step.target.path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(temp_name(TempKind::Link)),
        _ => temp_name(TempKind::Link).into(),
    };
    let mut args: Vec<Vec<u8>> =
        vec![quote(&step.kept.path), quote(&step.target.path), stamp.into_bytes()];
    let verb = match &plan.action {
        Action::Link => {
            args.push(quote(&tmp));
            "do_link"
        }
        Action::Symlink => {
            args.push(quote(&tmp));
            args.push(quote(step.link_text.as_deref().unwrap_or(&step.kept.path)));
            "do_symlink"
        }
        Action::Remove => "do_remove",
        Action::Move { .. } => {
            let dest = step.dest.as_deref().unwrap_or(&step.target.path);
            args.push(quote(dest));
            args.push(quote(dest.parent().unwrap_or(Path::new("/"))));
            "do_move"
        }
        Action::Reflink => unreachable!("refused above"),
    };
    out.write_all(verb.as_bytes())?;
    for a in args {
        out.write_all(b" ")?;
        out.write_all(&a)?;
    }
    out.write_all(b"\n")
}

/// Single-quote any bytes for the shell (a `'` becomes `'\''`).
fn quote(path: &Path) -> Vec<u8> {
    let mut v = vec![b'\''];
    for &b in path.as_os_str().as_bytes() {
        if b == b'\'' {
            v.extend_from_slice(b"'\\''");
        } else {
            v.push(b);
        }
    }
    v.push(b'\'');
    v
}

/// A path shown inside a comment, on one line.
fn comment(path: &Path) -> String {
    String::from_utf8_lossy(path.as_os_str().as_bytes()).escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_survives_quotes_and_newlines() {
        assert_eq!(quote(Path::new("a'b")), b"'a'\\''b'");
        assert_eq!(quote(Path::new("x\ny")), b"'x\ny'");
        assert_eq!(comment(Path::new("x\ny")), "x\\ny");
    }
}
