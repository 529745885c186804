//! The critical-section workload: when each node asks for the CS and how long it stays.
//!
//! Each node requests the critical section as a Poisson process of rate λ with at most
//! one outstanding request: the next gap is drawn when the CS is released (so the rate
//! is that of a node's thinking time, not of its requests while it waits). CS durations
//! are constant or exponential. Request gaps and CS durations come from per-node random
//! streams of the run seed, so every algorithm of one seed sees the same draws whatever
//! it does with them (common random numbers). Every request is recorded, and one still
//! waiting when the run ends is kept, not dropped.

use super::seeds::{self, Purpose};
use super::time::{Duration, SimTime};
use crate::NodeId;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

/// How long a node stays in its critical section.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CsTime {
    /// Always this long.
    Constant(Duration),
    /// Exponentially distributed with this mean.
    Exponential {
        /// The mean duration.
        mean: Duration,
    },
}

/// The workload's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WorkloadConfig {
    /// Requests per second per node (λ).
    pub rate: f64,
    /// CS durations.
    pub cs_time: CsTime,
}

/// The most CS requests one run may be expected to make: ten million. Each is a row of
/// the run's `requests` table, held in memory until the run ends (about 70 bytes with
/// the wait it yields, so at most about 0.7 GB), so a run is refused before it starts
/// if `nodes × rate × duration`, which bounds its requests (a node thinks for a gap of
/// mean 1/λ before each), is larger.
pub const MAX_EXPECTED_REQUESTS: f64 = 1e7;

/// Why a run of `nodes` nodes at `rate` requests per second per node over `duration_s`
/// seconds would make too many requests to hold, if it would.
pub fn requests_problem(nodes: usize, rate: f64, duration_s: f64) -> Option<String> {
    let expected = nodes as f64 * rate * duration_s;
    (expected > MAX_EXPECTED_REQUESTS).then(|| {
        format!(
            "{nodes} nodes × {rate} requests/s × {duration_s} s is about {expected:.3e} CS \
             requests, more than the {MAX_EXPECTED_REQUESTS:.0e} one run may hold in memory \
             (a row each in its requests table, about 70 bytes): lower the rate, the duration \
             or the nodes"
        )
    })
}

/// One critical-section request of the workload.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RequestRecord {
    /// The requesting node.
    pub node: NodeId,
    /// When it asked.
    pub requested: SimTime,
    /// When it entered the CS (`None`: still waiting at the end).
    pub entered: Option<SimTime>,
    /// When it left the CS.
    pub exited: Option<SimTime>,
}

/// The request process of one run and its records.
pub struct Workload {
    config: Option<WorkloadConfig>,
    gap_rngs: Vec<ChaCha8Rng>,
    cs_rngs: Vec<ChaCha8Rng>,
    requests: Vec<RequestRecord>,
    /// Per node: its outstanding request's index in `requests`.
    outstanding: Vec<Option<usize>>,
    in_cs: u32,
}

/// `-ln(1 − u)` for `u` uniform in [0, 1): a unit-mean exponential draw.
fn unit_exponential(rng: &mut ChaCha8Rng) -> f64 {
    let u: f64 = rng.random();
    -(1.0 - u).ln()
}

impl Workload {
    /// The workload of `nodes` nodes under `config` (`None`: no application, as for
    /// leader election), with streams from the run `seed`.
    pub fn new(config: Option<WorkloadConfig>, nodes: usize, seed: u64) -> Self {
        Self {
            config,
            gap_rngs: (0..nodes as u64)
                .map(|i| seeds::stream(seed, Purpose::RequestGaps, i))
                .collect(),
            cs_rngs: (0..nodes as u64)
                .map(|i| seeds::stream(seed, Purpose::CsDurations, i))
                .collect(),
            requests: Vec::new(),
            outstanding: vec![None; nodes],
            in_cs: 0,
        }
    }

    /// Every request so far, in the order made.
    pub fn requests(&self) -> &[RequestRecord] {
        &self.requests
    }

    /// Nodes in their critical section now.
    pub fn in_cs(&self) -> u32 {
        self.in_cs
    }

    /// The time of each node's first request, in node order (none without a workload).
    pub fn first_requests(&mut self) -> Vec<(SimTime, NodeId)> {
        let Some(w) = self.config else {
            return Vec::new();
        };
        (0..self.gap_rngs.len() as NodeId)
            .map(|node| (SimTime::ZERO.after(self.request_gap(node, w.rate)), node))
            .collect()
    }

    fn request_gap(&mut self, node: NodeId, rate: f64) -> Duration {
        Duration::from_secs_f64(unit_exponential(&mut self.gap_rngs[node as usize]) / rate)
    }

    fn cs_duration(&mut self, node: NodeId, cs: CsTime) -> Duration {
        match cs {
            CsTime::Constant(d) => d,
            CsTime::Exponential { mean } => Duration::from_secs_f64(
                unit_exponential(&mut self.cs_rngs[node as usize]) * mean.as_secs_f64(),
            ),
        }
    }

