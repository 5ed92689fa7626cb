//! What the inode table costs per entry, measured: a counting allocator (this test binary's
//! global allocator, counting per thread so that tests running beside it do not count) and a
//! table of small files, each named in one directory and holding one stored chunk, as after
//! `cp -a` of a tree of small files. The bound holds the volume's peak memory (issue 38) to
//! what a tree of a hundred thousand files can afford.

// A global allocator is an unsafe trait; this one only counts and passes every call on.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use dedup_store::format::NodeKind;
use dedup_store::Id;

use super::content::Content;
use super::table::{Inode, Table, ROOT};

struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn count(delta: isize) {
    // The thread may be exiting, its counter gone: nothing to count then.
    let _ = LIVE.try_with(|live| live.set(live.get() + delta));
}

// SAFETY: every call goes to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn live() -> isize {
    LIVE.with(Cell::get)
}

/// Bytes the table holds per small file: `files` files named `f00000000`… in one directory,
/// each of one stored chunk of 4 KiB.
fn bytes_per_small_file(files: usize) -> isize {
    let mut table = Table::with_root(Inode::new(NodeKind::Dir, 0o755, 0, 0, 0));
    let before = live();
    for n in 0..files {
        let name = format!("f{n:08}");
        let mut inode = Inode::new(NodeKind::File, 0o644, 1000, 1000, 0);
        let id = Id([(n % 251) as u8; 32]);
        inode.file =
            Some(std::sync::Arc::new(std::sync::Mutex::new(Content::from_chunks([(id, 4096)]))));
        table.create(ROOT, name.as_bytes(), inode).unwrap();
    }
    let per_file = (live() - before) / files as isize;
    drop(table);
    per_file
}

#[test]
fn a_small_file_costs_the_table_little() {
    let per_file = bytes_per_small_file(20_000);
    eprintln!(
        "inode table: {per_file} bytes per small file (Inode {} bytes, Content {} bytes)",
        std::mem::size_of::<Inode>(),
        std::mem::size_of::<Content>()
    );
    assert!(per_file > 0, "the counting allocator counted nothing");
    assert!(per_file <= 400, "{per_file} bytes per small file");
}
