//! Property tests through the simulator: random graphs of up to 8 nodes, random link
//! flips, random per-hop delays and a random request workload.
//!
//! - Mutual exclusion (RL and Raymond): the monitors never see two nodes in the critical
//!   section or a token count other than one, and once the changes stop with a connected
//!   graph, every request is served.

use linkrev::NodeId;
use linkrev::protocol::me_raymond::Raymond;
use linkrev::protocol::me_rl::Rl;
use linkrev::protocol::{Protocol, TokenView};
use linkrev::run::{Algorithm, run_mutual_exclusion};
use linkrev::sim::{
    ChangeMode, CsTime, Duration, LinkBreak, NetworkConfig, RunConfig, SimTime, WorkloadConfig,
};
use linkrev::topology::events::{LinkChange, LinkEvent, LinkInterval, LinkTimeline};
use proptest::prelude::*;
use std::collections::BTreeSet;

/// When the random changes stop; a spanning path is then completed so the final graph is
/// connected.
const CHANGES_END: f64 = 10.0;
/// Requests made this long before the end must have been served.
const SERVICE_MARGIN: f64 = 15.0;
const DURATION: f64 = 60.0;

#[derive(Debug, Clone)]
struct Scenario {
    timeline: LinkTimeline,
    delay: String,
    seed: u64,
}

fn scenario() -> impl Strategy<Value = Scenario> {
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

fn config(s: &Scenario, changes: ChangeMode, workload: bool) -> RunConfig {
    RunConfig {
        network: NetworkConfig {
            delay: s.delay.parse().unwrap(),
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
    }
}

fn check_mutual_exclusion<P: Protocol + TokenView>(
    algorithm: Algorithm,
    s: &Scenario,
) -> Result<(), TestCaseError> {
    let out =
        run_mutual_exclusion::<P>(algorithm, &s.timeline, config(s, ChangeMode::Overlap, true));
    let summary = &out.summary;
    prop_assert_eq!(
        summary.safety_violations,
        0,
        "{:?}",
        summary.first_violation
    );
    prop_assert_eq!(summary.tokens_lost, 0);
    let cutoff = SimTime::from_secs_f64(DURATION - SERVICE_MARGIN);
    for r in out.requests.iter().filter(|r| r.requested < cutoff) {
        prop_assert!(
            r.entered.is_some(),
            "request of node {} at {} never served",
            r.node,
            r.requested
        );
    }
    prop_assert!(
        out.requests.len() >= s.timeline.node_count,
        "the workload should make requests"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn rl_is_safe_and_serves_every_request(s in scenario()) {
        check_mutual_exclusion::<Rl>(Algorithm::MeRl, &s)?;
    }

    #[test]
    fn raymond_is_safe_and_serves_every_request(s in scenario()) {
        check_mutual_exclusion::<Raymond>(Algorithm::MeRaymond, &s)?;
    }
}

/// The monitors themselves: a "protocol" that enters the critical section on every
/// request, without a token, must be caught.
#[derive(Clone, Debug)]
struct Greedy {
    in_cs: bool,
}

#[derive(Clone, Debug)]
struct Never;

impl linkrev::protocol::Message for Never {
    fn kind(&self) -> &'static str {
        "Never"
    }
}

impl Protocol for Greedy {
    type Msg = Never;
    const NAME: &'static str = "greedy";
    fn initial_states(neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        vec![Greedy { in_cs: false }; neighbours.len()]
    }
    fn on_link_up(&mut self, _: NodeId, _: &mut linkrev::protocol::Ctx<Never>) {}
    fn on_link_down(&mut self, _: NodeId, _: &mut linkrev::protocol::Ctx<Never>) {}
    fn on_message(&mut self, _: NodeId, _: Never, _: &mut linkrev::protocol::Ctx<Never>) {}
    fn on_app(
        &mut self,
        event: linkrev::protocol::AppEvent,
        ctx: &mut linkrev::protocol::Ctx<Never>,
    ) {
        self.in_cs = event == linkrev::protocol::AppEvent::RequestCs;
        if self.in_cs {
            ctx.enter_cs();
        }
    }
}

impl TokenView for Greedy {
    fn holds_token(&self) -> bool {
        false
    }
    fn in_cs(&self) -> bool {
        self.in_cs
    }
}

#[test]
fn monitors_catch_a_protocol_without_exclusion() {
    let timeline = LinkTimeline {
        range: 1.0,
        duration: 100.0,
        node_count: 5,
        intervals: vec![],
        events: vec![],
    };
    let s = Scenario {
        timeline,
        delay: "const:1ms".into(),
        seed: 3,
    };
    let mut cfg = config(&s, ChangeMode::Overlap, true);
    cfg.workload = Some(WorkloadConfig {
        rate: 1.0,
        cs_time: CsTime::Constant(Duration::from_secs_f64(0.5)),
    });
    let out = run_mutual_exclusion::<Greedy>(Algorithm::MeRl, &s.timeline, cfg);
    let first = out.summary.first_violation.expect("a violation");
    // No token at all from the start, then overlapping critical sections.
    assert_eq!(first.kind, "token_count");
    assert!(out.summary.safety_violations >= 2);
    assert!(
        first.event_index == 0,
        "reported at the first event: {first:?}"
    );
}
