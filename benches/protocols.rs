//! Each algorithm with every monitor on, 50 nodes × 900 s of random waypoint in
//! 1500×300 m (λ = 0.1 for mutual exclusion): the same runs as `linkrev bench protocols`.
//! Divide the run's event count (printed by `linkrev run`) by the time for events/s.

use linkrev::mobility::rwp;
use linkrev::params::default_rwp;
use linkrev::run::{Algorithm, simulate};
use linkrev::sim::{CsTime, Duration, NetworkConfig, RunConfig, SimTime, WorkloadConfig};
use linkrev::topology::events::{LinkTimeline, link_timeline};

fn main() {
    divan::main();
}

fn timeline() -> LinkTimeline {
    let trace = rwp::generate(&default_rwp(1)).expect("valid parameters");
    link_timeline(&trace, 250.0)
}

const ALGORITHMS: [Algorithm; 3] = [Algorithm::MeRl, Algorithm::MeRaymond, Algorithm::LeMalpani];

#[divan::bench(args = ALGORITHMS, sample_count = 10)]
fn run_900_s(bencher: divan::Bencher, algorithm: Algorithm) {
    let tl = timeline();
    let config = RunConfig {
        network: NetworkConfig::default(),
        workload: algorithm.is_mutual_exclusion().then_some(WorkloadConfig {
            rate: 0.1,
            cs_time: CsTime::Constant(Duration::from_secs_f64(0.1)),
        }),
        duration: SimTime::from_secs_f64(900.0),
        seed: 1,
    };
    bencher.bench(|| {
        simulate(algorithm, divan::black_box(&tl), config)
            .summary
            .events
    });
}
