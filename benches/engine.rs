//! The hold model through linkrev's event queue and through a bare `BinaryHeap` loop
//! (the same code `linkrev bench engine` runs): 10,000 pending events, each pop schedules
//! one new event at now + a delay uniform in 0–1000 ns or exponential with mean 500 ns.

use linkrev::sim::hold::{HoldDelay, hold_bare_heap, hold_event_queue};

fn main() {
    divan::main();
}

const PENDING: usize = 10_000;
const EVENTS: u64 = 1_000_000;
const DELAYS: [HoldDelay; 2] = [HoldDelay::Uniform1000, HoldDelay::Exponential500];

#[divan::bench(args = DELAYS, sample_count = 20)]
fn event_queue(delay: HoldDelay) -> u64 {
    hold_event_queue(PENDING, divan::black_box(EVENTS), delay, 1)
}

#[divan::bench(args = DELAYS, sample_count = 20)]
fn bare_binary_heap(delay: HoldDelay) -> u64 {
    hold_bare_heap(PENDING, divan::black_box(EVENTS), delay, 1)
}
