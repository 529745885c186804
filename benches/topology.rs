//! Link-event extraction: exact (closed form + sort-and-sweep windows) against a naive
//! O(n²) time-stepped check with Δt = 0.1 s (which is also inexact: it misses contacts
//! shorter than a step and rounds every event time to the step), and the cost of
//! generating and extracting 100- and 1000-node traces.
//!
//! Run with `cargo bench --bench topology`. The book's performance page reports the measured ratio.

use linkrev::mobility::rwp::{self, RwpParams};
use linkrev::mobility::{Area, Trace};
use linkrev::params::default_rwp;
use linkrev::topology::events::link_timeline;

fn main() {
    divan::main();
}

const RANGE: f64 = 250.0;

/// The classic ns-2 study setting (100 nodes in 1500×300 m, 1–20 m/s, pause 30 s); larger
/// node counts scale both sides of the area by sqrt(nodes/100), so the density, and with
/// it the number of neighbours per node, stays the same.
fn params(nodes: usize) -> RwpParams {
    let scale = (nodes as f64 / 100.0).sqrt();
    RwpParams {
        nodes,
        area: Area {
            width: 1500.0 * scale,
            height: 300.0 * scale,
        },
        ..default_rwp(7)
    }
}

/// The naive baseline: sample every pair every `dt` seconds and count state flips.
fn naive_stepped_changes(trace: &Trace, range: f64, dt: f64) -> usize {
    let n = trace.node_count();
    let mut linked = vec![false; n * n];
    let mut positions = Vec::with_capacity(n);
    let mut changes = 0;
    let steps = (trace.duration / dt) as usize;
    for k in 0..=steps {
        let t = k as f64 * dt;
        positions.clear();
        positions.extend(trace.nodes.iter().map(|node| node.position(t)));
        for a in 0..n {
            for b in a + 1..n {
                let (pa, pb) = (positions[a], positions[b]);
                let (dx, dy) = (pa.x - pb.x, pa.y - pb.y);
                let now = dx * dx + dy * dy < range * range;
                let slot = &mut linked[a * n + b];
                if k > 0 && now != *slot {
                    changes += 1;
                }
                *slot = now;
            }
        }
    }
    changes
}

/// 100 nodes × 900 s in two densities: the classic 1500×300 m strip (about 30
/// neighbours per node: nearly every pair meets) and a sparse 3000×3000 m square (about 2).
/// The naive stepping costs the same in both; exact extraction follows the neighbours.
const AREAS: [&str; 2] = ["1500x300", "3000x3000"];

fn trace_in(area: &str) -> Trace {
    let (w, h) = area.split_once('x').expect("WxH");
    let mut p = params(100);
    p.area = Area {
        width: w.parse().expect("width"),
        height: h.parse().expect("height"),
    };
    rwp::generate(&p).expect("valid parameters")
}

#[divan::bench(args = AREAS)]
fn exact_100_nodes(bencher: divan::Bencher, area: &str) {
    let t = trace_in(area);
    bencher.bench(|| link_timeline(divan::black_box(&t), RANGE).events.len());
}

#[divan::bench(args = AREAS)]
fn naive_stepped_100_nodes(bencher: divan::Bencher, area: &str) {
    let t = trace_in(area);
    bencher.bench(|| naive_stepped_changes(divan::black_box(&t), RANGE, 0.1));
}

#[divan::bench(args = [100, 1000], sample_count = 10)]
fn generate_and_extract(bencher: divan::Bencher, nodes: usize) {
    bencher.bench(|| {
        let t = rwp::generate(&params(nodes)).expect("valid parameters");
        link_timeline(&t, RANGE).events.len()
    });
}

#[divan::bench(args = [100, 1000], sample_count = 10)]
fn generate_only(bencher: divan::Bencher, nodes: usize) {
    bencher.bench(|| {
        rwp::generate(&params(nodes))
            .expect("valid parameters")
            .total_legs()
    });
}
