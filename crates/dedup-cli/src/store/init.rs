//! `dedup store init`: the library makes the repository (dedup_store::client::init).

use anyhow::Result;
use dedup_store::args::{CommonArgs, InitArgs};
use dedup_store::client::init::{init, InitRequest};
use dedup_store::client::password::new_password;
use dedup_store::client::user_name::key_label;

use super::password::prompt;

/// Run `dedup store init`.
pub fn run(common: &CommonArgs, args: InitArgs) -> Result<bool> {
    let location = common.location()?;
    let sources = common.password_sources();
    let created = init(&InitRequest {
        location: &location,
        reach: common.reach(),
        chunker: &args.chunker,
        compression: &args.compression,
        pack_size: &args.pack_size,
        format_version: args.format_version,
        kdf: args.kdf(),
        no_encryption: args.insecure_no_encryption,
        new_password: &|| new_password(None, Some(&sources), &prompt),
        label: key_label(),
        warn: &super::warn,
    })?;
    if !common.quiet {
        println!("{}", created.line);
    }
    Ok(true)
}
