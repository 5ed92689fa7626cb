//! The terminal prompt through which the store library asks for a password when no source
//! gives one (dedup_store::client::password holds the sources and which one wins).

use std::io::IsTerminal;
use std::path::Path;

use dedup_store::client::password::{Password, PasswordError, Sources};
use zeroize::Zeroizing;

use super::args::CommonArgs;

/// Asks on the terminal; None when standard input is not one.
pub fn prompt(text: &str) -> Option<std::io::Result<Password>> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    Some(rpassword::prompt_password(text).map(|typed| Zeroizing::new(typed.into_bytes())))
}

/// The sources of the repository's password the command line gives.
pub fn sources(common: &CommonArgs) -> Sources {
    Sources { file: common.password_file.clone(), command: common.password_command.clone() }
}

/// The password of the repository `copy` reads from.
pub fn source_password(
    file: Option<&Path>,
    command: Option<&str>,
) -> Result<Password, PasswordError> {
    let sources =
        Sources { file: file.map(Path::to_path_buf), command: command.map(str::to_owned) };
    sources.source_password(&prompt)
}
