//! Integration tests of `dedup store` on local repositories: round trips of awkward trees, output,
//! selection, crash and power loss, corruption and repair, prune, the format, security and the
//! independent reader.
//!
//! One test binary per job (cargo builds each file directly under tests/ as a binary of its
//! own, each linking the whole program): each file here is one module of it.

#[path = "../common/mod.rs"]
mod common;
/// The library tests' writer of hand-made (hostile) trees.
#[path = "../../../dedup-store/tests/common/hand_made.rs"]
mod hand_made;

mod store_backup_disk_order;
mod store_backup_empty_source;
mod store_backup_select;
mod store_backup_truth;
mod store_copy;
mod store_corruption;
mod store_crash;
mod store_deep_tree;
mod store_errors;
mod store_find;
mod store_format3;
mod store_format4;
mod store_help;
mod store_json_progress;
mod store_key_cache;
mod store_output;
mod store_powerloss;
mod store_profile;
mod store_property;
mod store_prune;
mod store_repair;
mod store_repair_safety;
mod store_restore_full_target;
mod store_restore_hostile;
mod store_restore_property;
mod store_restore_select;
mod store_restore_set_id;
mod store_restore_sparse;
mod store_restore_strays;
mod store_restore_target;
mod store_restore_writeback;
mod store_rewrite;
mod store_robustness;
mod store_security;
mod store_select;
mod store_size_leak;
mod store_spec_reader;
mod store_tag;
