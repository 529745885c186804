//! The classic "hold" benchmark of event queues (Jones 1986; ns-3's bench-scheduler):
//! keep `pending` events queued; repeatedly take the earliest and schedule one new event
//! at its time plus a random delay. Run through linkrev's [`EventQueue`] and through a
//! bare `BinaryHeap` of times in the same process, so the ratio is meaningful on a noisy
//! machine.

use super::queue::EventQueue;
use super::time::SimTime;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

/// Delay distribution of newly scheduled events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum HoldDelay {
    /// Uniform integer nanoseconds in 0..=1000.
    #[serde(rename = "uniform_0_1000ns")]
    Uniform1000,
    /// Exponential with mean 500 ns (rounded to whole nanoseconds).
    #[serde(rename = "exponential_mean_500ns")]
    Exponential500,
}

impl HoldDelay {
    #[inline]
    fn sample(self, rng: &mut ChaCha8Rng) -> u64 {
        match self {
            HoldDelay::Uniform1000 => rng.random_range(0..=1000),
            HoldDelay::Exponential500 => {
                let u: f64 = rng.random();
                (-500.0 * (1.0 - u).ln()) as u64
            }
        }
    }
}

/// Events per second of both loops for one delay model.
#[derive(Clone, Debug, Serialize)]
pub struct HoldResult {
    /// The delay distribution of the hold model.
    pub delay: HoldDelay,
    /// Events kept pending.
    pub pending: usize,
    /// Events processed per measurement.
    pub events: u64,
    /// Through linkrev's event queue (best of the repeats).
    pub events_per_s: f64,
    /// Through a bare `BinaryHeap<Reverse<u64>>` loop (best of the repeats).
    pub bare_events_per_s: f64,
    /// `events_per_s / bare_events_per_s`.
    pub ratio: f64,
}

/// The hold loop through [`EventQueue`], with a node id as payload like real events.
/// Returns a checksum so the work cannot be optimised away.
pub fn hold_event_queue(pending: usize, events: u64, delay: HoldDelay, seed: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut queue: EventQueue<u32> = EventQueue::with_capacity(pending + 1);
    for i in 0..pending {
        queue.push(SimTime(delay.sample(&mut rng)), i as u32);
    }
    let mut checksum = 0u64;
    for _ in 0..events {
        let Some((time, node)) = queue.pop() else {
            break;
        };
        checksum = checksum.wrapping_add(time.0 ^ u64::from(node));
        queue.push(SimTime(time.0 + delay.sample(&mut rng)), node);
    }
    checksum
}

/// The same loop on a bare `BinaryHeap` of times (no sequence numbers, no payload).
pub fn hold_bare_heap(pending: usize, events: u64, delay: HoldDelay, seed: u64) -> u64 {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::with_capacity(pending + 1);
    for _ in 0..pending {
        heap.push(Reverse(delay.sample(&mut rng)));
    }
    let mut checksum = 0u64;
    for _ in 0..events {
        let Some(Reverse(time)) = heap.pop() else {
            break;
        };
        checksum = checksum.wrapping_add(time);
        heap.push(Reverse(time + delay.sample(&mut rng)));
    }
    checksum
}

/// Times both loops (best of `repeats`) and reports events per second. The loops take
/// turns, so a stretch of a busy machine slows both rather than one.
pub fn measure(pending: usize, events: u64, delay: HoldDelay, repeats: usize) -> HoldResult {
    let time = |f: &dyn Fn() -> u64| {
        let start = Instant::now();
        std::hint::black_box(f());
        start.elapsed().as_secs_f64()
    };
    let (mut ours, mut bare) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..repeats.max(1) {
        ours = ours.min(time(&|| hold_event_queue(pending, events, delay, 1)));
        bare = bare.min(time(&|| hold_bare_heap(pending, events, delay, 1)));
    }
    let (events_per_s, bare_events_per_s) = (events as f64 / ours, events as f64 / bare);
    HoldResult {
        delay,
        pending,
        events,
        events_per_s,
        bare_events_per_s,
        ratio: events_per_s / bare_events_per_s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_loops_process_the_same_event_times() {
        // Same seed and delays: the bare heap pops exactly the same times in the same order,
        // so the time part of the checksums agrees when payloads are zero.
        for delay in [HoldDelay::Uniform1000, HoldDelay::Exponential500] {
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let mut q: EventQueue<u32> = EventQueue::new();
            let mut h: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
            for _ in 0..100 {
                let d = delay.sample(&mut rng);
                q.push(SimTime(d), 0);
                h.push(Reverse(d));
            }
            for _ in 0..10_000 {
                let (t, _) = q.pop().unwrap();
                let Reverse(u) = h.pop().unwrap();
                assert_eq!(t.0, u);
                let d = delay.sample(&mut rng);
                q.push(SimTime(t.0 + d), 0);
                h.push(Reverse(u + d));
            }
        }
    }
}
