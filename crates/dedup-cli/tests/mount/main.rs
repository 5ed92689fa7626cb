//! Integration tests of `dedup store mount`: snapshots as a real FUSE file system, and writable
//! volumes (`--writable`).
//!
//! One test binary per job (cargo builds each file directly under tests/ as a binary of its
//! own, each linking the whole program): each file here is one module of it.

#[path = "../common/mod.rs"]
mod common;

mod store_mount;
mod volume_basics;
mod volume_close_errors;
mod volume_crash;
mod volume_fsx;
mod volume_helpers;
mod volume_listing;
mod volume_posix;
mod volume_privileges;
mod volume_read;
mod volume_read_ahead;
mod volume_recover;
mod volume_s3;
mod volume_unlinked;
