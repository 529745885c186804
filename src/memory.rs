//! Handing memory the process has freed back to the operating system.
//!
//! glibc's allocator keeps freed memory in each thread's arena for reuse, and work that
//! allocates blocks of very different sizes (runs of different networks, a compaction's
//! row groups) leaves it fragmented: the 15,360 short runs of
//! `analysis/le_validation_sparse.toml` and the compaction of a 10,000-run sweep held
//! far more resident memory than their heaps ever did. `malloc_trim` releases the free
//! pages of every arena. Sweeps call it after each stored chunk and compactions after
//! each file; it costs well under a millisecond. Elsewhere it does nothing.

/// Returns freed memory to the operating system where the allocator allows it.
pub fn return_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only gives free pages back to the kernel; it has no
    // preconditions and may be called from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
