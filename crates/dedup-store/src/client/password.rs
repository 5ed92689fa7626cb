//! Where a password comes from, and which source wins: DEDUP_PASSWORD, a file (the option's,
//! else DEDUP_PASSWORD_FILE), a command, else a person asked through the caller's prompt (the
//! library never reads a terminal itself). New passwords (init, key add, key passwd) and the
//! password of the repository `copy` reads from have sources of their own. Passwords are held
//! in memory that is zeroed when dropped.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use zeroize::Zeroizing;

/// A password, zeroed when dropped.
pub type Password = Zeroizing<Vec<u8>>;

/// Asks a person for a password with the text given; None when there is no one to ask (no
/// terminal).
pub type Prompt<'a> = &'a dyn Fn(&str) -> Option<io::Result<Password>>;

/// The environment variable holding the repository's password.
pub const PASSWORD_VAR: &str = "DEDUP_PASSWORD";
/// The environment variable naming a file that holds the repository's password.
pub const PASSWORD_FILE_VAR: &str = "DEDUP_PASSWORD_FILE";

/// Why no password was had.
#[derive(Debug, thiserror::Error)]
pub enum PasswordError {
    /// The password file does not read.
    #[error("cannot read the password file {}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The password command does not start.
    #[error("cannot run the password command")]
    Spawn(#[source] io::Error),
    /// The password command ends in failure.
    #[error("the password command failed ({0})")]
    CommandFailed(ExitStatus),
    /// No source, and no one to ask.
    #[error(
        "no password given: set DEDUP_PASSWORD, DEDUP_PASSWORD_FILE, --password-file or \
         --password-command"
    )]
    NotGiven,
    /// No source of the password of the repository copied from, and no one to ask.
    #[error(
        "no password given for the repository to copy from: set DEDUP_FROM_PASSWORD, \
         DEDUP_FROM_PASSWORD_FILE, --from-password-file or --from-password-command"
    )]
    SourceNotGiven,
    /// The terminal did not answer.
    #[error("cannot read the password from the terminal")]
    Terminal(#[source] io::Error),
    /// A new password typed twice, differently.
    #[error("the two passwords differ")]
    Differ,
    /// An empty new password.
    #[error(
        "the new password is empty: refused (an empty password protects nothing; for a \
         repository without encryption, `init --insecure-no-encryption` says so)"
    )]
    Empty,
}

/// The sources of a repository's password the command line gives.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// `--password-file`.
    pub file: Option<PathBuf>,
    /// `--password-command` (run with `sh -c`).
    pub command: Option<String>,
}

impl Sources {
    /// Whether a source of the password is given (rather than a prompt to come).
    pub fn given(&self) -> bool {
        std::env::var_os(PASSWORD_VAR).is_some()
            || self.file.is_some()
            || std::env::var_os(PASSWORD_FILE_VAR).is_some()
            || self.command.is_some()
    }

    /// The password file named (`--password-file`, else DEDUP_PASSWORD_FILE), read or not.
    pub fn file_named(&self) -> Option<PathBuf> {
        self.file.clone().or_else(|| std::env::var_os(PASSWORD_FILE_VAR).map(Into::into))
    }

    /// The password of the repository.
    pub fn password(&self, prompt: Prompt<'_>) -> Result<Password, PasswordError> {
        if let Some(password) = std::env::var_os(PASSWORD_VAR) {
            return Ok(Zeroizing::new(password.into_encoded_bytes()));
        }
        if let Some(path) = self.file_named() {
            return from_file(&path);
        }
        if let Some(command) = &self.command {
            return from_command(command);
        }
        ask(prompt, "repository password: ", PasswordError::NotGiven)
    }

    /// The password of the repository `copy` reads from: DEDUP_FROM_PASSWORD, the file (else
    /// DEDUP_FROM_PASSWORD_FILE), the command, else a prompt.
    pub fn source_password(&self, prompt: Prompt<'_>) -> Result<Password, PasswordError> {
        if let Some(password) = std::env::var_os("DEDUP_FROM_PASSWORD") {
            return Ok(Zeroizing::new(password.into_encoded_bytes()));
        }
        if let Some(path) = self
            .file
            .clone()
            .or_else(|| std::env::var_os("DEDUP_FROM_PASSWORD_FILE").map(Into::into))
        {
            return from_file(&path);
        }
        match &self.command {
            Some(command) => from_command(command),
            None => ask(prompt, "source repository password: ", PasswordError::SourceNotGiven),
        }
    }
}

