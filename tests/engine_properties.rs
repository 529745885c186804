//! Property tests through the simulator: random graphs of up to 8 nodes, random link
//! flips, random per-hop delays and a random request workload.
//!
//! - Mutual exclusion (RL and Raymond): the monitors never see two nodes in the critical
//!   section or a token count other than one, and once the changes stop with a connected
//!   graph, every request is served.
//! - Leader election (the slides' rules A–E), one change at a time (`serialize`): with
//!   changes that keep the network connected, every run ends legal. With partitions and
//!   merges it does not, and `tests/le_malpani.rs` keeps minimal counterexamples; here a
//!   merge counterexample found by this very test is kept to show that the simulator's
//!   monitor reports it.

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

/// Leader election under `serialize`: runs to the end and checks every final component.
/// Returns the monitor's violation count and the final verdict.
fn le_final_state(
    s: &Scenario,
) -> (
    u64,
    Option<linkrev::observe::safety::Violation>,
    Result<(), String>,
) {
    use linkrev::observe::le::{LeMonitor, check_component};
    use linkrev::protocol::le_malpani::LeMalpani;
    use linkrev::sim::Simulation;
    let mut sim =
        Simulation::<LeMalpani>::new(&s.timeline, config(s, ChangeMode::Serialize, false));
    let mut monitor = LeMonitor::new();
    sim.run(&mut monitor);
    let graph = sim.graph();
    let mut groups: std::collections::BTreeMap<u32, Vec<NodeId>> = Default::default();
    for v in 0..graph.node_count() as NodeId {
        groups.entry(graph.label(v)).or_default().push(v);
    }
    let legal = if sim.in_flight() > 0 {
        Err("messages still in flight at the end".to_string())
    } else {
        groups.values().try_for_each(|members| {
            check_component(sim.nodes(), graph, members).map_err(|(why, _)| why)
        })
    };
    (monitor.safety.count, monitor.safety.first, legal)
}

/// Random changes that never disconnect the network: it starts as a path plus random
/// extra links, and a link failure that would split it is skipped.
fn connected_scenario() -> impl Strategy<Value = Scenario> {
    use linkrev::topology::components::count_components;
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn leader_election_one_change_at_a_time_in_a_connected_network_ends_legal(s in connected_scenario()) {
        let (violations, first, legal) = le_final_state(&s);
        prop_assert_eq!(legal, Ok(()));
        prop_assert_eq!(violations, 0, "{:?}", first);
    }
}

/// The link events of [`merge_below_a_reflected_level_is_reported_as_illegal`]: after the
/// last merge at t = 10, node 3 is a sink below a reflected level for good.
fn merge_below_a_reflected_level() -> Vec<LinkEvent> {
    vec![
        ev(0.0, 1, 2, true),
        ev(0.0, 1, 3, true),
        ev(0.0, 1, 2, false),
        ev(0.0, 1, 2, true),
        ev(0.149, 0, 1, true),
        ev(1.528, 0, 3, true),
        ev(2.353, 0, 1, false),
        ev(2.968, 0, 2, true),
        ev(4.868, 1, 3, false),
        ev(8.219, 1, 3, true),
        ev(8.333, 0, 3, false),
        ev(8.485, 1, 3, false),
        ev(10.0, 0, 1, true),
        ev(10.0, 2, 3, true),
    ]
}

fn ev(time: f64, a: NodeId, b: NodeId, up: bool) -> LinkEvent {
    LinkEvent {
        time,
        a,
        b,
        change: if up { LinkChange::Up } else { LinkChange::Down },
    }
}

/// One-change-at-a-time leader election on `events` among `node_count` nodes (no links at
/// t = 0), constant 5 ms delays.
fn le_events_scenario(node_count: usize, events: Vec<LinkEvent>) -> Scenario {
    Scenario {
        timeline: LinkTimeline {
            range: 1.0,
            duration: DURATION,
            node_count,
            intervals: vec![],
            events,
        },
        delay: "const:5ms".into(),
        seed: 1,
    }
}

/// Found by an earlier, unrestricted version of the property above: node 3 is cut off,
/// elects itself, and merges back through node 2, whose reference level is a reflected
/// one left from an earlier reversal. Rule E puts node 3 on level (0, 0, 0), below node 2,
/// so node 3 is a sink that no rule wakes: the component stays illegal with nothing in
/// flight. The simulator's monitor must report exactly that.
#[test]
fn merge_below_a_reflected_level_is_reported_as_illegal() {
    let s = le_events_scenario(4, merge_below_a_reflected_level());
    let (violations, first, legal) = le_final_state(&s);
    assert_eq!(legal, Err("node 3 is a sink but 0 leads".to_string()));
    let first = first.expect("the monitor reports the illegal state");
    assert_eq!(first.kind, "illegal_component");
    assert_eq!(first.nodes, vec![3, 0]);
    assert!(
        first.time_s >= 10.0,
        "reported once the last merge has settled: {first:?}"
    );
    assert_eq!(violations, 1);
}

/// A persistent illegal state is one incident, even when traffic that does not repair it
/// passes through its component: here node 4 joins the component through node 1 at
/// t = 20 and leaves at t = 30 (Updates flow between 1 and 4, so the component is not
/// quiescent for a while), and node 3 stays stranded throughout. The monitor used to
/// forget an incident whenever its component was busy and counted it again when the
/// component went quiet (2 here; thousands in long sparse runs).
#[test]
fn a_persistent_illegal_state_is_counted_once_across_unrelated_traffic() {
    let mut events = merge_below_a_reflected_level();
    events.push(ev(20.0, 1, 4, true));
    events.push(ev(30.0, 1, 4, false));
    let s = le_events_scenario(5, events);
    let (violations, first, legal) = le_final_state(&s);
    assert_eq!(legal, Err("node 3 is a sink but 0 leads".to_string()));
    let first = first.expect("the monitor reports the illegal state");
    assert_eq!(first.nodes, vec![3, 0]);
    assert!(first.time_s >= 10.0 && first.time_s < 20.0, "{first:?}");
    assert_eq!(violations, 1, "one stranded sink, one incident");
}
