//! Asking the kernel for ranges of many files in one system call, so that the block layer can
//! merge the reads of files that lie one after another on the disk into one request.
//!
//! A `posix_fadvise(WILLNEED)` per file sends each file's read to the device on its own: a tree
//! of small files read in the order of the disk becomes one small request per file, each paying
//! the device's cost per command (and on the modelled disk of bench/hdd, the host's path to it),
//! although the files lie back to back. `madvise(MADV_WILLNEED)` over a range of memory asks for
//! every file mapped there under one block plug: reads that continue one another are merged
//! before they reach the device (on the modelled disk, 20,000 small files of the linux source
//! took 512 requests instead of 20,000). The files are mapped side by side, read-only, only for
//! that call; nothing ever touches the mapped pages, so no page fault (and no `SIGBUS` for a file
//! that shrank) can happen, and what is asked for only warms the page cache.
//!
//! Soundness: every mapping is made by this module with `MAP_FIXED_NOREPLACE`, which never
//! replaces an existing mapping (the kernel refuses with `EEXIST` instead), at an address found
//! free a moment before; a kernel older than the flag treats the address as a hint, and the
//! address it returns is used. Only the mappings made here, at the addresses and lengths the
//! kernel returned, are advised and unmapped. A file that cannot be mapped is left to the
//! caller, which asks for it with `posix_fadvise`.
#![allow(unsafe_code)]

use std::fs::File;
use std::os::fd::AsRawFd;

/// One range of a file to read into the page cache.
#[derive(Debug)]
pub struct Wanted {
    /// The file, open for reading.
    pub file: File,
    /// Where the range starts in the file.
    pub offset: u64,
    /// Its length in bytes.
    pub len: u64,
    /// The most the device reads for one hint (`crate::layout::read_ahead_piece`): a longer
    /// range is asked for on its own, a piece at a time (`crate::read::ahead::will_need`).
    pub piece: u64,
}

/// The page size, for aligning file offsets of mappings.
fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

/// The file offset and length of the mapping that covers `[offset, offset + len)`.
fn mapping_of(offset: u64, len: u64, page: u64) -> (u64, u64) {
    let start = offset / page * page;
    let end = offset.saturating_add(len).div_ceil(page).saturating_mul(page);
    (start, end - start)
}

/// Ask for every range of `wanted` into the page cache in as few system calls as the mappings
/// allow; returns, for each, whether it was asked for (the others, the caller asks for itself).
pub fn will_need_together(wanted: &[Wanted]) -> Vec<bool> {
    let page = page_size();
    let spans: Vec<(u64, u64)> = wanted.iter().map(|w| mapping_of(w.offset, w.len, page)).collect();
    let mut asked = vec![false; wanted.len()];
    let total: u64 = spans.iter().map(|&(_, len)| len).sum();
    let Ok(total_len) = usize::try_from(total) else { return asked };
    if total_len == 0 {
        return asked;
    }
    // A free stretch of address space as long as all the mappings: found by mapping it and
    // letting it go, then filled file by file without ever replacing anything.
    // SAFETY: an anonymous, inaccessible mapping at an address the kernel chooses affects no
    // existing memory; it is unmapped at once with the address and length it was given.
    let area = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            total_len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if area == libc::MAP_FAILED {
        return asked;
    }
    // SAFETY: `area` is the mapping of `total_len` bytes made just above, used by nothing.
    unsafe { libc::munmap(area, total_len) };

    let mut maps: Vec<(usize, usize)> = Vec::with_capacity(wanted.len());
    let mut runs: Vec<(usize, usize)> = Vec::new();
    let mut next = area as usize;
    for (n, (w, &(start, len))) in wanted.iter().zip(&spans).enumerate() {
        let (Ok(len), Ok(start)) = (usize::try_from(len), libc::off_t::try_from(start)) else {
            continue;
        };
        if len == 0 {
            continue;
        }
        // SAFETY: MAP_FIXED_NOREPLACE never replaces a mapping: where `next` is taken the call
        // fails. The new mapping is read-only, shared and never accessed; it holds its own
        // reference to the file, so `w.file` may close afterwards.
        let at = unsafe {
            libc::mmap(
                next as *mut libc::c_void,
                len,
                libc::PROT_READ,
                libc::MAP_SHARED | libc::MAP_FIXED_NOREPLACE,
                w.file.as_raw_fd(),
                start,
            )
        };
        if at == libc::MAP_FAILED {
            continue;
        }
        let at = at as usize;
        maps.push((at, len));
        match runs.last_mut() {
            Some((_, end)) if *end == at => *end = at + len,
            _ => runs.push((at, at + len)),
        }
        next = at + len;
        asked[n] = true;
    }
    for &(start, end) in &runs {
        // SAFETY: `[start, end)` is covered by mappings made above and still held. WILLNEED
        // only starts reads into the page cache; it changes no memory of this process.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_WILLNEED) };
    }
    for &(at, len) in &maps {
        // SAFETY: each is a mapping made above, at the address and length the kernel returned,
        // unmapped once; nothing refers to its memory.
        unsafe { libc::munmap(at as *mut libc::c_void, len) };
    }
    asked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_covers_whole_pages_around_the_range() {
        assert_eq!(mapping_of(0, 1, 4096), (0, 4096));
        assert_eq!(mapping_of(0, 4096, 4096), (0, 4096));
        assert_eq!(mapping_of(5000, 4096, 4096), (4096, 8192));
        assert_eq!(mapping_of(8192, 0, 4096), (8192, 0));
    }

    /// Files of several sizes, an empty one and a range past the end: each asked for (or, the
    /// empty range, left to the caller), every file's bytes unchanged, and nothing of this
    /// process's memory touched (its own buffer keeps its bytes).
    #[test]
    fn many_files_are_asked_for_at_once_and_nothing_changes() {
        let dir = tempfile::tempdir().unwrap();
        let mine = vec![0x5a_u8; 1 << 20];
        let mut wanted = Vec::new();
        let mut contents = Vec::new();
        for (n, len) in [1usize, 4095, 4096, 70_000, 300_000, 0].into_iter().enumerate() {
            let path = dir.path().join(n.to_string());
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + n) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            contents.push((path.clone(), bytes));
            let file = File::open(&path).unwrap();
            wanted.push(Wanted { file, offset: 0, len: len as u64, piece: 128 << 10 });
        }
        let past_end = File::open(&contents[1].0).unwrap();
        wanted.push(Wanted { file: past_end, offset: 1 << 20, len: 4096, piece: 128 << 10 });
        let asked = will_need_together(&wanted);
        assert_eq!(asked, [true, true, true, true, true, false, true]);
        for (path, bytes) in &contents {
            assert_eq!(&std::fs::read(path).unwrap(), bytes);
        }
        assert!(mine.iter().all(|&b| b == 0x5a));
    }

    #[test]
    fn nothing_to_ask_for_asks_nothing() {
        assert!(will_need_together(&[]).is_empty());
    }
}
