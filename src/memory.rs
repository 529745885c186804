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

/// Resident memory, bytes: `(current, peak)` from `/proc/self/status` (`VmRSS`,
/// `VmHWM`); `None` where the kernel does not report them.
pub fn resident() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Resets the peak of [`resident`] to the current resident memory (Linux 4.0 and
/// later: writing `5` to `/proc/self/clear_refs`), so the peak of one phase can be
/// measured; returns whether the kernel took it.
pub fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}
