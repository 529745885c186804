//! `linkrev check`: the model checker finds the published leader election's known
//! failure on its own (and its counterexample replays step by step through the test
//! harness to the same illegal state), holds where the corrected variant holds, keeps
//! RL and Raymond safe on every connected 4-node graph, and catches a deliberately
//! broken toy protocol.

use linkrev::NodeId;
use linkrev::check::graph::{SmallGraph, rooted_connected_graphs};
use linkrev::check::model::Step;
use linkrev::check::scenario::Scenario;
use linkrev::check::{self, CheckReport, CheckSetup, Verdict};
use linkrev::family::{LeaderElection, MutualExclusion, Watches};
use linkrev::observe;
use linkrev::protocol::le_malpani::LeMalpani;
use linkrev::protocol::testkit::Harness;
use linkrev::protocol::{AppEvent, Ctx, Message, Protocol, ProtocolConfig, TokenView};
use linkrev::registry::Algorithm;
use linkrev::sim::ChangeMode;
use linkrev::topology::components::ComponentTracker;
use std::process::Command;

/// Links 0–1, 1–2, 1–3, 2–3: leader 0 hangs off a triangle (the "paw"); the failure of
/// 0–1 cuts the triangle off, the setting of the slides' stale-Update counterexample.
fn paw() -> SmallGraph {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("paw.txt");
    std::fs::write(&path, "# leader 0 on a pendant\n0 1\n1 2\n1 3\n2 3\n").unwrap();
    SmallGraph::read(&path).unwrap()
}

fn setup(graph: SmallGraph, changes: u8, requests: u8, max_depth: usize) -> CheckSetup {
    CheckSetup {
        changes,
        change_mode: ChangeMode::Serialize,
        requests,
        max_depth,
        symmetry: true,
        renormalize: true,
        partial_order: true,
        ..CheckSetup::plain(graph)
    }
}

fn check(name: &str, setup: &CheckSetup) -> CheckReport {
    let algorithm = Algorithm::parse(name).unwrap();
    algorithm.check(&algorithm.default_params(), setup)
}

fn verdict<'r>(report: &'r CheckReport, property: &str) -> &'r Verdict {
    &report
        .properties
        .iter()
        .find(|p| p.name == property)
        .unwrap_or_else(|| panic!("no property {property}"))
        .verdict
}

