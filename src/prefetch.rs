//! Asking the processor to start loading memory before it is read.
//!
//! On networks of a thousand nodes and more, the nodes' states no longer fit in the
//! processor's caches, and each event waits for its node's state to come from memory:
//! a 1,600-node `me-rl` run took 2.6 times as long per event as a 50-node one while
//! cachegrind counted only 1.2 times the instructions per event (and three times the
//! L1 misses; issue 14). The event loop knows which nodes the next event will touch
//! one event ahead, so it hints their state while it handles the current event, and
//! the loads overlap that work. It does so only on large networks
//! ([`crate::sim::engine::HINTS_FROM_NODES`]): on small ones the state is in the caches
//! already and a hint is only instructions.
//!
//! A hint changes no value and no order of anything, only how long loads take
//! (`tests/hints_change_nothing.rs`). Off x86-64 it does nothing.

/// Hints that the `len` bytes from `start` will be read soon.
#[inline]
pub fn bytes(start: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        const LINE: usize = 64;
        let mut offset = 0;
        while offset < len {
            // SAFETY: a prefetch is a hint: it never faults and reads nothing into the
            // program, whatever the address (`wrapping_add` keeps the pointer arithmetic
            // defined even past the end).
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    start.wrapping_add(offset).cast::<i8>(),
                );
            }
            offset += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (start, len);
}

/// Hints that `value` (its inline bytes, not what it points to) will be read soon.
#[inline]
pub fn value<T>(value: &T) {
    bytes((value as *const T).cast::<u8>(), std::mem::size_of::<T>());
}

/// Hints that the elements of `items` will be read soon.
#[inline]
pub fn slice<T>(items: &[T]) {
    bytes(items.as_ptr().cast::<u8>(), std::mem::size_of_val(items));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hint may name any address, even one the program could not read: it must not
    /// fault (the event loop hints one event ahead, from a possibly stale guess).
    #[test]
    fn hints_never_fault_and_change_nothing() {
        let items = vec![7u64; 100];
        slice(&items);
        value(&items);
        slice::<u8>(&[]);
        bytes(std::ptr::null(), 4096);
        bytes(std::ptr::without_provenance(usize::MAX - 63), 128);
        assert_eq!(items, vec![7u64; 100]);
    }
}
