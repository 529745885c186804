//! The seed slides' worked examples as built-in scenarios (`linkrev replay --scenario
//! slides-le-a`), so a student can step through the slides' figures with the code the
//! simulator runs.
//!
//! A scenario is written as the slides tell it — "the link L–C fails; C's Update reaches
//! E; … everything else is delivered" — and expanded into an exact execution by running
//! it once in the hand-driven [`Harness`] (every "deliver the rest" becomes deliveries,
//! lowest directed link first). That execution is then a checker scenario
//! ([`crate::check::scenario`]): one step per microsecond through the simulator, with
//! its monitors and the replay recorder. The slides' own figures are what the tests in
//! `tests/replay.rs` compare the replay's states against.
//!
//! The leader-election examples start mid-run, from the heights the slides print; the
//! reconstruction of what the slides leave out (a leader for the walk-through, the
//! seven-node topology) is argued in `tests/le_malpani.rs`, whose scenario tests these
//! are. The RL walk-through is ours: the slides have no RL example with a network, so it
//! shows their rules (request forwarding, the token's path, a height raised by a lost
//! link) on a five-node network.

use super::{Layout, Recorded, Window};
use crate::NodeId;
use crate::check::model::Step;
use crate::check::scenario::{Scenario, step_time};
use crate::family::{LeaderElection, MutualExclusion};
use crate::protocol::le_malpani::{Height, LeMalpani};
use crate::protocol::me_rl::Rl;
use crate::protocol::testkit::Harness;
use crate::protocol::{AppEvent, Protocol};
use crate::run::RunOutput;
use crate::sim::{DelayModel, Duration, SimTime};

/// One thing that happens in a worked example, as the slides tell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The link fails.
    Down(NodeId, NodeId),
    /// The link forms.
    Up(NodeId, NodeId),
    /// The oldest message on `from → to` is delivered.
    Deliver(NodeId, NodeId),
    /// Every message in flight is delivered, and every message that causes, lowest
    /// directed link first, until none is left.
    DeliverAll,
    /// The node's application requests the critical section.
    Request(NodeId),
    /// The node's application leaves the critical section.
    Release(NodeId),
}

/// The protocol a built-in scenario runs and the states it starts from.
#[derive(Clone, Copy, Debug)]
enum Start {
    /// `le-malpani` from the given heights (indexed by id), each node knowing its
    /// neighbours' heights.
    LeMalpani(&'static [HeightSpec]),
    /// `me-rl` from its initial states (the token at node 0).
    Rl,
}

/// A height `(lid, τ, oid, r, δ, id)` as the slides print it; `None`: the leader's own
/// height `(id, -1, -1, 0, 0, id)`.
type HeightSpec = Option<(NodeId, i64, i32, bool, i64, NodeId)>;

/// A built-in scenario.
#[derive(Clone, Copy, Debug)]
pub struct Builtin {
    /// Its name on the command line.
    pub name: &'static str,
    /// What it shows.
    pub description: &'static str,
    start: Start,
    /// Node names as the slides use them, by id.
    pub names: &'static [&'static str],
    links: &'static [(NodeId, NodeId)],
    /// Where each node is drawn (x, y in a 100 × 80 box).
    positions: &'static [(f64, f64)],
    plan: &'static [Action],
}

use Action::*;

const A: NodeId = 0;
const B: NodeId = 1;
const C: NodeId = 2;
const D: NodeId = 3;
const E: NodeId = 4;
const F: NodeId = 5;
const G: NodeId = 6;
const H: NodeId = 7;