#[test]
fn the_published_leader_election_fails_where_the_corrected_one_holds() {
    // One failure, one change at a time (the paper's own setting).
    let s = setup(paw(), 1, 0, 30);
    let malpani = check("le-malpani", &s);
    let Verdict::Violated { detail, path, .. } = verdict(&malpani, "legal_when_quiescent") else {
        panic!("le-malpani not caught: {malpani:?}");
    };
    assert!(
        detail.contains("leader 0 is not in the component"),
        "{detail}"
    );
    assert_eq!(
        path[0],
        Step::Link {
            a: 0,
            b: 1,
            up: false
        }
    );

    // The counterexample is a real execution of the protocol code: replayed action by
    // action through the hand-driven harness (same clock: one microsecond per action,
    // from 2 µs), it ends with nothing in flight and the cut-off triangle still naming
    // the lost leader 0.
    let mut h: Harness<LeMalpani> = Harness::new(4, &paw().edges);
    for (k, step) in path.iter().enumerate() {
        h.time_ns = (k as u64 + 2) * 1_000;
        match *step {
            Step::Deliver { from, to } => {
                h.deliver(from, to).expect("a message to deliver");
            }
            Step::Link { a, b, up: false } => h.link_down(a, b),
            Step::Link { a, b, up: true } => h.link_up(a, b),
            ref other => panic!("unexpected step {other:?}"),
        }
    }
    assert_eq!(h.in_flight_count(), 0);
    let mut graph = ComponentTracker::new(4);
    for &(a, b) in &paw().edges[1..] {
        graph.add_edge(a, b);
    }
    let err = observe::le::check_component(&h.nodes, &graph, &[1, 2, 3]).unwrap_err();
    assert_eq!(err.0, *detail);

    // Through the whole simulator: the execution as a scenario, one step per
    // microsecond, replayed by `linkrev run --scenario`; its monitor reports the same
    // violation.
    let scenario = Scenario {
        algorithm: "le-malpani".into(),
        params: Vec::new(),
        nodes: 4,
        links: paw().edges,
        steps: path.clone(),
    };
    let text = scenario.to_text("the stale-Update race");
    assert_eq!(
        Scenario::parse(&text, "x", |a| Algorithm::parse(a).is_some()).unwrap(),
        scenario,
        "round trip"
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("le.scenario");
    std::fs::write(&file, &text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["run", "--scenario", file.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = stdout
        .lines()
        .find(|l| l.starts_with("first violation"))
        .unwrap_or_else(|| panic!("no violation reported:\n{stdout}"));
    assert!(
        first.contains("illegal_component") && first.contains(detail.as_str()),
        "{first}"
    );

    // Ingram et al.'s algorithm: the whole state space, no violation.
    let ingram = check("le-ingram", &s);
    assert!(!ingram.truncated, "{ingram:?}");
    assert_eq!(*verdict(&ingram, "legal_when_quiescent"), Verdict::Holds);
}

#[test]
fn rl_and_raymond_keep_mutual_exclusion_on_every_connected_four_node_graph() {
    // Every connected 4-node graph, with the token's start (node 0) in every distinct
    // place.
    let graphs = rooted_connected_graphs(4);
    assert_eq!(graphs.len(), 11);
    for graph in graphs {
        for name in ["me-rl", "me-raymond"] {
            let mut s = setup(graph.clone(), 2, 2, 8);
            s.change_mode = ChangeMode::Overlap;
            let report = check(name, &s);
            assert!(report.states > 50, "{name} on {}: {report:?}", graph.name);
            for property in ["at_most_k_in_cs", "token_count"] {
                assert!(
                    !matches!(verdict(&report, property), Verdict::Violated { .. }),
                    "{name} on {}: {property}: {:?}",
                    graph.name,
                    verdict(&report, property)
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// A deliberately broken toy: a node enters its critical section as soon as it asks,
// token or not. The checker must catch it, by a shortest execution: two requests.

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Eager {
    token: bool,
    inside: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Nothing;

impl Message for Nothing {
    const KINDS: &'static [&'static str] = &["Token"];
    fn kind_index(&self) -> usize {
        0
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct NoConfig;

impl ProtocolConfig for NoConfig {
    const PARAMS: &'static [linkrev::protocol::ParamDef] = &[];
    fn from_params(_: &linkrev::protocol::AlgoParams) -> Self {
        NoConfig
    }
}

impl Protocol for Eager {
    type Msg = Nothing;
    type Config = NoConfig;
    fn initial_states(_: &NoConfig, neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        (0..neighbours.len())
            .map(|i| Eager {
                token: i == 0,
                inside: false,
            })
            .collect()
    }
    fn on_link_up(&mut self, _: NodeId, _: &mut Ctx<Nothing>) {}
    fn on_link_down(&mut self, _: NodeId, _: &mut Ctx<Nothing>) {}
    fn on_message(&mut self, _: NodeId, _: Nothing, _: &mut Ctx<Nothing>) {}
    fn on_app(&mut self, event: AppEvent, ctx: &mut Ctx<Nothing>) {
        match event {
            AppEvent::RequestCs => {
                self.inside = true;
                ctx.enter_cs();
            }
            AppEvent::ReleaseCs => self.inside = false,
        }
    }
}

impl TokenView for Eager {
    fn holds_token(&self) -> bool {
        self.token
    }
    fn in_cs(&self) -> bool {
        self.inside
    }
}

#[test]
fn a_broken_toy_protocol_is_caught_by_a_shortest_execution() {
    let s = setup(SmallGraph::parse("path:3").unwrap(), 1, 2, 12);
    let report = check::run(
        "eager",
        <MutualExclusion as Watches<Eager>>::model(NoConfig, &s),
        &s,
    );
    let Verdict::Violated { steps, detail, .. } = verdict(&report, "at_most_k_in_cs") else {
        panic!("not caught: {report:?}");
    };
    assert_eq!(steps.len(), 2, "{steps:?}");
    assert!(
        steps.iter().all(|s| s.starts_with("request at")),
        "{steps:?}"
    );
    assert!(
        detail.contains("2 nodes in the critical section"),
        "{detail}"
    );
    // Its token count is right: the token never moves.
    assert!(!matches!(
        verdict(&report, "token_count"),
        Verdict::Violated { .. }
    ));
}

#[test]
fn the_command_exits_1_on_a_violation_and_2_on_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("paw.txt");
    std::fs::write(&edges, "0 1\n1 2\n1 3\n2 3\n").unwrap();
    let out_dir = dir.path().join("out");
    let out = linkrev(&[
        "check",
        "--algo",
        "le-malpani",
        "--graph",
        edges.to_str().unwrap(),
        "--changes",
        "1",
        "--changes-mode",
        "serialize",
        "--json",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["properties"][0]["result"], "violated");
    assert!(out_dir.join("check.json").is_file());
    let steps = std::fs::read_to_string(out_dir.join("legal_when_quiescent.txt")).unwrap();
    assert!(steps.lines().nth(1) == Some("link 0 - 1 down"), "{steps}");
    let scenario = out_dir.join("legal_when_quiescent.scenario");
    let replay = linkrev(&["run", "--scenario", scenario.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&replay.stdout).contains("leader 0 is not in the component"),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    // A violation found by random executions replays the same way.
    let random_dir = dir.path().join("random");
    let out = linkrev(&[
        "check",
        "--algo",
        "le-malpani",
        "--graph",
        edges.to_str().unwrap(),
        "--changes-mode",
        "serialize",
        "--strategy",
        "random",
        "--executions",
        "2000",
        "--out",
        random_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let scenario_random = random_dir.join("legal_when_quiescent.scenario");
    let replay = linkrev(&["run", "--scenario", scenario_random.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&replay.stdout).contains("is not in the component"),
        "{}",
        String::from_utf8_lossy(&replay.stdout)
    );
    // A scenario with a bad line is refused with its line and field: an unknown step,
    // a link from a node to itself.
    for step in ["step fly 1 2", "step link 1 1 up"] {
        let text = format!("algorithm le-malpani\nnodes 4\n{step}\n");
        std::fs::write(&scenario, text).unwrap();
        let bad = linkrev(&["run", "--scenario", scenario.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&bad.stderr);
        assert_eq!(bad.status.code(), Some(2), "{step}: {err}");
        assert!(
            err.contains("legal_when_quiescent.scenario:3: step"),
            "{step}: {err}"
        );
    }

    for (args, field) in [
        (
            vec!["check", "--algo", "me-rl", "--graph", "blob:4"],
            "--graph",
        ),
        (
            vec![
                "check",
                "--algo",
                "le-ingram",
                "--graph",
                "path:3",
                "--requests",
                "1",
            ],
            "--requests",
        ),
    ] {
        let out = linkrev(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(field), "{err}");
    }
}

/// A scenario file is checked step by step against the model before the simulator
/// replays it: a step impossible where it stands is `file:line: step: …`, exit 2. (A
/// `release` by nobody in the CS used to report "4294967295 nodes in the critical
/// section", exit 0.)
#[test]
fn an_impossible_scenario_step_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&str, &str, &str)] = &[
        (
            "algorithm me-rl\nnodes 2\nlink 0 1\n# the token is at 0, nobody asked\nstep release 0\n",
            "5",
            "step 1: node 0 is not in its critical section",
        ),
        (
            "algorithm me-rl\nnodes 2\nlink 0 1\nstep request 1\nstep deliver 0 1\n",
            "5",
            "step 2: nothing in flight from 0 to 1",
        ),
        (
            "algorithm le-malpani\nnodes 2\nlink 0 1\nstep request 1\n",
            "4",
            "step 1: a leader-election algorithm takes no CS requests",
        ),
        (
            "algorithm me-rl\nnodes 2\nlink 0 1\nstep link 0 1 up\n",
            "4",
            "step 1: link 0 - 1 is already up",
        ),
    ];
    // `linkrev run --scenario` on `text`, written as `name`.
    let replay = |name: &str, text: &str| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .args(["run", "--scenario", file.to_str().unwrap()])
            .output()
            .unwrap()
    };
    for (k, (text, line, message)) in cases.iter().enumerate() {
        let out = replay(&format!("s{k}.scenario"), text);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{text}: {stderr}");
        let at = format!("s{k}.scenario:{line}: step: {message}");
        assert!(stderr.contains(&at), "{text}: expected `{at}` in {stderr}");
    }
    // More nodes than the checker's states hold (its link set has 11 nodes' bits) is
    // refused at load: 13 nodes once made link 11-12 share a bit with 0-5.
    let text = "algorithm me-rl\nnodes 13\nlink 0 5\nstep link 0 5 down\n";
    let err = Scenario::parse(text, "x", |a| Algorithm::parse(a).is_some()).unwrap_err();
    assert!(
        err.to_string()
            .contains("x:2: nodes: expected a node count from 1 to 11"),
        "{err}"
    );
    let text =
        "algorithm me-rl\nnodes 11\nlink 0 5\nlink 9 10\nstep link 0 5 down\nstep link 9 10 down\n";
    let out = replay("eleven.scenario", text);
    assert!(
        out.status.success(),
        "the largest scenario replays its link steps: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A line given twice is an error too.
    let text = "algorithm me-rl\nnodes 2\nnodes 3\n";
    let err = Scenario::parse(text, "x", |a| Algorithm::parse(a).is_some()).unwrap_err();
    assert!(err.to_string().contains("x:3: nodes: given twice"), "{err}");
    // A possible execution still replays: request, the token's Request travels, the
    // token comes back, node 1 enters and leaves.
    let out = replay(
        "fine.scenario",
        "algorithm me-rl\nnodes 2\nlink 0 1\nstep request 1\nstep deliver 1 0\nstep deliver 0 1\nstep release 1\n",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A bad `param` line in a scenario file is that file's error at that line, not a
/// `--param` flag's; a node id beyond the scenario's nodes too.
#[test]
fn a_bad_param_line_is_named_by_its_line() {
    let dir = tempfile::tempdir().unwrap();
    for (text, line, phrase) in [
        (
            "algorithm me-rl\nparam holder=0\nparam speed=3\nnodes 2\n",
            3,
            "speed",
        ),
        ("algorithm me-rl\nparam holder=9\nnodes 2\n", 2, "holder"),
    ] {
        let file = dir.path().join("p.scenario");
        std::fs::write(&file, text).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .args(["run", "--scenario", file.to_str().unwrap()])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("p.scenario:{line}: param: me-rl: ")),
            "{text}: {stderr}"
        );
        assert!(stderr.contains(phrase), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// `--strategy random`: seeded random executions find le-malpani's counterexample on
/// the paw, replayable step by step; where nothing is found the verdict says how many
/// executions were run, never "holds"; the same seed gives the same report.
#[test]
fn random_executions_find_the_counterexample_and_never_claim_holds() {
    let random = |executions, seed| CheckSetup {
        strategy: linkrev::check::Strategy::Random { executions, seed },
        ..setup(paw(), 1, 0, 30)
    };
    let malpani = check("le-malpani", &random(2000, 7));
    let Verdict::Violated { detail, path, .. } = verdict(&malpani, "legal_when_quiescent") else {
        panic!("le-malpani not caught in 2000 random executions: {malpani:?}");
    };
    assert!(detail.contains("is not in the component"), "{detail}");
    let again = check("le-malpani", &random(2000, 7));
    assert_eq!(
        format!("{:?}", verdict(&again, "legal_when_quiescent")),
        format!("{:?}", verdict(&malpani, "legal_when_quiescent")),
        "same seed, same executions"
    );
    assert!(!path.is_empty());

    let ingram = check("le-ingram", &random(300, 7));
    assert_eq!(
        *verdict(&ingram, "legal_when_quiescent"),
        Verdict::NoViolationFound { executions: 300 }
    );
    // On a graph too large to close: 8 nodes in a ring, RL with two requests.
    let ring = SmallGraph::parse("ring:8").unwrap();
    let rl = check(
        "me-rl",
        &CheckSetup {
            strategy: linkrev::check::Strategy::Random {
                executions: 200,
                seed: 1,
            },
            ..setup(ring, 2, 2, 60)
        },
    );
    for p in &rl.properties {
        assert!(
            matches!(p.verdict, Verdict::NoViolationFound { executions: 200 }),
            "{}: {:?}",
            p.name,
            p.verdict
        );
    }
}

/// `--changes-mode connected`: a link goes down only if the graph stays connected, so
/// Gafni–Bertsekas reversal converges and its state space closes. Unrestricted changes
/// cut a component off from the destination, where heights grow without bound: on the
/// ring, the search closes only with heights renormalized (the component's reversal
/// becomes a cycle), and is cut without.
#[test]
fn connected_changes_give_gafni_bertsekas_a_verdict() {
    for algorithm in ["gb-full", "gb-partial"] {
        for graph in ["ring:4", "star:4", "complete:4"] {
            let base = setup(SmallGraph::parse(graph).unwrap(), 2, 0, 30);
            let base = CheckSetup {
                change_mode: ChangeMode::Overlap,
                ..base
            };
            let connected = check(
                algorithm,
                &CheckSetup {
                    connected: true,
                    ..base.clone()
                },
            );
            let property = "destination_oriented_when_quiescent";
            // In the ring two failures cut nodes off from the destination.
            if graph == "ring:4" {
                let free = check(algorithm, &base);
                assert_eq!(*verdict(&free, property), Verdict::Holds, "{algorithm}");
                let as_they_are = CheckSetup {
                    renormalize: false,
                    partial_order: true,
                    ..base.clone()
                };
                let free = check(algorithm, &as_they_are);
                assert_eq!(*verdict(&free, property), Verdict::Unknown, "{algorithm}");
            }
            assert_eq!(
                *verdict(&connected, property),
                Verdict::Holds,
                "{algorithm} {graph}: {connected:?}"
            );
            assert!(!connected.truncated && connected.change_mode == "connected");
        }
    }
}

/// RL with a planted bug: a node that queues a neighbour's request forgets to forward
/// it towards the token (RL's handler runs, and its `Request` sends are dropped). The
/// requester then waits for good, although no link ever changes.
///
/// With `CHATTY`, a planted livelock besides: nodes greet every neighbour at the start
/// and answer every `LinkInfo` with their own, so two `LinkInfo`s bounce over every link
/// for ever. A stranded request then never reaches a terminal state, where the bounded
/// `requests_served` looks; only the fair-cycle search sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PlantedRl<const CHATTY: bool>(linkrev::protocol::me_rl::Rl);

/// The forgetful RL.
type ForgetfulRl = PlantedRl<false>;
/// The forgetful, chatty RL.
type ChattyForgetfulRl = PlantedRl<true>;

impl<const CHATTY: bool> Protocol for PlantedRl<CHATTY> {
    type Msg = linkrev::protocol::me_rl::RlMsg;
    type Config = linkrev::protocol::TokenStart;
    const STARTS: bool = CHATTY;

    fn initial_states(config: &Self::Config, neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        linkrev::protocol::me_rl::Rl::initial_states(config, neighbours)
            .into_iter()
            .map(PlantedRl)
            .collect()
    }

    // The bug drops sends and the echo copies a height: RL's claims still hold, so the
    // checker's quotients and gap abstraction apply to it as to RL.
    const SHIFT_INVARIANT: bool = true;
    const LEVELS_STEP_BY_ONE: bool = true;
    // RL sends to neighbours only: persistent sets apply, as to RL.
    const READS_TIME: bool = false;
    const SENDS_ROUTED: bool = false;

    fn height_floor(&self) -> Option<[i64; 2]> {
        self.0.height_floor()
    }

    fn shift_heights(&mut self, by: [i64; 2]) {
        self.0.shift_heights(by);
    }

    fn for_each_level(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        self.0.for_each_level(visit);
    }

    fn on_start(&mut self, ctx: &mut Ctx<Self::Msg>) {
        for j in self.0.neighbours() {
            ctx.send(
                j,
                linkrev::protocol::me_rl::RlMsg::LinkInfo(self.0.height()),
            );
        }
    }

    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<Self::Msg>) {
        self.0.on_link_up(peer, ctx);
    }

    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<Self::Msg>) {
        self.0.on_link_down(peer, ctx);
    }

    fn on_message(&mut self, from: NodeId, msg: Self::Msg, ctx: &mut Ctx<Self::Msg>) {
        use linkrev::protocol::Effect;
        use linkrev::protocol::me_rl::RlMsg;
        let request = matches!(msg, RlMsg::Request(_));
        let echo = CHATTY && matches!(msg, RlMsg::LinkInfo(_));
        self.0.on_message(from, msg, ctx);
        if request {
            // The bug: the forward of a queued request is never sent.
            ctx.retain(|effect| {
                !matches!(
                    effect,
                    Effect::Send {
                        msg: RlMsg::Request(_),
                        ..
                    }
                )
            });
        }
        if echo {
            ctx.send(from, RlMsg::LinkInfo(self.0.height()));
        }
    }

    fn on_app(&mut self, event: AppEvent, ctx: &mut Ctx<Self::Msg>) {
        self.0.on_app(event, ctx);
    }
}

impl<const CHATTY: bool> TokenView for PlantedRl<CHATTY> {
    fn holds_token(&self) -> bool {
        self.0.holds_token()
    }

    fn in_cs(&self) -> bool {
        self.0.in_cs()
    }
}

impl<const CHATTY: bool> linkrev::protocol::ReplayView for PlantedRl<CHATTY> {
    fn label(&self) -> String {
        self.0.label()
    }

    fn points_to(&self, peer: NodeId, other: &Self) -> Option<bool> {
        self.0.points_to(peer, &other.0)
    }

    fn describe(&self) -> String {
        self.0.describe()
    }
}

/// The checker catches the planted bug with a shortest execution: a request at a node
/// two hops from the token, delivered once to a neighbour that forgets to forward it
/// (2 steps; no shorter execution can strand a request). The same configuration holds
/// for RL itself, and the bug is invisible to the safety properties.
#[test]
fn a_bug_planted_in_rl_is_caught_by_a_shortest_execution() {
    let forgetful = linkrev::registry::mutual_exclusion::<ForgetfulRl>(
        "me-rl-forgetful",
        "RL whose nodes forget to forward a queued request (a planted bug)",
    );
    for graph in ["path:3", "path:4", "ring:4"] {
        let mut s = setup(SmallGraph::parse(graph).unwrap(), 0, 1, 30);
        s.change_mode = ChangeMode::Overlap;
        let report = forgetful.check(&forgetful.default_params(), &s);
        let Verdict::Violated { steps, detail, .. } = verdict(&report, "requests_served") else {
            panic!("{graph}: the planted bug is not caught: {report:?}");
        };
        assert_eq!(steps.len(), 2, "{graph}: {steps:?}");
        assert!(steps[0].starts_with("request at"), "{graph}: {steps:?}");
        assert!(steps[1].starts_with("deliver"), "{graph}: {steps:?}");
        assert!(detail.contains("still waits"), "{graph}: {detail}");
        for safety in ["at_most_k_in_cs", "token_count"] {
            assert!(
                matches!(verdict(&report, safety), Verdict::Holds),
                "{graph}"
            );
        }
        let rl = check("me-rl", &s);
        assert!(
            rl.properties
                .iter()
                .all(|p| matches!(p.verdict, Verdict::Holds)),
            "{graph}: RL itself: {rl:?}"
        );
        // With a change overlapping traffic (spent before a state is terminal) and the
        // gap abstraction on (with sleep sets), a violation as short as the exact
        // search's is found, replayed on the real system and reported.
        s.changes = 1;
        let exact = forgetful.check(&forgetful.default_params(), &s);
        s.abstract_gaps = true;
        let report = forgetful.check(&forgetful.default_params(), &s);
        assert!(
            report.gaps_abstracted && report.partial_order && !exact.gaps_abstracted,
            "{graph}: sleep sets and the abstraction together"
        );
        let length = |r: &CheckReport| match verdict(r, "requests_served") {
            Verdict::Violated { steps, .. } => steps.len(),
            v => panic!("{graph}: the planted bug is not caught: {v:?}"),
        };
        assert_eq!(length(&report), length(&exact), "{graph}");
    }
}

/// A reported liveness violation as a lasso: its path, and its stem's length read from
/// the verdict's detail ("after N steps, the last M repeat for ever").
fn lasso_of(path: &[Step], detail: &str) -> linkrev::check::liveness::Lasso {
    let stem: usize = detail
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{detail}"));
    linkrev::check::liveness::Lasso {
        path: path.to_vec(),
        stem,
        detail: String::new(),
    }
}

/// Asserts that the lasso `path` (with its stem read from `detail`) is a real violation
/// of `property` in `model` (`liveness::replays`: every step enabled, bad all along, the
/// cycle closes and is fair), and that the same path with its cycle cut short is not.
fn assert_real_lasso<P: Protocol>(
    model: &linkrev::check::model::ProtocolModel<P>,
    property: &str,
    path: &[Step],
    detail: &str,
) {
    let index = model
        .properties
        .iter()
        .position(|p| p.name == property)
        .unwrap();
    let lasso = lasso_of(path, detail);
    assert!(
        lasso.stem < path.len(),
        "a cycle follows the stem: {detail}"
    );
    assert!(
        linkrev::check::liveness::replays(model, &lasso, index),
        "the cycle is not a real fair one: {detail}"
    );
    let cut_short = linkrev::check::liveness::Lasso {
        path: path[..path.len() - 1].to_vec(),
        ..lasso
    };
    assert!(
        !linkrev::check::liveness::replays(model, &cut_short, index),
        "a cycle that does not close must not count: {detail}"
    );
}

/// Persistent sets alone ([`PersistentSets::Always`]) catch both planted bugs, each by a
/// real execution: the stranded request in a terminal state, and the livelock as a fair
/// cycle that returns to the state where it starts, the request waiting all along.
/// Taken once the change (for the first) and the request are spent, from states where
/// they prune.
#[test]
fn persistent_sets_alone_catch_both_planted_bugs() {
    use linkrev::check::PersistentSets;
    fn caught<P>(
        algorithm: &linkrev::registry::AlgorithmDef,
        (graph, changes): (&str, u8),
        property: &str,
    ) where
        P: Protocol + TokenView,
        MutualExclusion: Watches<P>,
    {
        let mut s = setup(SmallGraph::parse(graph).unwrap(), changes, 1, 100);
        s.change_mode = ChangeMode::Overlap;
        s.symmetry = false;
        s.cut_off = true;
        s.abstract_gaps = true;
        s.persistent_sets = PersistentSets::Always;
        let report = algorithm.check(&algorithm.default_params(), &s);
        assert!(report.persistent_sets, "{graph}: {report:?}");
        let Verdict::Violated { path, detail, .. } = verdict(&report, property) else {
            panic!("{graph}: {property} not caught: {report:?}");
        };
        // The same bug without persistent sets, by an execution as short or shorter.
        s.persistent_sets = PersistentSets::Off;
        let full = algorithm.check(&algorithm.default_params(), &s);
        let Verdict::Violated { path: shortest, .. } = verdict(&full, property) else {
            panic!("{graph}: {property} not caught without persistent sets");
        };
        if !detail.contains("repeat for ever") {
            // A lasso is chosen by its stem, whose end may differ between the two graphs.
            assert!(shortest.len() <= path.len(), "{graph}");
        }
        // Replayed on the real system: every step enabled, ending bad.
        let mut model = <MutualExclusion as Watches<P>>::model(Default::default(), &s);
        model.renormalize = true;
        let index = model
            .properties
            .iter()
            .position(|p| p.name == property)
            .unwrap();
        if detail.contains("repeat for ever") {
            let lasso = lasso_of(path, detail);
            assert!(
                linkrev::check::liveness::replays(&model, &lasso, index),
                "{graph}: the cycle is not a real fair one"
            );
        } else {
            let last = model.replay_exactly(path).expect("every step enabled");
            assert!(model.terminal(&last), "{graph}");
            assert!(model.judge(index, &last).is_err(), "{graph}: {detail}");
        }
    }
    let forgetful = linkrev::registry::mutual_exclusion::<ForgetfulRl>(
        "me-rl-forgetful",
        "RL whose nodes forget to forward a queued request (a planted bug)",
    );
    let chatty = linkrev::registry::mutual_exclusion::<ChattyForgetfulRl>(
        "me-rl-chatty-forgetful",
        "RL whose nodes echo every LinkInfo and forget queued requests (a planted bug)",
    );
    for graph in ["path:4", "ring:4"] {
        caught::<ForgetfulRl>(&forgetful, (graph, 1), "requests_served");
        // The echoes never stop: with a change as well, the search does not close.
        caught::<ChattyForgetfulRl>(&chatty, (graph, 0), "requests_eventually_served");
    }
}

/// The fair-cycle search catches the planted livelock, which the bounded terminal-state
/// property cannot (there is no terminal state): a lasso whose cycle, replayed from
/// the state where it starts, returns to that state, while the request waits in the
/// token's component all along.
#[test]
fn a_livelock_planted_in_rl_is_caught_as_a_fair_cycle() {
    let chatty = linkrev::registry::mutual_exclusion::<ChattyForgetfulRl>(
        "me-rl-chatty-forgetful",
        "RL whose nodes echo every LinkInfo and forget queued requests (a planted bug)",
    );
    for graph in ["path:3", "ring:4"] {
        let s = setup(SmallGraph::parse(graph).unwrap(), 0, 1, 30);
        let report = chatty.check(&chatty.default_params(), &s);
        assert!(report.cut_by.is_none(), "{graph}: {report:?}");
        assert!(
            matches!(verdict(&report, "requests_served"), Verdict::Holds),
            "{graph}: no terminal state, so the bounded property holds"
        );
        let Verdict::Violated { path, detail, .. } = verdict(&report, "requests_eventually_served")
        else {
            panic!("{graph}: the livelock is not caught: {report:?}");
        };
        assert!(detail.contains("repeat for ever"), "{graph}: {detail}");
        // The same lasso on every run: no map's iteration order chooses its cycle.
        for _ in 0..3 {
            let again = chatty.check(&chatty.default_params(), &s);
            assert_eq!(
                verdict(&again, "requests_eventually_served"),
                verdict(&report, "requests_eventually_served"),
                "{graph}"
            );
        }
        let lasso = lasso_of(path, detail);
        let stem = lasso.stem;
        assert!(stem < path.len(), "{graph}: a cycle follows the stem");
        // Replay through the model: the state after the cycle is the state before it.
        let model = <MutualExclusion as Watches<ChattyForgetfulRl>>::model(Default::default(), &s);
        let mut state = model.initial();
        let mut at_stem = None;
        for (i, step) in path.iter().enumerate() {
            if i == stem {
                at_stem = Some(state.clone());
            }
            state = model.step(&state, step.clone()).expect("enabled");
            assert!(
                !state.waiting.is_empty() || i < stem,
                "{graph}: served on the cycle"
            );
        }
        let mut at_stem = at_stem.unwrap();
        model.quotient_without_renaming(&mut at_stem);
        model.quotient_without_renaming(&mut state);
        assert_eq!(state, at_stem, "{graph}: the cycle does not close");
        assert!(
            matches!(verdict(&report, "at_most_k_in_cs"), Verdict::Holds)
                && matches!(verdict(&report, "token_count"), Verdict::Holds),
            "{graph}"
        );
        // With the gap abstraction a lasso counts only once it replays on the real
        // system (`liveness::replays`): this one does, and the same path with its cycle
        // cut short does not.
        let mut model = model;
        model.renormalize = true;
        model.gaps = true;
        assert_real_lasso(&model, "requests_eventually_served", path, detail);
    }
}

/// With the default budget, one thread and leader election's default change mode (its
/// paper's one change at a time): `le-ingram` holds on path:4 with three changes, and
/// `le-malpani`'s counterexample on the paw is found, as the command line gives them.
#[test]
fn leader_election_verdicts_with_the_default_budget() {
    let check = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .arg("check")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, text) = check(&["--algo", "le-ingram", "--graph", "path:4", "--changes", "3"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("3 changes (serialize)"), "{text}");
    assert!(text.contains("(complete)"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("legal_when_quiescent") && l.contains(" holds ")),
        "{text}"
    );
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("paw.txt");
    std::fs::write(&edges, "0 1\n1 2\n1 3\n2 3\n").unwrap();
    let (code, text) = check(&["--algo", "le-malpani", "--graph", edges.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("VIOLATED in 25 steps"), "{text}");
}

/// A search cut by its budget proves no liveness property, but a fair cycle among the
/// states it stored is a real one. `le-tora5` on the paw with one failure (cutting the
/// triangle off from leader 0) has no quiescent violation within the default budget,
/// and its state space does not close: stale Updates keep reviving the lost leader,
/// each round with a new time stamp. Up to the stamps' ranking the rounds repeat, and
/// the cut search's stored states hold the cycle. The lasso replays on the real system:
/// the cycle, taken from the state where it starts, comes back to that state (up to
/// the exact quotients), passes only states where the triangle follows the lost leader
/// and takes every delivery that stays pending on it. Through the simulator
/// (`linkrev run --scenario`) no change converges.
#[test]
fn a_cut_search_still_shows_a_real_livelock() {
    let mut s = setup(paw(), 1, 0, 100);
    s.symmetry = false;
    let report = check("le-tora5", &s);
    assert!(
        report.cut_by.is_some(),
        "the state space closed: {report:?}"
    );
    assert!(
        matches!(verdict(&report, "legal_when_quiescent"), Verdict::Unknown),
        "{report:?}"
    );
    let Verdict::Violated { path, detail, .. } = verdict(&report, "eventually_legal") else {
        panic!("no livelock found: {report:?}");
    };
    assert!(
        detail.contains("repeat for ever") && detail.contains("cut by its budget"),
        "{detail}"
    );
    let mut model =
        <LeaderElection as Watches<linkrev::protocol::le_tora5::LeTora5>>::model((), &s);
    model.renormalize = true;
    assert_real_lasso(&model, "eventually_legal", path, detail);
    // Through the simulator: the change never converges.
    let scenario = Scenario {
        algorithm: "le-tora5".into(),
        params: Vec::new(),
        nodes: 4,
        links: paw().edges,
        steps: path.clone(),
    }
    .to_text("the stale-Update livelock");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("eventually_legal.scenario");
    std::fs::write(&file, scenario).unwrap();
    let out = linkrev(&["run", "--scenario", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("converged_fraction") && l.contains(" 0.0000 ")),
        "{text}"
    );
}

/// Random executions catch the same livelock as a cycle: an execution that comes back
/// to a state it passed (up to the ranking of the stamps) has run a cycle the system
/// can repeat for ever, which is a violation when it is fair and bad all along. The
/// lasso replays on the real system, the same seed gives the same lasso, and
/// `le-ingram`, the corrected algorithm, shows none.
#[test]
fn random_executions_catch_the_livelock_as_a_cycle() {
    let random = |executions, seed| CheckSetup {
        strategy: linkrev::check::Strategy::Random { executions, seed },
        symmetry: false,
        ..setup(paw(), 1, 0, 100)
    };
    let report = check("le-tora5", &random(5000, 3));
    let Verdict::Violated { path, detail, .. } = verdict(&report, "eventually_legal") else {
        panic!("no livelock in 5000 random executions: {report:?}");
    };
    assert!(detail.contains("repeat for ever"), "{detail}");
    let again = check("le-tora5", &random(5000, 3));
    assert_eq!(
        verdict(&again, "eventually_legal"),
        verdict(&report, "eventually_legal")
    );
    let mut model =
        <LeaderElection as Watches<linkrev::protocol::le_tora5::LeTora5>>::model((), &random(1, 1));
    model.renormalize = true;
    assert_real_lasso(&model, "eventually_legal", path, detail);
    let ingram = check("le-ingram", &random(2000, 3));
    assert_eq!(
        *verdict(&ingram, "eventually_legal"),
        Verdict::NoViolationFound { executions: 2000 }
    );
}

/// `check --table --algo A` gives only A's rows, each over all 40 graphs, with the
/// parameters given named in the header; `--param` without `--algo` is refused (exit 2,
/// naming the flag), as is a node id the table's 4-node graphs do not have.
#[test]
fn the_table_for_one_algorithm() {
    let out = linkrev(&[
        "check",
        "--table",
        "--algo",
        "me-krl",
        "--param",
        "k=3",
        "--max-states",
        "300",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("--table --algo me-krl --param k=3 ") && text.contains("`me-krl` with k=3"),
        "{text}"
    );
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| algorithm"))
        .map(|l| l.split('|').map(str::trim).collect())
        .collect();
    // 4 properties × 3 change budgets × 2 modes (overlap, its own, and serialize).
    assert_eq!(rows.len(), 24, "{text}");
    for row in &rows {
        assert_eq!(row[1], "me-krl", "{text}");
        let counts: u32 = row[5..8].iter().map(|n| n.parse::<u32>().unwrap()).sum();
        assert_eq!(counts, 40, "{row:?}");
    }
    for (args, field) in [
        (vec!["check", "--table", "--param", "k=3"], "--param"),
        (
            vec!["check", "--table", "--algo", "me-rl", "--param", "holder=7"],
            "--param",
        ),
    ] {
        let out = linkrev(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(field), "{err}");
    }
}

/// Runs the `linkrev` binary with `args`.
fn linkrev(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .unwrap()
}

/// The search tells its progress hook where it is every `every` transitions, with
/// counts that only grow and never pass the report's, and the liveness pass once as it
/// starts, over exactly the states the report counts (`linkrev check` prints its
/// progress lines from these calls).
#[test]
fn the_search_reports_its_progress_as_it_goes() {
    use linkrev::check::{ProgressHook, SearchProgress};
    use std::sync::{Arc, Mutex};
    let heard: Arc<Mutex<Vec<SearchProgress>>> = Arc::default();
    let every = 1000;
    let setup = CheckSetup {
        changes: 1,
        requests: 1,
        renormalize: true,
        partial_order: true,
        abstract_gaps: true,
        cut_off: true,
        progress: Some(ProgressHook {
            every,
            tell: Arc::new({
                let heard = Arc::clone(&heard);
                move |at: &SearchProgress| heard.lock().unwrap().push(*at)
            }),
        }),
        ..CheckSetup::plain(SmallGraph::parse("ring:4").unwrap())
    };
    let report = check("me-rl", &setup);
    assert!(report.cut_by.is_none(), "the search closes");
    let mut told = heard.lock().unwrap();
    // (generated, states, depth) of each report from the search.
    let searching: Vec<(usize, usize, usize)> = told
        .iter()
        .filter_map(|p| match *p {
            SearchProgress::Search {
                persistent: false,
                states,
                generated,
                max_states,
                depth,
            } => {
                assert_eq!(max_states, setup.max_states);
                Some((generated, states, depth))
            }
            _ => None,
        })
        .collect();
    let at: Vec<usize> = searching.iter().map(|s| s.0).collect();
    let expected: Vec<usize> = (1..=report.states_generated / every)
        .map(|k| k * every)
        .collect();
    assert!(
        expected.len() >= 5,
        "{} transitions",
        report.states_generated
    );
    assert_eq!(at, expected);
    for pair in searching.windows(2) {
        assert!(pair[0].1 <= pair[1].1 && pair[0].2 <= pair[1].2, "{pair:?}");
    }
    let &(_, states, depth) = searching.last().unwrap();
    assert!(states <= report.states && depth <= report.depth_reached);
    // Then the liveness pass, once, over every state the report counts; nothing else.
    assert_eq!(told.len(), searching.len() + 1, "{told:?}");
    assert_eq!(
        told.last(),
        Some(&SearchProgress::Liveness {
            states: report.states
        })
    );

    // Random executions report every `every` executions.
    told.clear();
    drop(told);
    let random = CheckSetup {
        strategy: check::Strategy::Random {
            executions: 3500,
            seed: 1,
        },
        ..setup.clone()
    };
    check("me-rl", &random);
    let told: Vec<SearchProgress> = heard.lock().unwrap().clone();
    let expected: Vec<SearchProgress> = (1..=3)
        .map(|k| SearchProgress::Random {
            executions: k * every as u64,
            of: 3500,
        })
        .collect();
    assert_eq!(told, expected);
}
