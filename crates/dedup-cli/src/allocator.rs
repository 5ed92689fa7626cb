//! How glibc's allocator treats each job's buffers (glibc only; elsewhere its defaults stand).
//!
//! Two habits of glibc cost resident memory here. It gives up to eight arenas per core to
//! threads that allocate at once, and each arena keeps what its threads freed, even after the
//! threads are gone (the finder starts and ends its walk and read threads stage by stage). And
//! it raises its mmap threshold each time a large block is freed, after which blocks of that
//! size come from the arenas and stay resident once freed. So each job caps the arenas at one
//! per core and fixes the threshold at a size of its own. docs/BENCHMARKS.md (find, peak RSS)
//! and docs/benchmarks/journal.md ("Store memory") have the figures.

/// One job's allocator settings.
pub struct Tuning {
    /// Blocks from this size up are mapped on their own and unmapped when freed.
    own_mapping_from: usize,
    /// Free memory an arena keeps before giving it back; `None`: what fixing the threshold
    /// leaves (glibc's small default).
    arena_keeps: Option<usize>,
}

/// The finder: its exact stage's large read buffers are pooled (dedup_scan::read::pool), so
/// every block from 256 KiB up can go back to the kernel when freed.
pub const FIND: Tuning = Tuning { own_mapping_from: 256 << 10, arena_keeps: None };

/// The store: a backup moves chunks of about 1 MiB between threads (and packs of 16 MiB where
/// the backend cannot take them as they fill). Blocks above a chunk's size get their own
/// mapping; each arena keeps room for the chunks in flight, so that they are not faulted in
/// again for every chunk.
pub const STORE: Tuning = Tuning { own_mapping_from: 4 << 20, arena_keeps: Some(16 << 20) };

/// Applies `tuning`; called before the job's threads start.
#[allow(unsafe_code)]
pub fn tune(tuning: &Tuning) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(2, usize::from).clamp(2, 64);
        // SAFETY: mallopt only changes a tunable of the allocator; glibc serialises it with
        // allocations.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, tuning.own_mapping_from as libc::c_int);
            if let Some(keeps) = tuning.arena_keeps {
                libc::mallopt(libc::M_TRIM_THRESHOLD, keeps as libc::c_int);
            }
            libc::mallopt(libc::M_ARENA_MAX, cores as libc::c_int);
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = tuning;
}
