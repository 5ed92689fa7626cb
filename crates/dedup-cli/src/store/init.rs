//! `dedup store init`: the library makes the repository (dedup_store::client::init).

use anyhow::Result;
use dedup_store::client::init::{init, InitRequest};
use dedup_store::client::password::new_password;
use dedup_store::client::user_name::key_label;
use dedup_store::format::KdfParams;

use super::args::{CommonArgs, InitArgs};
use super::password::{prompt, sources};

/// Run `dedup store init`.
pub fn run(common: &CommonArgs, args: InitArgs) -> Result<bool> {
    let location = super::location(common)?;
    let sources = sources(common);
    let created = init(&InitRequest {
        location: &location,
        reach: super::reach(common),
        chunker: &args.chunker,
        compression: &args.compression,
        pack_size: &args.pack_size,
        format_version: args.format_version,
        kdf: KdfParams {
            memory_kib: args.kdf_memory_kib,
            iterations: args.kdf_iterations,
            lanes: args.kdf_lanes,
        },
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
