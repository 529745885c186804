//! The event queue: a binary heap ordered by `(time, sequence number)`.
//!
//! The sequence number is the order of insertion, so events at the same nanosecond run in
//! the order they were scheduled: runs are deterministic without any tie-breaking rule
//! that depends on event contents.
//!
//! Sequence numbers are 32-bit, which keeps an entry with a node id as payload at 16
//! bytes (the heap's time goes into moving entries as it sifts; issue 14 profiled it).
//! Only the order of the numbers of events still queued matters, so when they run out
//! the queued events are renumbered from 0 in their order, once per 4 billion pushes.

use super::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: SimTime,
    seq: u32,
    event: E,
}

impl<E> Entry<E> {
    /// `(time, seq)` as one integer: comparing it is one branch-free 128-bit comparison
    /// where the tuple needed a branch on equal times (the heap's sift-down compares
    /// two children per level).
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.time.0) << 64) | u128::from(self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }

    #[inline]
    fn lt(&self, other: &Self) -> bool {
        other.key() < self.key()
    }

    #[inline]
    fn le(&self, other: &Self) -> bool {
        other.key() <= self.key()
    }

    #[inline]
    fn gt(&self, other: &Self) -> bool {
        other.key() > self.key()
    }

    #[inline]
    fn ge(&self, other: &Self) -> bool {
        other.key() >= self.key()
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so that `BinaryHeap` (a max-heap) pops the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

/// Pending events, earliest first, ties in insertion order.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u32,
    /// The number after which the queued events are renumbered (`u32::MAX`; small in
    /// tests, to exercise it).
    seq_limit: u32,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty queue with room for `capacity` events.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            heap: BinaryHeap::with_capacity(capacity),
            next_seq: 0,
            seq_limit: u32::MAX,
        }
    }

    /// Schedules `event` at `time`, after every event already scheduled at that time.
    pub fn push(&mut self, time: SimTime, event: E) {
        if self.next_seq == self.seq_limit {
            self.renumber();
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
    }

    /// Gives the queued events the numbers `0..len` in their order, so numbering can go
    /// on from `len`.
    #[cold]
    fn renumber(&mut self) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.sort_unstable_by_key(Entry::key);
        for (seq, entry) in entries.iter_mut().enumerate() {
            entry.seq = u32::try_from(seq).expect("fewer than 2^32 events queued");
        }
        self.next_seq = u32::try_from(entries.len()).expect("fewer than 2^32 events queued");
        assert!(
            self.next_seq < self.seq_limit,
            "the queue holds every number"
        );
        self.heap = BinaryHeap::from(entries);
    }

    /// The earliest event (the first scheduled among equal times), removed.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    /// Events scheduled.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pushes `ops` (Some(time): push, None: pop) into a queue renumbering after
    /// `limit` and into a brute-force reference (a list kept sorted by (time, push
    /// index)), and compares every pop.
    fn against_reference(ops: &[Option<u64>], limit: u32) -> Result<(), TestCaseError> {
        let mut q = EventQueue::new();
        q.seq_limit = limit;
        let mut reference: Vec<(u64, usize)> = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Some(t) if q.len() + 1 < limit as usize => {
                    q.push(SimTime(t), i);
                    reference.push((t, i));
                    reference.sort();
                }
                Some(_) => {}
                None => {
                    let got = q.pop().map(|(t, i)| (t.0, i));
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    prop_assert_eq!(got, want);
                }
            }
        }
        while let Some((t, i)) = q.pop() {
            prop_assert_eq!((t.0, i), reference.remove(0));
        }
        prop_assert!(reference.is_empty());
        Ok(())
    }

    proptest! {
        /// Against a brute-force reference: a stable sort of (time, insertion index).
        #[test]
        fn pops_in_time_then_insertion_order(times in prop::collection::vec(0u64..20, 0..200)) {
            let ops: Vec<Option<u64>> = times.into_iter().map(Some).collect();
            against_reference(&ops, u32::MAX)?;
        }

        /// The same with pops in between and sequence numbers that run out every few
        /// pushes, so the queue renumbers many times.
        #[test]
        fn renumbering_keeps_the_order(
            ops in prop::collection::vec(prop::option::weighted(0.7, 0u64..20), 0..300),
            limit in 3u32..40,
        ) {
            against_reference(&ops, limit)?;
        }
    }
}
