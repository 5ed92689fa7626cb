//! Integration tests of `dedup store` on object storage and SFTP (a real S3 server, s3s-fs, and a
//! real sshd), and the round trips every backend must pass (local, S3, SFTP).
//!
//! One test binary per job (cargo builds each file directly under tests/ as a binary of its
//! own, each linking the whole program): each file here is one module of it.

#[path = "../common/mod.rs"]
mod common;

mod store_append_only;
mod store_check_cache;
mod store_copy_s3;
mod store_roundtrip;
mod store_s3;
mod store_security_sftp;
mod store_sftp;
