//! How the allocator treats the store's large buffers. A backup moves chunks of about 1 MiB
//! between threads (and packs of 16 MiB where the backend cannot take them as they fill);
//! glibc's default raises its mmap threshold each time such a block is freed, after which
//! blocks of that size come from per-thread arenas that keep them resident once freed. Fixing
//! the threshold makes every block above a chunk's size its own mapping, returned to the kernel
//! when freed, and leaves the chunk-sized ones in the arenas (docs/benchmarks/journal.md, "Store
//! memory", has the peak RSS of a first backup before and after).

/// Blocks from this size up are mapped on their own and unmapped when freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const OWN_MAPPING_FROM: libc::c_int = 4 << 20;
/// Free memory an arena keeps before giving it back: room for the chunks in flight, so that
/// they are not faulted in again for every chunk (fixing the threshold above also fixes this
/// one, at glibc's small default).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const ARENA_KEEPS: libc::c_int = 16 << 20;

/// Sets the allocator's threshold for blocks of their own mapping, and its number of arenas to
/// the number of cores (glibc only; elsewhere the allocator's defaults stand). glibc gives up to
/// eight arenas per core to the threads that allocate at once, and each keeps up to
/// [`ARENA_KEEPS`] free: one arena per core lowered a first backup's peak memory for no
/// measurable CPU (docs/benchmarks/journal.md, "Store first backup: memory and compression
/// level").
#[allow(unsafe_code)]
pub fn return_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(2, usize::from).clamp(1, 64);
        // SAFETY: mallopt only changes a tunable of the allocator; called before the store's
        // threads start, and glibc serialises it with allocations anyway.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_MAPPING_FROM);
            libc::mallopt(libc::M_TRIM_THRESHOLD, ARENA_KEEPS);
            libc::mallopt(libc::M_ARENA_MAX, cores as libc::c_int);
        }
    }
}