    /// `node` asks for the CS at `now`: recorded as its outstanding request.
    pub fn request(&mut self, node: NodeId, now: SimTime) {
        self.outstanding[node as usize] = Some(self.requests.len());
        self.requests.push(RequestRecord {
            node,
            requested: now,
            entered: None,
            exited: None,
        });
    }

    /// `node` enters the CS at `now`: returns when it releases it.
    pub fn enter(&mut self, node: NodeId, now: SimTime) -> Option<SimTime> {
        self.in_cs += 1;
        if let Some(i) = self.outstanding[node as usize] {
            self.requests[i].entered = Some(now);
        }
        let w = self.config?;
        Some(now.after(self.cs_duration(node, w.cs_time)))
    }

    /// `node` releases the CS at `now`: returns the time of its next request.
    pub fn release(&mut self, node: NodeId, now: SimTime) -> Option<SimTime> {
        self.in_cs -= 1;
        if let Some(i) = self.outstanding[node as usize].take() {
            self.requests[i].exited = Some(now);
        }
        let w = self.config?;
        Some(now.after(self.request_gap(node, w.rate)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(rate: f64, cs_time: CsTime, nodes: usize) -> Workload {
        Workload::new(Some(WorkloadConfig { rate, cs_time }), nodes, 42)
    }

    #[test]
    fn gaps_are_exponential_with_mean_one_over_the_rate() {
        let mut w = workload(2.0, CsTime::Constant(Duration(0)), 1);
        let draws = 20_000;
        let mut sum = 0.0;
        let mut now = SimTime::ZERO;
        for _ in 0..draws {
            w.request(0, now);
            let release = w.enter(0, now).unwrap();
            let next = w.release(0, release).unwrap();
            sum += next.since(release).as_secs_f64();
            now = next;
        }
        // Mean 0.5 s; the standard error of the mean of 20,000 draws is 0.0035 s.
        let mean = sum / draws as f64;
        assert!((mean - 0.5).abs() < 0.015, "mean gap {mean}");
    }

    #[test]
    fn exponential_cs_durations_have_their_mean_and_constant_ones_their_value() {
        let mean = Duration::from_secs_f64(0.1);
        let mut w = workload(1.0, CsTime::Exponential { mean }, 1);
        let draws = 20_000;
        let total: f64 = (0..draws)
            .map(|_| {
                let end = w.enter(0, SimTime::ZERO).unwrap();
                w.release(0, end);
                end.since(SimTime::ZERO).as_secs_f64()
            })
            .sum();
        assert!((total / draws as f64 - 0.1).abs() < 0.003);
        let mut w = workload(1.0, CsTime::Constant(mean), 1);
        assert_eq!(w.enter(0, SimTime::ZERO), Some(SimTime::ZERO.after(mean)));
    }

    #[test]
    fn requests_are_recorded_from_request_to_release_and_kept_when_unserved() {
        let mut w = workload(1.0, CsTime::Constant(Duration(5)), 3);
        let firsts = w.first_requests();
        assert_eq!(firsts.iter().map(|f| f.1).collect::<Vec<_>>(), [0, 1, 2]);
        let t = |ns| SimTime::ZERO.after(Duration(ns));
        w.request(1, t(10));
        w.request(2, t(11));
        assert_eq!(w.enter(1, t(20)), Some(t(25)));
        assert_eq!(w.in_cs(), 1);
        assert!(w.release(1, t(25)).unwrap() > t(25));
        assert_eq!(w.in_cs(), 0);
        let r = w.requests();
        assert_eq!(
            (r[0].node, r[0].entered, r[0].exited),
            (1, Some(t(20)), Some(t(25)))
        );
        assert_eq!(
            (r[1].node, r[1].entered),
            (2, None),
            "an unserved request stays"
        );
    }

    #[test]
    fn each_node_draws_from_its_own_streams() {
        // Node 1's draws do not depend on how often node 0 drew.
        let mut a = workload(1.0, CsTime::Constant(Duration(0)), 2);
        let mut b = workload(1.0, CsTime::Constant(Duration(0)), 2);
        for _ in 0..5 {
            a.enter(0, SimTime::ZERO);
            a.release(0, SimTime::ZERO);
        }
        a.enter(1, SimTime::ZERO);
        b.enter(1, SimTime::ZERO);
        assert_eq!(a.release(1, SimTime::ZERO), b.release(1, SimTime::ZERO));
    }

    #[test]
    fn without_a_workload_nothing_is_scheduled() {
        let mut w = Workload::new(None, 3, 1);
        assert!(w.first_requests().is_empty());
        assert_eq!(w.enter(0, SimTime::ZERO), None);
        assert_eq!(w.release(0, SimTime::ZERO), None);
    }
}
