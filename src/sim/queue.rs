//! The event queue: pending events ordered by `(time, sequence number)`.
//!
//! The sequence number is the order of insertion, so events at the same nanosecond run in
//! the order they were scheduled: runs are deterministic without any tie-breaking rule
//! that depends on event contents.
//!
//! Where the time goes (`perf` on the hold model of `linkrev bench engine`):
//! nearly all of it in the heap's sift-down, which moves entries and compares keys at
//! every level. Hence two choices, each measured against a bare `BinaryHeap<u64>` in the
//! same process:
//!
//! - **One 64-bit key per entry.** An event's time (nanoseconds) and its sequence number
//!   are packed as `time << SEQ_BITS | seq`, so a comparison is one `u64` comparison and
//!   an entry with a node id as payload is 16 bytes. Only the order of the numbers of
//!   queued events matters, so when the numbers run out the queued events are renumbered
//!   from 0 in their order (once per 4 million pushes).
//! - **A 4-ary heap** ([`dary_heap`]): half the levels of a binary heap, and the four
//!   children compared at a level lie side by side in memory.
//!
//! Packing leaves `64 − SEQ_BITS` bits of time: events up to 2^42 ns (73 minutes) into
//! a run. Events later than that, and [`SimTime::NEVER`], go to a second heap with full
//! 128-bit keys; every event of the first heap is earlier than every event of the second,
//! so the second is only consulted when the first is empty. A run with more than 2^21
//! events queued at once moves everything to the second heap for good: correct, at the
//! speed of the full keys.

use super::time::SimTime;
use dary_heap::QuaternaryHeap;
use std::cmp::Ordering;

/// Bits of a packed key that hold the sequence number.
const SEQ_BITS: u32 = 22;

/// Implements a reversed order by `$key` (the heaps are max-heaps: the earliest key pops
/// first), with the comparison operators written out so that a sift compares one integer.
macro_rules! earliest_first_by {
    ($entry:ident, $key:ident) => {
        impl<E> PartialEq for $entry<E> {
            fn eq(&self, other: &Self) -> bool {
                self.$key() == other.$key()
            }
        }

        impl<E> Eq for $entry<E> {}

        impl<E> PartialOrd for $entry<E> {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }

            #[inline]
            fn lt(&self, other: &Self) -> bool {
                other.$key() < self.$key()
            }

            #[inline]
            fn le(&self, other: &Self) -> bool {
                other.$key() <= self.$key()
            }

            #[inline]
            fn gt(&self, other: &Self) -> bool {
                other.$key() > self.$key()
            }

            #[inline]
            fn ge(&self, other: &Self) -> bool {
                other.$key() >= self.$key()
            }
        }

        impl<E> Ord for $entry<E> {
            #[inline]
            fn cmp(&self, other: &Self) -> Ordering {
                other.$key().cmp(&self.$key())
            }
        }
    };
}

/// An event within the packed time range: `key = time << SEQ_BITS | seq`.
struct Near<E> {
    key: u64,
    event: E,
}

impl<E> Near<E> {
    #[inline]
    fn key(&self) -> u64 {
        self.key
    }

    #[inline]
    fn time(&self) -> SimTime {
        SimTime(self.key >> SEQ_BITS)
    }
}

earliest_first_by!(Near, key);

/// An event beyond the packed time range (or of a queue that gave up packing).
struct Far<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> Far<E> {
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.time.0) << 64) | u128::from(self.seq)
    }
}

earliest_first_by!(Far, key);

