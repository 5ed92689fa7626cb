//! The terminal prompt through which the store library asks for a password when no source
//! gives one (dedup_store::client::password holds the sources and which one wins).

use std::io::IsTerminal;

use dedup_store::client::password::Password;
use zeroize::Zeroizing;

/// Asks on the terminal; None when standard input is not one.
pub fn prompt(text: &str) -> Option<std::io::Result<Password>> {
    if !std::io::stdin().is_terminal() {
        return None;
    }
    Some(rpassword::prompt_password(text).map(|typed| Zeroizing::new(typed.into_bytes())))
}
