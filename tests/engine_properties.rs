//! The simulator's monitors, checked against protocols that break their properties (the
//! families' conformance suites, which every registered algorithm must pass, are in
//! `tests/conformance.rs`):
//!
//! - a "protocol" that enters the critical section without a token is caught;
//! - leader election (the slides' rules A–E) with partitions and merges does not always
//!   end legal; a merge counterexample found by an earlier, unrestricted version of the
//!   leader-election property is kept to show that the monitor reports it, once.

use linkrev::NodeId;
use linkrev::family::MutualExclusion;
use linkrev::protocol::{AlgoParams, Protocol, TokenView};
use linkrev::run::runner;
use linkrev::sim::{ChangeMode, CsTime, Duration, WorkloadConfig};
use linkrev::topology::events::{LinkChange, LinkEvent, LinkTimeline};

use linkrev::conformance::scenario;
use scenario::{DURATION, Scenario, config};

/// The monitors themselves: a "protocol" that enters the critical section on every
/// request, without a token, must be caught.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Greedy {
    in_cs: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Never;

impl linkrev::protocol::Message for Never {
    const KINDS: &'static [&'static str] = &["Never"];
    fn kind_index(&self) -> usize {
        0
    }
}

impl Protocol for Greedy {
    type Msg = Never;
    type Config = ();
    fn initial_states(_: &(), neighbours: &[Vec<NodeId>]) -> Vec<Self> {
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
    let out = runner::run::<MutualExclusion, Greedy>(&AlgoParams::default(), &s.timeline, cfg);
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
