//! k-mutual exclusion by link reversal (`me-krl`) through the simulator: with one token
//! it is RL run for run, with `k` tokens up to `k` nodes share the critical section and
//! never more. (The conformance suite runs its safety and liveness properties with `k`
//! and forwarding drawn from their ranges.)

mod common;

use common::{me_config, timeline};
use linkrev::mobility::Area;
use linkrev::mobility::rwp::{self, PauseDist, RwpParams, SpeedDist, StartMode};
use linkrev::protocol::AlgoParams;
use linkrev::registry::Algorithm;
use linkrev::run::RunOutput;
use linkrev::sim::{RunConfig, SimTime};
use linkrev::topology::events::{LinkTimeline, link_timeline};

fn config(seed: u64, duration: f64, rate: f64, cs_time: f64) -> RunConfig {
    me_config(seed, duration, rate, cs_time, false)
}

fn run(name: &str, params: &[&str], tl: &LinkTimeline, config: RunConfig) -> RunOutput {
    let algorithm = Algorithm::parse(name).unwrap();
    let texts: Vec<String> = params.iter().map(|p| p.to_string()).collect();
    let params = AlgoParams::from_texts(algorithm.params(), &texts).unwrap();
    algorithm.run(&params, tl, config)
}

fn rwp_timeline(nodes: usize, width: f64, seed: u64) -> LinkTimeline {
    let trace = rwp::generate(&RwpParams {
        nodes,
        area: Area {
            width,
            height: 300.0,
        },
        speed: SpeedDist::Uniform {
            min: 1.0,
            max: 20.0,
        },
        pause: PauseDist::Constant(10.0),
        duration: 120.0,
        start: StartMode::Stationary,
        seed,
    })
    .unwrap();
    link_timeline(&trace, 250.0)
}

/// The largest number of nodes in the CS at once, from the request records.
fn most_in_cs_at_once(out: &RunOutput) -> usize {
    let mut edges: Vec<(SimTime, i32)> = Vec::new();
    for r in out.requests() {
        if let Some(entered) = r.entered {
            edges.push((entered, 1));
            if let Some(exited) = r.exited {
                edges.push((exited, -1));
            }
        }
    }
    // Exits before entries at the same instant: a token released and taken at once.
    edges.sort();
    let (mut now, mut most) = (0i32, 0i32);
    for (_, step) in edges {
        now += step;
        most = most.max(now);
    }
    most as usize
}

/// With one token and forwarding off, every rule of `me-krl` is RL's: whole runs agree,
/// summary and per-request records, on mobile networks dense and sparse (partitions,
/// a component without the token reversing).
#[test]
fn with_one_token_krl_is_rl_run_for_run() {
    for (seed, width) in [(1, 1000.0), (2, 1500.0), (3, 3000.0), (4, 800.0)] {
        let tl = rwp_timeline(20, width, seed);
        let cfg = config(seed, 120.0, 0.5, 0.05);
        let rl = run("me-rl", &[], &tl, cfg.clone());
        let krl = run("me-krl", &["k=1", "forwarding=off"], &tl, cfg);
        let (mut a, mut b) = (rl.summary.clone(), krl.summary.clone());
        (a.algorithm, a.wall_time_s) = ("", 0.0);
        (b.algorithm, b.wall_time_s) = ("", 0.0);
        assert!(a.messages > 1000);
        assert_eq!(a, b, "seed {seed}");
        assert_eq!(
            format!("{:?}", rl.requests()),
            format!("{:?}", krl.requests())
        );
    }
}

/// Six nodes all in range, requests far more often than one token can serve: with `k`
/// tokens, `k` nodes are in the CS together at some point, never `k + 1`, and the
/// monitors agree.
#[test]
fn k_tokens_let_k_nodes_share_the_critical_section_and_no_more() {
    let all: Vec<(u32, u32)> = (0..6u32)
        .flat_map(|a| (a + 1..6).map(move |b| (a, b)))
        .collect();
    let tl = timeline(6, 60.0, &all, &[]);
    for k in 1..=4 {
        for forwarding in ["off", "on"] {
            let out = run(
                "me-krl",
                &[&format!("k={k}"), &format!("forwarding={forwarding}")],
                &tl,
                config(9, 60.0, 5.0, 0.2),
            );
            assert_eq!(
                out.summary.safety_violations, 0,
                "{:?}",
                out.summary.first_violation
            );
            assert_eq!(
                most_in_cs_at_once(&out),
                k,
                "k = {k}, forwarding {forwarding}"
            );
        }
    }
}

/// More tokens, shorter waits: at a load one token cannot keep up with, the mean
/// waiting time falls as `k` grows.
#[test]
fn more_tokens_wait_less() {
    let tl = rwp_timeline(20, 1000.0, 5);
    let wait = |k: u32| {
        let out = run(
            "me-krl",
            &[&format!("k={k}")],
            &tl,
            config(5, 120.0, 1.0, 0.05),
        );
        assert_eq!(out.summary.safety_violations, 0);
        out.summary.metrics.real("wait_mean").unwrap()
    };
    let (w1, w2, w4) = (wait(1), wait(2), wait(4));
    assert!(w2 < w1 && w4 < w2, "k = 1, 2, 4: {w1} {w2} {w4}");
}
