//! Where a password comes from: DEDUP_PASSWORD, a file, a command, else a prompt on a terminal.
//! Passwords are held in memory that is zeroed when dropped.

use std::io::IsTerminal;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};
use zeroize::Zeroizing;

use super::args::{CommonArgs, NewPasswordArgs};

/// A password, zeroed when dropped.
pub type Password = Zeroizing<Vec<u8>>;

fn first_line(bytes: &[u8]) -> Password {
    let end = bytes.iter().position(|&b| b == b'\n').unwrap_or(bytes.len());
    let line = &bytes[..end];
    Zeroizing::new(line.strip_suffix(b"\r").unwrap_or(line).to_vec())
}

fn from_file(path: &Path) -> Result<Password> {
    let bytes = Zeroizing::new(
        std::fs::read(path)
            .with_context(|| format!("cannot read the password file {}", path.display()))?,
    );
    Ok(first_line(&bytes))
}

fn prompt(text: &str) -> Result<Password> {
    if !std::io::stdin().is_terminal() {
        bail!("no password given: set DEDUP_PASSWORD, DEDUP_PASSWORD_FILE, --password-file or --password-command");
    }
    let typed =
        rpassword::prompt_password(text).context("cannot read the password from the terminal")?;
    Ok(Zeroizing::new(typed.into_bytes()))
}

/// Whether a source of the password is given (rather than a prompt to come).
pub fn given(common: &CommonArgs) -> bool {
    std::env::var_os("DEDUP_PASSWORD").is_some()
        || common.password_file.is_some()
        || std::env::var_os("DEDUP_PASSWORD_FILE").is_some()
        || common.password_command.is_some()
}

/// The password of the repository.
pub fn password(common: &CommonArgs) -> Result<Password> {
    if let Some(password) = std::env::var_os("DEDUP_PASSWORD") {
        return Ok(Zeroizing::new(password.into_encoded_bytes()));
    }
    if let Some(path) = common
        .password_file
        .clone()
        .or_else(|| std::env::var_os("DEDUP_PASSWORD_FILE").map(Into::into))
    {
        return from_file(&path);
    }
    if let Some(command) = &common.password_command {
        return from_command(command);
    }
    prompt("repository password: ")
}

/// The first line of what `command` (run with `sh -c`) prints.
fn from_command(command: &str) -> Result<Password> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(command)
        .output()
        .context("cannot run the password command")?;
    let stdout = Zeroizing::new(output.stdout);
    if !output.status.success() {
        bail!("the password command failed ({})", output.status);
    }
    Ok(first_line(&stdout))
}

/// The password of the repository `copy` reads from: DEDUP_FROM_PASSWORD, `file` (else
/// DEDUP_FROM_PASSWORD_FILE), `command`, else a prompt.
pub fn source_password(file: Option<&Path>, command: Option<&str>) -> Result<Password> {
    if let Some(password) = std::env::var_os("DEDUP_FROM_PASSWORD") {
        return Ok(Zeroizing::new(password.into_encoded_bytes()));
    }
    let file = file.map(Path::to_path_buf);
    if let Some(path) =
        file.or_else(|| std::env::var_os("DEDUP_FROM_PASSWORD_FILE").map(Into::into))
    {
        return from_file(&path);
    }
    match command {
        Some(command) => from_command(command),
        None if !std::io::stdin().is_terminal() => bail!(
            "no password given for the repository to copy from: set DEDUP_FROM_PASSWORD, \
             DEDUP_FROM_PASSWORD_FILE, --from-password-file or --from-password-command"
        ),
        None => prompt("source repository password: "),
    }
}

/// A new password (init, key add, key passwd): DEDUP_NEW_PASSWORD, a file, else a prompt asked
/// twice. For `init`, DEDUP_PASSWORD and the other sources of the password are also taken. An
/// empty password is refused: it protects nothing, and `--insecure-no-encryption` says so
/// honestly.
pub fn new_password(
    common: Option<&CommonArgs>,
    args: Option<&NewPasswordArgs>,
) -> Result<Password> {
    let password = new_password_from(common, args)?;
    if password.is_empty() {
        bail!(
            "the new password is empty: refused (an empty password protects nothing; for a \
             repository without encryption, `init --insecure-no-encryption` says so)"
        );
    }
    Ok(password)
}

fn new_password_from(
    common: Option<&CommonArgs>,
    args: Option<&NewPasswordArgs>,
) -> Result<Password> {
    if let Some(password) = std::env::var_os("DEDUP_NEW_PASSWORD") {
        return Ok(Zeroizing::new(password.into_encoded_bytes()));
    }
    if let Some(path) = args.and_then(|a| a.new_password_file.as_deref()) {
        return from_file(path);
    }
    if let Some(common) = common {
        if given(common) {
            return password(common);
        }
    }
    let first = prompt("new password: ")?;
    let second = prompt("new password again: ")?;
    if first != second {
        bail!("the two passwords differ");
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::first_line;

    #[test]
    fn a_password_is_the_first_line_without_its_end() {
        assert_eq!(*first_line(b"secret\nmore"), b"secret");
        assert_eq!(*first_line(b"secret\r\n"), b"secret");
        assert_eq!(*first_line(b"with space "), b"with space ");
    }
}
