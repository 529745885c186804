//! Every registered algorithm with every monitor on as the network grows: 50, 200, 800
//! and 1,600 nodes at the density of 50 nodes in 1500 m × 300 m in square areas, 300 s
//! (λ = 0.1 for mutual exclusion): the same runs as `linkrev bench scale`. Divide a run's event count
//! (`linkrev bench scale` prints it) by its time for events per second; the question is
//! whether the time per event grows with the network.

use linkrev::mobility::rwp;
use linkrev::params::{AreaShape, bench_config, scale_rwp};
use linkrev::registry::Algorithm;
use linkrev::registry::simulate;
use linkrev::sim::seeds::{Purpose, derive};
use linkrev::topology::events::{LinkTimeline, link_timeline};

fn main() {
    divan::main();
}

fn timeline(nodes: usize) -> LinkTimeline {
    let params = scale_rwp(
        nodes,
        AreaShape::Square,
        300.0,
        derive(3, Purpose::Mobility),
    );
    let trace = rwp::generate(&params).expect("valid parameters");
    link_timeline(&trace, 250.0)
}

// Every registered algorithm (by name) at every size (the const parameter).
#[divan::bench(consts = [50, 200, 800, 1600], args = Algorithm::names(), sample_count = 3)]
fn nodes<const N: usize>(bencher: divan::Bencher, name: &str) {
    let algorithm = Algorithm::parse(name).expect("a registered name");
    let tl = timeline(N);
    let config = bench_config(algorithm, 0.1, 300.0, 3);
    bencher.bench(|| {
        simulate(algorithm, divan::black_box(&tl), config.clone())
            .summary
            .events
    });
}
