//! `dedup store key list|add|remove|passwd`: the library does the work
//! (dedup_store::client::keys) and returns the lines to show.

use anyhow::Result;
use dedup_store::args::{CommonArgs, KeyAction, KeyArgs, NewPasswordArgs};
use dedup_store::client::keys;
use dedup_store::client::password::{new_password, Password, PasswordError};
use dedup_store::client::user_name::key_label;

use super::password::prompt;

/// Run `dedup store key`.
pub fn run(common: &CommonArgs, args: KeyArgs) -> Result<bool> {
    let mut repo = super::open(common)?;
    let lines = match args.action {
        KeyAction::List => keys::list(&repo)?,
        KeyAction::Add(a) => vec![keys::add(&repo, &new(&a)?, key_label())?],
        KeyAction::Remove { id } => vec![keys::remove(&repo, &id, &super::warn)?],
        KeyAction::Passwd(a) => {
            vec![keys::change_password(&mut repo, &new(&a)?, key_label(), &super::warn)?]
        }
    };
    for line in lines {
        println!("{line}");
    }
    Ok(true)
}

fn new(args: &NewPasswordArgs) -> Result<Password, PasswordError> {
    new_password(args.new_password_file.as_deref(), None, &prompt)
}
