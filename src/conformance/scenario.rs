//! Random scenarios for property tests through the simulator: up to 8 nodes, random
//! initial links and link flips, random per-hop delays and seeds; the changes stop at
//! [`CHANGES_END`], when a spanning path is completed so the final graph is connected.

use crate::NodeId;
use crate::sim::{
    ChangeMode, CsTime, Duration, LinkBreak, NetworkConfig, RunConfig, SimTime, WorkloadConfig,
};
use crate::topology::events::{LinkChange, LinkEvent, LinkInterval, LinkTimeline};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// When the random changes stop; a spanning path is then completed so the final graph is
/// connected.
pub const CHANGES_END: f64 = 10.0;
/// Requests made this long before the end must have been served.
pub const SERVICE_MARGIN: f64 = 15.0;
/// How long a scenario runs, seconds.
pub const DURATION: f64 = 60.0;

/// One random case: the links over time, the per-hop delay model and the run seed.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The links at t = 0 and their changes.
    pub timeline: LinkTimeline,
    /// The per-hop delay, as `--delay` takes it.
    pub delay: String,
    /// The run seed (delays, requests).
    pub seed: u64,
}

/// Random scenarios whose changes may partition the network (it is connected again
/// from [`CHANGES_END`] on).
pub fn scenario() -> impl Strategy<Value = Scenario> {
    (2usize..=8)
        .prop_flat_map(|n| {
            (
                Just(n),
                prop::collection::vec((0..n as NodeId, 0..n as NodeId), 0..12),
                prop::collection::vec((0.0..CHANGES_END, 0..n as NodeId, 0..n as NodeId), 0..30),
                prop::sample::select(vec![
                    "uniform:1ms:20ms",
                    "exp:1ms:10ms",
                    "const:5ms",
                    "uniform:0ms:2ms",
                ]),
                any::<u64>(),
            )
        })
        .prop_map(|(n, initial, mut flips, delay, seed)| {
            let key = |a: NodeId, b: NodeId| (a.min(b), a.max(b));
            let mut up: BTreeSet<(NodeId, NodeId)> = initial
                .into_iter()
                .filter(|(a, b)| a != b)
                .map(|(a, b)| key(a, b))
                .collect();
            let intervals = up
                .iter()
                .map(|&(a, b)| LinkInterval {
                    a,
                    b,
                    start: 0.0,
                    end: DURATION,
                })
                .collect();
            flips.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut events = Vec::new();
            for (time, a, b) in flips.into_iter().filter(|(_, a, b)| a != b) {
                let (a, b) = key(a, b);
                let change = if up.remove(&(a, b)) {
                    LinkChange::Down
                } else {
                    up.insert((a, b));
                    LinkChange::Up
                };
                events.push(LinkEvent { time, a, b, change });
            }
            for i in 0..n as NodeId - 1 {
                if up.insert((i, i + 1)) {
                    events.push(LinkEvent {
                        time: CHANGES_END,
                        a: i,
                        b: i + 1,
                        change: LinkChange::Up,
                    });
                }
            }
            let timeline = LinkTimeline {
                range: 1.0,
                duration: DURATION,
                node_count: n,
                intervals,
                events,
            };
            Scenario {
                timeline,
                delay: delay.to_string(),
                seed,
            }
        })
}

/// The run configuration of a scenario: its delays, `drain` links, no detection delay,
/// `changes`, and with `workload` a request every 2 s per node on average, each CS
/// lasting 20 ms on average.
pub fn config(s: &Scenario, changes: ChangeMode, workload: bool) -> RunConfig {
    RunConfig {
        network: NetworkConfig {
            delay: s.delay.parse().expect("the scenarios' delay models parse"),
            link_break: LinkBreak::Drain,
            detection_delay: Duration(0),
            changes,
        },
        workload: workload.then_some(WorkloadConfig {
            rate: 0.5,
            cs_time: CsTime::Exponential {
                mean: Duration::from_secs_f64(0.02),
            },
        }),
        duration: SimTime::from_secs_f64(DURATION),
        seed: s.seed,
        script: None,
        max_events: None,
    }
}

/// Random changes that never disconnect the network: it starts as a path plus random
/// extra links, and a link failure that would split it is skipped.
pub fn connected_scenario() -> impl Strategy<Value = Scenario> {
    use crate::topology::components::count_components;
    scenario().prop_map(|mut s| {
        let n = s.timeline.node_count;
        let key = |a: NodeId, b: NodeId| (a.min(b), a.max(b));
        let mut up: BTreeSet<(NodeId, NodeId)> = (0..n as NodeId - 1).map(|i| (i, i + 1)).collect();
        up.extend(s.timeline.intervals.iter().map(|iv| key(iv.a, iv.b)));
        s.timeline.intervals = up
            .iter()
            .map(|&(a, b)| LinkInterval {
                a,
                b,
                start: 0.0,
                end: DURATION,
            })
            .collect();
        let mut events = Vec::new();
        for e in &s.timeline.events {
            let k = key(e.a, e.b);
            if up.contains(&k) {
                let mut without = up.clone();
                without.remove(&k);
                if count_components(n, without.iter().copied()) == 1 {
                    up = without;
                    events.push(LinkEvent {
                        change: LinkChange::Down,
                        ..*e
                    });
                }
            } else {
                up.insert(k);
                events.push(LinkEvent {
                    change: LinkChange::Up,
                    ..*e
                });
            }
        }
        s.timeline.events = events;
        s
    })
}