/// Every built-in scenario.
pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "slides-le-a",
        description: "Leader election, the slides' overview walk-through: L–C fails (C \
                      starts a new reference level, E and D follow), then L–B cuts A–E off \
                      (B's level is reflected at C and B elects itself)",
        start: Start::LeMalpani(&[
            Some((5, 0, 0, false, 4, A)),
            Some((5, 0, 0, false, 1, B)),
            Some((5, 0, 0, false, 1, C)),
            Some((5, 0, 0, false, 3, D)),
            Some((5, 0, 0, false, 2, E)),
            None,
            Some((5, 0, 0, false, 1, 6)),
        ]),
        names: &["A", "B", "C", "D", "E", "L", "F"],
        links: &[
            (A, B),
            (A, D),
            (B, 5),
            (C, D),
            (C, E),
            (C, 5),
            (D, E),
            (5, 6),
        ],
        positions: &[
            (12.0, 62.0),
            (25.0, 32.0),
            (70.0, 32.0),
            (45.0, 58.0),
            (82.0, 64.0),
            (50.0, 8.0),
            (85.0, 10.0),
        ],
        plan: &[
            Down(C, 5),
            Deliver(C, E),
            Deliver(C, D),
            Deliver(E, D),
            DeliverAll,
            Down(B, 5),
            Deliver(B, A),
            DeliverAll,
        ],
    },
    Builtin {
        name: "slides-le-b",
        description: "Leader election, the slides' seven-node example (figs. 1–6): A is cut \
                      off and elects itself; B–E forms and A's leadership spreads to E, F, \
                      H and G",
        start: Start::LeMalpani(&[
            Some((F, 0, 0, false, 2, A)),
            Some((F, 0, 0, false, 4, B)),
            None,
            Some((F, 0, 0, false, 3, D)),
            Some((F, 0, 0, false, 1, E)),
            None,
            Some((F, 0, 0, false, 2, G)),
            Some((F, 0, 0, false, 1, H)),
        ]),
        names: &["A", "B", "C", "D", "E", "F", "G", "H"],
        links: &[(A, B), (A, D), (A, E), (B, D), (E, F), (F, H), (G, H)],
        positions: &[
            (18.0, 40.0),
            (35.0, 14.0),
            (50.0, 74.0),
            (14.0, 70.0),
            (55.0, 34.0),
            (76.0, 18.0),
            (72.0, 70.0),
            (88.0, 46.0),
        ],
        plan: &[Down(A, E), DeliverAll, Up(B, E), DeliverAll],
    },
    Builtin {
        name: "slides-rl",
        description: "Token mutual exclusion by link reversal (RL) on five nodes: node 3's \
                      request travels down to the token at 0 and the token comes back along \
                      it; then 0–1 fails, 1 is left without an outgoing link and raises its \
                      height, and its request is served through 2 and 3",
        start: Start::Rl,
        names: &["0", "1", "2", "3", "4"],
        links: &[(0, 1), (0, 4), (1, 2), (2, 3), (3, 4)],
        positions: &[
            (50.0, 10.0),
            (20.0, 35.0),
            (25.0, 70.0),
            (70.0, 70.0),
            (80.0, 35.0),
        ],
        plan: &[
            Request(3),
            DeliverAll,
            Release(3),
            DeliverAll,
            Down(0, 1),
            DeliverAll,
            Request(1),
            DeliverAll,
            Release(1),
            Up(0, 1),
            DeliverAll,
        ],
    },
];

/// The built-in scenario called `name`.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

