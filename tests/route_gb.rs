//! Gafni–Bertsekas full and partial link reversal (`gb-full`, `gb-partial`) against a
//! brute-force simulation of the reversal rules written here, independently of the
//! protocol code: heights as plain tuples, every sink reversing in synchronous rounds
//! or one at a time in random order. Checked: the final heights and each node's number
//! of reversal steps are the same for every schedule (rounds, random sequential
//! orders, the protocol's messages delivered in random orders, the simulator), and full
//! reversal's work on the chain of Busch, Surapaneni and Tirthapura grows as the square
//! of the number of bad nodes.

mod common;

use common::{me_config, timeline};
use linkrev::NodeId;
use linkrev::protocol::route_gb::{Full, GbHeight, GbNode, Partial, Reversal, RouteConfig};
use linkrev::protocol::testkit::Harness;
use linkrev::protocol::{AlgoParams, HeightView};
use linkrev::registry::Algorithm;
use linkrev::sim::{DelayModel, Duration, RunConfig};
use linkrev::topology::events::LinkChange;
use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Which rule the brute force applies, re-stated from the papers.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Rule {
    Full,
    Partial,
}

/// A height as the brute force keeps it: (a, b, id), compared lexicographically.
type H = (i64, i64, u32);

fn adjacency(n: usize, links: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in links {
        adj[a as usize].push(b);
        adj[b as usize].push(a);
    }
    adj
}

/// Hop distances from `dest` (u32::MAX where unreachable), by repeated relaxation.
fn distances(adj: &[Vec<u32>], dest: u32) -> Vec<u32> {
    let mut d = vec![u32::MAX; adj.len()];
    d[dest as usize] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for u in 0..adj.len() {
            for &v in &adj[u] {
                if d[u] != u32::MAX && d[u] + 1 < d[v as usize] {
                    d[v as usize] = d[u] + 1;
                    changed = true;
                }
            }
        }
    }
    d
}

fn initial(rule: Rule, adj: &[Vec<u32>], dest: u32) -> Vec<H> {
    distances(adj, dest)
        .iter()
        .enumerate()
        .map(|(i, &d)| match rule {
            Rule::Full => (i64::from(d), 0, i as u32),
            Rule::Partial => (0, i64::from(d), i as u32),
        })
        .collect()
}

fn sinks(adj: &[Vec<u32>], h: &[H], dest: u32) -> Vec<usize> {
    (0..adj.len())
        .filter(|&i| {
            i != dest as usize && !adj[i].is_empty() && adj[i].iter().all(|&j| h[j as usize] > h[i])
        })
        .collect()
}

/// GB's rules: full `a := max a_j + 1`; partial `a := min a_j + 1`, `b := min{b_j :
/// a_j = a} − 1` if there is such a neighbour.
fn reversed(rule: Rule, adj: &[Vec<u32>], h: &[H], i: usize) -> H {
    let nb: Vec<H> = adj[i].iter().map(|&j| h[j as usize]).collect();
    match rule {
        Rule::Full => (nb.iter().map(|x| x.0).max().unwrap() + 1, 0, h[i].2),
        Rule::Partial => {
            let a = nb.iter().map(|x| x.0).min().unwrap() + 1;
            let b = nb
                .iter()
                .filter(|x| x.0 == a)
                .map(|x| x.1)
                .min()
                .map_or(h[i].1, |m| m - 1);
            (a, b, h[i].2)
        }
    }
}

/// Synchronous rounds: every sink reverses at once, from the heights at the start of
/// the round (sinks are never neighbours, so no sink reads another's new height).
/// Returns the final heights and each node's steps.
fn rounds(rule: Rule, adj: &[Vec<u32>], mut h: Vec<H>, dest: u32) -> (Vec<H>, Vec<u64>) {
    let mut steps = vec![0u64; adj.len()];
    loop {
        let now = sinks(adj, &h, dest);
        if now.is_empty() {
            return (h, steps);
        }
        let new: Vec<(usize, H)> = now
            .iter()
            .map(|&i| (i, reversed(rule, adj, &h, i)))
            .collect();
        for (i, x) in new {
            h[i] = x;
            steps[i] += 1;
        }
    }
}

