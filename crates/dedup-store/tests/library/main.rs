//! Integration tests of the store library itself, below the binary: adoption of unindexed packs,
//! a backend that starts refusing writes, hostile hand-made trees, prune over damaged packs, the
//! unchanged-file pass, and round trips through the library's API.
//!
//! One test binary (cargo builds each file directly under tests/ as a binary of its own): each
//! file here is one module of it.

#[path = "../common/mod.rs"]
mod common;

mod adoption;
mod failing_backend;
mod hostile_trees;
mod prune_damage;
mod prune_forged;
mod roundtrip;
mod sink_forgets;
mod unchanged_pass;
