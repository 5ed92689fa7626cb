//! Integration tests of `dedup find` and the content cache: groups, selection, names, links,
//! special files, errors and exit statuses, output formats, questions beyond pairs, changing files,
//! slow devices, scale; and the generated help (completions, man pages).
//!
//! One test binary per job (cargo builds each file directly under tests/ as a binary of its
//! own, each linking the whole program): each file here is one module of it.

#[path = "../common/mod.rs"]
mod common;

mod cache;
mod changing;
mod dirs;
mod errors;
mod formats;
mod generate;
mod groups;
mod links;
mod names;
mod overlap;
mod physical_order;
mod property;
mod replication;
mod scale;
mod selection;
mod slow_device;
mod special;
mod summary;
mod unwritten_reports;