impl Builtin {
    /// The registry name of the algorithm it runs.
    pub fn algorithm(&self) -> &'static str {
        match self.start {
            Start::LeMalpani(_) => "le-malpani",
            Start::Rl => "me-rl",
        }
    }

    /// The execution, step by step, as a checker scenario.
    pub fn scenario(&self) -> Scenario {
        let steps = match self.start {
            Start::LeMalpani(heights) => {
                let states = self.le_states(heights);
                expand(Harness::with_states(states, self.links), self.plan)
            }
            Start::Rl => expand(Harness::<Rl>::new(self.names.len(), self.links), self.plan),
        };
        Scenario {
            algorithm: self.algorithm().to_string(),
            params: Vec::new(),
            nodes: self.names.len(),
            links: self
                .links
                .iter()
                .map(|&(a, b)| (a.min(b), a.max(b)))
                .collect(),
            steps,
        }
    }

    /// How long the run lasts.
    pub fn duration(&self) -> SimTime {
        self.scenario().duration()
    }

    /// Where the nodes are drawn.
    pub fn layout(&self) -> Layout {
        Layout {
            names: Some(self.names.iter().map(|n| n.to_string()).collect()),
            ..Layout::fixed([100.0, 80.0], self.positions)
        }
    }

    /// The run seed (the script fixes every delivery; the seed only names the run).
    pub const SEED: u64 = 1;

    /// Runs the scenario through the simulator with the recorder.
    pub fn record(&self, window: Window) -> (RunOutput, Recorded) {
        let scenario = self.scenario();
        let timeline = scenario
            .timeline()
            .expect("a built-in scenario is consistent");
        let workload = matches!(self.start, Start::Rl);
        let config = scenario
            .config(DelayModel::Constant(Duration(1)), Self::SEED, workload)
            .expect("a built-in scenario is consistent");
        // Nothing after the window is shown, so the run stops there.
        let config = crate::sim::RunConfig {
            duration: window.to,
            ..config
        };
        let (mut output, recorded) = match self.start {
            Start::LeMalpani(heights) => super::record_from::<LeaderElection, LeMalpani>(
                &defaults::<LeMalpani>(),
                &timeline,
                config,
                window,
                Some(self.le_states(heights)),
            ),
            Start::Rl => {
                super::record::<MutualExclusion, Rl>(&defaults::<Rl>(), &timeline, config, window)
            }
        };
        output.summary.algorithm = self.algorithm();
        (output, recorded)
    }

    fn le_states(&self, heights: &[HeightSpec]) -> Vec<LeMalpani> {
        let heights: Vec<Height> = heights
            .iter()
            .enumerate()
            .map(|(i, spec)| match *spec {
                Some((lid, tau, oid, r, delta, id)) => Height::new(lid, tau, oid, r, delta, id),
                None => Height::leader(i as NodeId),
            })
            .collect();
        LeMalpani::with_views(&heights, self.links)
    }
}

/// `P`'s parameters at their defaults.
fn defaults<P: Protocol>() -> crate::protocol::AlgoParams {
    crate::protocol::AlgoParams::defaults(<P::Config as crate::protocol::ProtocolConfig>::PARAMS)
}

/// Runs `plan` in `harness`, each action at the time its step will have in the
/// simulator, and returns the steps it took (a `DeliverAll` as its deliveries).
fn expand<P: Protocol>(mut harness: Harness<P>, plan: &[Action]) -> Vec<Step> {
    let n = harness.nodes.len() as NodeId;
    let mut steps = Vec::new();
    let mut take = |harness: &mut Harness<P>, step: Step| {
        harness.time_ns = step_time(steps.len()).nanos();
        match step {
            Step::Deliver { from, to } => {
                harness.deliver(from, to);
            }
            Step::Link { a, b, up: true } => harness.link_up(a, b),
            Step::Link { a, b, up: false } => harness.link_down(a, b),
            Step::Request { node } => harness.app(node, AppEvent::RequestCs),
            Step::Release { node } => harness.app(node, AppEvent::ReleaseCs),
            Step::DeliverRouted { .. } => unreachable!("no routed messages here"),
        }
        steps.push(step);
    };
    for &action in plan {
        match action {
            Down(a, b) | Up(a, b) => take(
                &mut harness,
                Step::Link {
                    a: a.min(b),
                    b: a.max(b),
                    up: matches!(action, Up(..)),
                },
            ),
            Deliver(from, to) => take(&mut harness, Step::Deliver { from, to }),
            Request(node) => take(&mut harness, Step::Request { node }),
            Release(node) => take(&mut harness, Step::Release { node }),
            DeliverAll => {
                // Bounded: the built-in examples go quiet within a few dozen deliveries.
                for _ in 0..10_000 {
                    let Some((from, to)) = (0..n)
                        .flat_map(|a| (0..n).map(move |b| (a, b)))
                        .find(|&(a, b)| !harness.pending(a, b).is_empty())
                    else {
                        break;
                    };
                    take(&mut harness, Step::Deliver { from, to });
                }
            }
        }
    }
    steps
}
