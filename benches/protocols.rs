//! Every registered algorithm with every monitor on, 50 nodes × 900 s of random waypoint in
//! 1500×300 m (λ = 0.1 for mutual exclusion): the same runs as `linkrev bench protocols`.
//! Divide the run's event count (printed by `linkrev run`) by the time for events/s.

use linkrev::mobility::rwp;
use linkrev::params::{bench_config, default_rwp};
use linkrev::registry::Algorithm;
use linkrev::registry::simulate;
use linkrev::topology::events::{LinkTimeline, link_timeline};

fn main() {
    divan::main();
}

fn timeline() -> LinkTimeline {
    let trace = rwp::generate(&default_rwp(1)).expect("valid parameters");
    link_timeline(&trace, 250.0)
}

// Every registered algorithm, by name (divan shows the argument).
#[divan::bench(args = Algorithm::names(), sample_count = 10)]
fn run_900_s(bencher: divan::Bencher, name: &str) {
    let algorithm = Algorithm::parse(name).expect("a registered name");
    let tl = timeline();
    let config = bench_config(algorithm, 0.1, 900.0, 1);
    bencher.bench(|| {
        simulate(algorithm, divan::black_box(&tl), config.clone())
            .summary
            .events
    });
}
