//! Asking the processor to start loading memory before it is read.
//!
//! On networks of a thousand nodes and more, the nodes' states no longer fit in the
//! processor's caches, and each event waits for its node's state to come from memory:
//! a 1,600-node `me-rl` run took 2.6 times as long per event as a 50-node one while
//! cachegrind counted only 1.2 times the instructions per event (and three times the
//! L1 misses). The event loop guesses, from the next queued event, which
//! nodes the next handler will touch (the current event may still schedule an earlier
//! one), and prefetches their state while it handles the current event, so that those
//! loads overlap that work. It does so only on large networks
//! ([`crate::sim::engine::PREFETCH_FROM_NODES`]): on small ones the state is in the
//! caches already and a prefetch is only instructions.
//!
//! A prefetch changes no value and no order of anything, only how long loads take
//! (`tests/prefetch_changes_nothing.rs`). Off x86-64 it does nothing.

use std::collections::VecDeque;

/// At most this many cache lines per call: a node with hundreds of neighbours would
/// otherwise spend more on the requests than the loads they save.
const MAX_LINES: usize = 16;

/// Asks for the cache lines holding the `len` bytes from `start` (at most
/// `MAX_LINES`) to be loaded.
#[inline]
pub fn bytes(start: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        const LINE: usize = 64;
        if len == 0 {
            return;
        }
        // From the start of the first line to the end of the last one: an unaligned
        // range of `len` bytes can span one line more than `len / 64` rounded up.
        let skew = start.addr() % LINE;
        let first = start.wrapping_sub(skew);
        let lines = (skew + len).div_ceil(LINE).min(MAX_LINES);
        for line in 0..lines {
            // SAFETY: a prefetch never faults and reads nothing into the program,
            // whatever the address (`wrapping_*` keeps the arithmetic defined even
            // outside any allocation).
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    first.wrapping_add(line * LINE).cast::<i8>(),
                );
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, len);
}

/// Asks for `value` (its inline bytes, not what it points to) to be loaded.
#[inline]
pub fn value<T>(value: &T) {
    bytes((value as *const T).cast::<u8>(), std::mem::size_of::<T>());
}

/// Asks for the elements of `items` to be loaded.
#[inline]
pub fn slice<T>(items: &[T]) {
    bytes(items.as_ptr().cast::<u8>(), std::mem::size_of_val(items));
}

/// Asks for the elements of `queue` (both parts of its ring buffer) to be loaded.
#[inline]
pub fn deque<T>(queue: &VecDeque<T>) {
    let (front, back) = queue.as_slices();
    slice(front);
    slice(back);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefetch may name any address, even one the program could not read: it must
    /// not fault (the event loop prefetches from a guess, one event ahead). A fault
    /// would end the test process.
    #[test]
    fn prefetches_never_fault() {
        let items = vec![7u64; 100];
        slice(&items);
        value(&items);
        deque(&items.iter().copied().collect());
        slice::<u8>(&[]);
        bytes(std::ptr::null(), 4096);
        bytes(std::ptr::without_provenance(usize::MAX - 63), 128);
    }
}