/// One sink at a time, picked at random.
fn sequential(
    rule: Rule,
    adj: &[Vec<u32>],
    mut h: Vec<H>,
    dest: u32,
    rng: &mut ChaCha8Rng,
) -> (Vec<H>, Vec<u64>) {
    let mut steps = vec![0u64; adj.len()];
    loop {
        let now = sinks(adj, &h, dest);
        if now.is_empty() {
            return (h, steps);
        }
        let i = now[rng.random_range(0..now.len())];
        h[i] = reversed(rule, adj, &h, i);
        steps[i] += 1;
    }
}

fn as_tuple(h: GbHeight) -> H {
    (h.a, h.b, h.id)
}

/// The protocol driven by hand: `dest`–`cut` fails, then messages are delivered in a
/// random order until none is left. Returns the final heights and each node's steps.
fn protocol<R: Reversal>(
    n: usize,
    links: &[(u32, u32)],
    dest: u32,
    cut: u32,
    rng: &mut ChaCha8Rng,
) -> (Vec<H>, Vec<u64>) {
    let mut h = Harness::<GbNode<R>>::configured(&RouteConfig { dest }, n, links);
    assert_eq!(
        h.in_flight_count(),
        0,
        "a destination-oriented start is quiet"
    );
    let heights = |h: &Harness<GbNode<R>>| -> Vec<H> {
        h.nodes.iter().map(|p| as_tuple(p.height())).collect()
    };
    let mut steps = vec![0u64; n];
    let mut before = heights(&h);
    h.link_down(dest, cut);
    for _ in 0..100_000 {
        let now = heights(&h);
        for i in 0..n {
            steps[i] += u64::from(now[i] != before[i]);
        }
        before = now;
        let busy: Vec<(u32, u32)> = (0..n as u32)
            .flat_map(|a| (0..n as u32).map(move |b| (a, b)))
            .filter(|&(a, b)| !h.pending(a, b).is_empty())
            .collect();
        if busy.is_empty() {
            return (before, steps);
        }
        let (a, b) = busy[rng.random_range(0..busy.len())];
        h.deliver(a, b);
    }
    panic!("still delivering after 100,000 messages");
}

/// A random connected graph on `n` nodes: a random spanning tree plus extra links.
fn connected_graph() -> impl Strategy<Value = (usize, Vec<(u32, u32)>, u64)> {
    (3usize..12, any::<u64>()).prop_map(|(n, seed)| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut links = std::collections::BTreeSet::new();
        for i in 1..n as u32 {
            let parent = rng.random_range(0..i);
            links.insert((parent, i));
        }
        for _ in 0..rng.random_range(0..n) {
            let a = rng.random_range(0..n as u32);
            let b = rng.random_range(0..n as u32);
            if a != b {
                links.insert((a.min(b), a.max(b)));
            }
        }
        // Node 0 (the destination of half the cases) on a triangle, so one of its
        // links can fail without disconnecting the graph.
        let far = rng.random_range(2..n as u32);
        let near = rng.random_range(1..far);
        links.extend([(0, near), (near, far), (0, far)]);
        (n, links.into_iter().collect(), seed)
    })
}

