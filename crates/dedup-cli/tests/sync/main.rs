//! Integration tests of `dedup sync`: the one-way mirror on real trees, with rsync as an oracle,
//! kill points, reflinks, moves, deletions, unread parts and cross-file-system copies.
//!
//! One test binary per job (cargo builds each file directly under tests/ as a binary of its
//! own, each linking the whole program): each file here is one module of it.

#[path = "../common/mod.rs"]
mod common;

mod sync_changes;
mod sync_crossfs;
mod sync_dedup;
mod sync_deep;
mod sync_delete;
mod sync_dest_link;
mod sync_disk_order;
mod sync_empty_source;
mod sync_files_from_links;
mod sync_kill;
mod sync_link_dest;
mod sync_modes;
mod sync_mounted_inside;
mod sync_moves;
mod sync_options;
mod sync_oracle;
mod sync_property;
mod sync_reflink;
mod sync_roots;
mod sync_roundtrip;
mod sync_set_id;
mod sync_unmounted;
mod sync_unread;
mod sync_write_back;
mod sync_xattrs;
