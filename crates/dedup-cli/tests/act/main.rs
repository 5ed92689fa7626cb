//! Integration tests of the actions on duplicates (`link`, `reflink`, `symlink`, `remove`, `move`):
//! plans, re-checks, races, `kill -9`, real btrfs/XFS reflinks, directories.
//!
//! One test binary per job (cargo builds each file directly under tests/ as a binary of its
//! own, each linking the whole program): each file here is one module of it.

#[path = "../common/mod.rs"]
mod common;

mod act_actions;
mod act_alias;
mod act_dirs;
mod act_dirs_preview;
mod act_keep;
mod act_kill;
mod act_link;
mod act_owner;
mod act_races;
mod act_reflink;
mod act_roots;
mod act_script_names;