/// A new password (init, key add, key passwd): DEDUP_NEW_PASSWORD, `file`, the repository's
/// password where `init` takes it (`existing`, when a source of it is given), else a prompt
/// asked twice. An empty password is refused: it protects nothing, and
/// `--insecure-no-encryption` says so honestly.
pub fn new_password(
    file: Option<&Path>,
    existing: Option<&Sources>,
    prompt: Prompt<'_>,
) -> Result<Password, PasswordError> {
    let password = new_password_from(file, existing, prompt)?;
    if password.is_empty() {
        return Err(PasswordError::Empty);
    }
    Ok(password)
}

fn new_password_from(
    file: Option<&Path>,
    existing: Option<&Sources>,
    prompt: Prompt<'_>,
) -> Result<Password, PasswordError> {
    if let Some(password) = std::env::var_os("DEDUP_NEW_PASSWORD") {
        return Ok(Zeroizing::new(password.into_encoded_bytes()));
    }
    if let Some(path) = file {
        return from_file(path);
    }
    if let Some(sources) = existing.filter(|sources| sources.given()) {
        return sources.password(prompt);
    }
    let first = ask(prompt, "new password: ", PasswordError::NotGiven)?;
    let second = ask(prompt, "new password again: ", PasswordError::NotGiven)?;
    if first != second {
        return Err(PasswordError::Differ);
    }
    Ok(first)
}

fn ask(prompt: Prompt<'_>, text: &str, nobody: PasswordError) -> Result<Password, PasswordError> {
    match prompt(text) {
        None => Err(nobody),
        Some(typed) => typed.map_err(PasswordError::Terminal),
    }
}

fn first_line(bytes: &[u8]) -> Password {
    let end = bytes.iter().position(|&b| b == b'\n').unwrap_or(bytes.len());
    let line = &bytes[..end];
    Zeroizing::new(line.strip_suffix(b"\r").unwrap_or(line).to_vec())
}

fn from_file(path: &Path) -> Result<Password, PasswordError> {
    let bytes = std::fs::read(path)
        .map_err(|source| PasswordError::File { path: path.to_path_buf(), source })?;
    Ok(first_line(&Zeroizing::new(bytes)))
}

/// The first line of what `command` (run with `sh -c`) prints.
fn from_command(command: &str) -> Result<Password, PasswordError> {
    let output =
        Command::new("sh").arg("-c").arg(command).output().map_err(PasswordError::Spawn)?;
    let stdout = Zeroizing::new(output.stdout);
    if !output.status.success() {
        return Err(PasswordError::CommandFailed(output.status));
    }
    Ok(first_line(&stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_is_the_first_line_without_its_end() {
        assert_eq!(*first_line(b"secret\nmore"), b"secret");
        assert_eq!(*first_line(b"secret\r\n"), b"secret");
        assert_eq!(*first_line(b"with space "), b"with space ");
    }

    #[test]
    fn a_new_password_typed_twice_must_match_and_not_be_empty() {
        if std::env::var_os("DEDUP_NEW_PASSWORD").is_some() {
            return;
        }
        let typed = |answers: &'static [&'static str]| {
            let next = std::cell::Cell::new(0);
            move |_: &str| {
                let answer = answers[next.get()];
                next.set(next.get() + 1);
                Some(Ok(Zeroizing::new(answer.as_bytes().to_vec())))
            }
        };
        let same = typed(&["pw", "pw"]);
        assert_eq!(*new_password(None, None, &same).unwrap(), b"pw");
        let differ = typed(&["pw", "wp"]);
        assert!(matches!(new_password(None, None, &differ), Err(PasswordError::Differ)));
        let empty = typed(&["", ""]);
        assert!(matches!(new_password(None, None, &empty), Err(PasswordError::Empty)));
        let nobody = |_: &str| None;
        assert!(matches!(new_password(None, None, &nobody), Err(PasswordError::NotGiven)));
    }
}