/// Pending events, earliest first, ties in insertion order.
pub struct EventQueue<E> {
    /// Events at times below `near_until`, with packed keys.
    near: QuaternaryHeap<Near<E>>,
    /// Events at `near_until` or later, each later than every event in `near`.
    far: QuaternaryHeap<Far<E>>,
    /// Sequence number of the next event pushed into `near`.
    next_seq: u64,
    /// Numbers below it fit in a packed key (`2^SEQ_BITS`; small in tests, to exercise
    /// renumbering).
    seq_limit: u64,
    /// Times below it go into `near` (`2^(64 − SEQ_BITS)`; 0 once packing was given up).
    near_until: u64,
    /// Sequence number of the next event pushed into `far`.
    far_seq: u64,
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
        Self::with_limits(capacity, 1 << SEQ_BITS, 1 << (64 - SEQ_BITS))
    }

    fn with_limits(capacity: usize, seq_limit: u64, near_until: u64) -> Self {
        Self {
            near: QuaternaryHeap::with_capacity(capacity),
            far: QuaternaryHeap::new(),
            next_seq: 0,
            seq_limit,
            near_until,
            far_seq: 0,
        }
    }

    /// Schedules `event` at `time`, after every event already scheduled at that time.
    #[inline]
    pub fn push(&mut self, time: SimTime, event: E) {
        if time.0 >= self.near_until {
            let seq = self.far_seq;
            self.far_seq += 1;
            self.far.push(Far { time, seq, event });
            return;
        }
        if self.next_seq == self.seq_limit {
            self.renumber();
            if time.0 >= self.near_until {
                // Packing was given up: every event goes to `far` now.
                return self.push(time, event);
            }
        }
        let key = (time.0 << SEQ_BITS) | self.next_seq;
        self.next_seq += 1;
        self.near.push(Near { key, event });
    }

    /// Gives the events in `near` the numbers `0..len` in their order, so numbering can
    /// go on from `len`; if they would use up more than half the numbers, moves them all
    /// to `far` instead and stops packing.
    #[cold]
    fn renumber(&mut self) {
        let mut entries = std::mem::take(&mut self.near).into_vec();
        entries.sort_unstable_by_key(Near::key);
        let count = entries.len() as u64;
        if count > self.seq_limit / 2 {
            // Times in `near` are below `near_until` and so before every time in `far`;
            // their order among themselves is kept by numbering them in order.
            for entry in entries {
                let seq = self.far_seq;
                self.far_seq += 1;
                let time = entry.time();
                self.far.push(Far {
                    time,
                    seq,
                    event: entry.event,
                });
            }
            self.near_until = 0;
            self.next_seq = 0;
            return;
        }
        let time_mask = !((1u64 << SEQ_BITS) - 1);
        for (seq, entry) in (0u64..).zip(entries.iter_mut()) {
            entry.key = (entry.key & time_mask) | seq;
        }
        self.next_seq = count;
        // A sorted array is already a heap.
        self.near = QuaternaryHeap::from(entries);
    }

    /// The earliest event (the first scheduled among equal times), removed.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        match self.near.pop() {
            Some(entry) => Some((entry.time(), entry.event)),
            None => self.far.pop().map(|entry| (entry.time, entry.event)),
        }
    }

    /// The earliest event and its time, left in the queue.
    #[inline]
    fn first(&self) -> Option<(SimTime, &E)> {
        match self.near.peek() {
            Some(entry) => Some((entry.time(), &entry.event)),
            None => self.far.peek().map(|entry| (entry.time, &entry.event)),
        }
    }

    /// The time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.first().map(|(time, _)| time)
    }

    /// The earliest event, left in the queue.
    #[inline]
    pub fn peek(&self) -> Option<&E> {
        self.first().map(|(_, event)| event)
    }

    /// Events scheduled.
    pub fn len(&self) -> usize {
        self.near.len() + self.far.len()
    }

    /// Whether nothing is scheduled.
    pub fn is_empty(&self) -> bool {
        self.near.is_empty() && self.far.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Pushes `ops` (Some(time): push, None: pop) into `q` and into a brute-force
    /// reference (a list kept sorted by (time, push index)), and compares every pop and
    /// every peek.
    fn against_reference(
        mut q: EventQueue<usize>,
        ops: &[Option<u64>],
    ) -> Result<(), TestCaseError> {
        let mut reference: Vec<(u64, usize)> = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Some(t) => {
                    q.push(SimTime(t), i);
                    reference.push((t, i));
                    reference.sort();
                }
                None => {
                    let got = q.pop().map(|(t, i)| (t.0, i));
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    prop_assert_eq!(got, want);
                }
            }
            prop_assert_eq!(q.len(), reference.len());
            prop_assert_eq!(q.peek_time().map(|t| t.0), reference.first().map(|r| r.0));
            prop_assert_eq!(q.peek().copied(), reference.first().map(|r| r.1));
        }
        while let Some((t, i)) = q.pop() {
            prop_assert_eq!((t.0, i), reference.remove(0));
        }
        prop_assert!(reference.is_empty());
        prop_assert!(q.is_empty());
        Ok(())
    }

    #[test]
    fn times_beyond_the_packed_range_and_never_pop_last_in_order() {
        let mut q = EventQueue::new();
        let late = SimTime(1 << (64 - SEQ_BITS));
        q.push(SimTime::NEVER, 0);
        q.push(late, 1);
        q.push(SimTime(5), 2);
        q.push(late, 3);
        q.push(SimTime(late.0 - 1), 4);
        let order: Vec<usize> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, [2, 4, 1, 3, 0]);
    }

    proptest! {
        /// Against a brute-force reference: a stable sort of (time, insertion index).
        #[test]
        fn pops_in_time_then_insertion_order(times in prop::collection::vec(0u64..20, 0..200)) {
            let ops: Vec<Option<u64>> = times.into_iter().map(Some).collect();
            against_reference(EventQueue::new(), &ops)?;
        }

        /// The same with pops in between, sequence numbers that run out every few
        /// pushes (so the queue renumbers, or gives up packing when more than half the
        /// numbers are queued), and a packed range that ends within the times pushed
        /// (so the second heap takes the later ones).
        #[test]
        fn renumbering_and_the_second_heap_keep_the_order(
            ops in prop::collection::vec(prop::option::weighted(0.7, 0u64..20), 0..300),
            seq_limit in 3u64..40,
            near_until in 0u64..25,
        ) {
            against_reference(EventQueue::with_limits(0, seq_limit, near_until), &ops)?;
        }
    }
}