/// A link of `dest` whose failure keeps the graph connected, if there is one.
fn removable(n: usize, links: &[(u32, u32)], dest: u32) -> Option<u32> {
    links
        .iter()
        .filter(|&&(a, b)| a == dest || b == dest)
        .map(|&(a, b)| if a == dest { b } else { a })
        .find(|&other| {
            let rest: Vec<(u32, u32)> = links
                .iter()
                .copied()
                .filter(|&(a, b)| (a.min(b), a.max(b)) != (dest.min(other), dest.max(other)))
                .collect();
            distances(&adjacency(n, &rest), dest)
                .iter()
                .all(|&d| d != u32::MAX)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// On a static graph where a link of the destination fails: synchronous rounds,
    /// random sequential orders and the protocol with its messages delivered in random
    /// orders reach the same heights with the same number of steps at every node, for
    /// both rules.
    #[test]
    fn every_schedule_takes_the_same_steps_as_the_brute_force((n, links, seed) in connected_graph()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let dest = if seed % 2 == 0 { 0 } else { rng.random_range(0..n as u32) };
        let Some(cut) = removable(n, &links, dest) else {
            prop_assert!(dest != 0, "node 0 is on a cycle");
            return Ok(());
        };
        let before = adjacency(n, &links);
        let after_links: Vec<(u32, u32)> = links
            .iter()
            .copied()
            .filter(|&(a, b)| (a.min(b), a.max(b)) != (dest.min(cut), dest.max(cut)))
            .collect();
        let after = adjacency(n, &after_links);
        for rule in [Rule::Full, Rule::Partial] {
            let start = initial(rule, &before, dest);
            let (final_h, steps) = rounds(rule, &after, start.clone(), dest);
            prop_assert!(sinks(&after, &final_h, dest).is_empty());
            for _ in 0..3 {
                let (h, s) = sequential(rule, &after, start.clone(), dest, &mut rng);
                prop_assert_eq!(&h, &final_h, "{:?}: sequential vs rounds", rule);
                prop_assert_eq!(&s, &steps, "{:?}: sequential vs rounds", rule);
            }
            for _ in 0..3 {
                let (h, s) = match rule {
                    Rule::Full => protocol::<Full>(n, &links, dest, cut, &mut rng),
                    Rule::Partial => protocol::<Partial>(n, &links, dest, cut, &mut rng),
                };
                prop_assert_eq!(&h, &final_h, "{:?}: protocol vs brute force", rule);
                prop_assert_eq!(&s, &steps, "{:?}: protocol vs brute force", rule);
            }
        }
    }
}

/// Routes need no CS workload.
fn config(duration: f64) -> RunConfig {
    RunConfig {
        workload: None,
        ..me_config(3, duration, 1.0, 0.1, true)
    }
}

/// The chain of Busch, Surapaneni and Tirthapura: the destination 0 reaches `k` bad
/// nodes b1 … bk directly through b1, and their far end bk through `k + 1` good nodes.
/// Initially every bad node routes towards b1; when 0–b1 fails, the only way out is
/// through bk. Returns (nodes, links).
fn bad_chain(k: u32) -> (usize, Vec<(u32, u32)>) {
    let good: Vec<u32> = (1..=k + 1).collect();
    let bad: Vec<u32> = (k + 2..=2 * k + 1).collect();
    let mut links = vec![(0, good[0]), (0, bad[0])];
    links.extend(good.windows(2).map(|w| (w[0], w[1])));
    links.extend(bad.windows(2).map(|w| (w[0], w[1])));
    links.push((*good.last().unwrap(), *bad.last().unwrap()));
    ((2 * k + 2) as usize, links)
}

/// Reversal steps after 0–b1 fails, through the simulator (`Algorithm::run`).
fn simulated_work(name: &str, k: u32) -> u64 {
    let (n, links) = bad_chain(k);
    let b1 = k + 2;
    let tl = timeline(n, 120.0, &links, &[(1.0, 0, b1, LinkChange::Down)]);
    let algorithm = Algorithm::parse(name).unwrap();
    let params = AlgoParams::defaults(algorithm.params());
    let out = algorithm.run(&params, &tl, config(120.0));
    assert_eq!(out.summary.safety_violations, 0);
    let change = &out.route_changes()[0];
    assert!(
        change.change.converged && !change.partitioned,
        "{name}, k = {k}"
    );
    change.reversals
}

fn exponent(points: &[(f64, f64)]) -> f64 {
    let logs: Vec<(f64, f64)> = points.iter().map(|&(x, y)| (x.ln(), y.ln())).collect();
    let mx = logs.iter().map(|p| p.0).sum::<f64>() / logs.len() as f64;
    let my = logs.iter().map(|p| p.1).sum::<f64>() / logs.len() as f64;
    let sxy: f64 = logs.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = logs.iter().map(|p| (p.0 - mx).powi(2)).sum();
    sxy / sxx
}

/// Full reversal's total work on the bad chain grows quadratically with the number of
/// bad nodes (Busch, Surapaneni and Tirthapura: Θ(n_b²)): the fitted exponent over
/// k = 4 … 64 is 2 within 0.15, and each count equals the brute force's.
#[test]
fn full_reversal_work_on_the_bad_chain_is_quadratic() {
    let ks = [4u32, 8, 16, 32, 64];
    for (name, rule) in [("gb-full", Rule::Full), ("gb-partial", Rule::Partial)] {
        let mut points = Vec::new();
        for &k in &ks {
            let work = simulated_work(name, k);
            let (n, links) = bad_chain(k);
            let b1 = k + 2;
            let rest: Vec<(u32, u32)> = links.iter().copied().filter(|&l| l != (0, b1)).collect();
            let (_, steps) = rounds(
                rule,
                &adjacency(n, &rest),
                initial(rule, &adjacency(n, &links), 0),
                0,
            );
            assert_eq!(work, steps.iter().sum::<u64>(), "{name}, k = {k}");
            points.push((f64::from(k), work as f64));
        }
        let e = exponent(&points);
        eprintln!("{name}: work {points:?}, fitted exponent {e:.3}");
        if rule == Rule::Full {
            assert!((e - 2.0).abs() < 0.15, "full reversal exponent {e}");
            // Exactly: bad node i reverses i times, k(k + 1)/2 steps in all.
            for &(k, work) in &points {
                assert_eq!(work, k * (k + 1.0) / 2.0);
            }
        }
    }
}

/// Without partition detection a component cut off from the destination keeps
/// reversing; the run reports those steps and goes on, and rejoining stops them.
#[test]
fn a_cut_off_component_reverses_until_it_rejoins() {
    // 0 (the destination) – 1 – 2 – 3; 1–2 fails at 1 s and comes back at 3 s.
    let links = [(0, 1), (1, 2), (2, 3)];
    for name in ["gb-full", "gb-partial"] {
        let algorithm = Algorithm::parse(name).unwrap();
        let params = AlgoParams::defaults(algorithm.params());
        let run = |events: &[(f64, NodeId, NodeId, LinkChange)]| {
            let tl = timeline(4, 10.0, &links, events);
            algorithm.run(&params, &tl, config(10.0))
        };
        let forever = run(&[(1.0, 1, 2, LinkChange::Down)]);
        let healed = run(&[(1.0, 1, 2, LinkChange::Down), (3.0, 1, 2, LinkChange::Up)]);
        let count = |out: &linkrev::run::RunOutput, c: &str| out.summary.metrics.count(c).unwrap();
        let cut = count(&forever, "partitioned_reversals");
        assert!(cut > 1000, "{name}: 9 s of reversals in {{2, 3}}: {cut}");
        assert!(forever.summary.aborted.is_none());
        let two_seconds = count(&healed, "partitioned_reversals");
        assert!(
            two_seconds > 100 && two_seconds * 3 < cut,
            "{name}: {two_seconds} vs {cut}"
        );
        assert!(
            healed.route_changes()[1].change.converged,
            "{name}: rejoining converges"
        );
        assert_eq!(
            forever.summary.safety_violations + healed.summary.safety_violations,
            0
        );
        // Route availability: the destination and node 1 always have a route; 2 and 3
        // only while joined (7 of 10 s when healed, 1 s when not).
        let availability =
            |out: &linkrev::run::RunOutput| out.summary.metrics.real("route_availability").unwrap();
        assert!((availability(&forever) - (2.0 * 10.0 + 2.0 * 1.0) / 40.0).abs() < 0.01);
        assert!((availability(&healed) - (2.0 * 10.0 + 2.0 * 8.0) / 40.0).abs() < 0.01);
    }
}

/// With zero delays a cut-off component reverses a nanosecond per step: the run is
/// stopped and reported, not left to take days.
#[test]
fn reversal_with_zero_delays_is_stopped_when_time_barely_advances() {
    let tl = timeline(
        4,
        10.0,
        &[(0, 1), (1, 2), (2, 3)],
        &[(1.0, 1, 2, LinkChange::Down)],
    );
    let algorithm = Algorithm::parse("gb-full").unwrap();
    let mut cfg = config(10.0);
    cfg.network.delay = DelayModel::Constant(Duration(0));
    // The stall guard, not the event budget (which the default would reach first).
    cfg.max_events = Some(u64::MAX);
    let out = algorithm.run(&AlgoParams::defaults(algorithm.params()), &tl, cfg);
    let why = out.summary.aborted.expect("stopped");
    assert!(why.contains("barely advances"), "{why}");
    assert!(out.summary.events > 1_000_000);
}
