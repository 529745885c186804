//! The replay recorder (`linkrev replay`): its deltas add up to the state the nodes are
//! in, for every registered algorithm; the slides' worked examples reach the slides'
//! figures; bad windows are refused.

mod common;

use common::me_config;
use linkrev::NodeId;
use linkrev::mobility::rwp;
use linkrev::params::{AreaShape, scale_rwp};
use linkrev::registry::Algorithm;
use linkrev::replay::document::{Document, LinkState, NodeDrawing, Recorded};
use linkrev::replay::{self, Heading, Layout, Window, scenarios};
use linkrev::run::RunOutput;
use linkrev::sim::{ChangeMode, LinkBreak, RunConfig, SimTime};
use linkrev::topology::events::link_timeline;
use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// The state after the document's first `upto` events, by applying their deltas.
struct Rebuilt {
    links: BTreeMap<(NodeId, NodeId), i8>,
    nodes: Vec<NodeDrawing>,
    in_flight: BTreeSet<u64>,
}

fn rebuild(doc: &Document, upto: usize) -> Rebuilt {
    let mut state = Rebuilt {
        links: doc
            .initial
            .links
            .iter()
            .map(|l| ((l.0, l.1), l.2))
            .collect(),
        nodes: Vec::new(),
        in_flight: doc.initial.messages.iter().map(|m| m.0).collect(),
    };
    // When each message is due: an event delivers (or loses) exactly the message due
    // at its time, on its link.
    let mut due: std::collections::HashMap<u64, (NodeId, NodeId, f64)> = doc
        .initial
        .messages
        .iter()
        .map(|m| (m.0, (m.1, m.2, m.4)))
        .collect();
    let mut drawn = doc.initial.nodes.clone();
    for step in &doc.events[..upto] {
        for &(a, b) in &step.remove {
            assert!(
                state.links.remove(&(a, b)).is_some(),
                "removed {a}-{b} not up"
            );
        }
        for l in step.add.iter().chain(&step.orient) {
            state.links.insert((l.0, l.1), l.2);
        }
        for redrawn in &step.set {
            let node = redrawn.0 as usize;
            drawn[node] = redrawn.apply(&drawn[node]);
        }
        for m in &step.send {
            assert!(state.in_flight.insert(m.0), "message id {} reused", m.0);
            due.insert(m.0, (m.1, m.2, m.4));
        }
        for id in step.recv.iter().chain(&step.lost) {
            assert!(state.in_flight.remove(id), "message {id} arrived twice");
            let (_, to, at) = due[id];
            assert_eq!(
                at,
                step.time.as_secs_f64(),
                "message {id} matched at the wrong time"
            );
            assert_eq!(
                step.node,
                Some(to),
                "message {id} delivered to the wrong node"
            );
        }
    }
    state.nodes = drawn.iter().map(|d| doc.drawing(d)).collect();
    state
}

fn document(layout: Layout, window: Window, (output, run): (RunOutput, Recorded)) -> Document {
    let heading = Heading {
        title: "test".into(),
        command: "test".into(),
    };
    replay::document(heading, layout, window, &output, run)
}

fn config_for(algorithm: Algorithm, seed: u64, duration: f64) -> RunConfig {
    config_in(algorithm, seed, duration, ChangeMode::Overlap)
}

fn config_in(algorithm: Algorithm, seed: u64, duration: f64, changes: ChangeMode) -> RunConfig {
    let mut config = me_config(seed, duration, 0.5, 0.05, false);
    // Lost messages (a break restarts a link's FIFO order) and detection delays
    // exercise `lost` and `notify`; `serialize` applies several changes in one event.
    config.network.link_break = LinkBreak::Drop;
    config.network.detection_delay = linkrev::sim::Duration::from_secs_f64(0.01);
    config.network.changes = changes;
    if !algorithm.family().needs_workload() {
        config.workload = None;
    }
    config
}

/// For every algorithm, with changes applied as they come and serialized: a whole run's
/// deltas, applied up to time `t`, give the links, orientations, drawings and number of
/// messages in flight that a run stopped at `t` computes afresh from its nodes.
#[test]
fn deltas_add_up_to_the_state_computed_afresh_for_every_algorithm() {
    let trace = rwp::generate(&scale_rwp(12, AreaShape::Strip, 40.0, 7)).unwrap();
    let timeline = link_timeline(&trace, 250.0);
    assert!(timeline.events.len() > 20, "a run with topology changes");
    let runs =
        Algorithm::all().flat_map(|a| [(a, ChangeMode::Overlap), (a, ChangeMode::Serialize)]);
    for (algorithm, changes) in runs {
        let config_for = |algorithm, seed, duration| config_in(algorithm, seed, duration, changes);
        let params = algorithm.default_params();
        let end = SimTime::from_secs_f64(40.0);
        let whole = Window {
            from: SimTime::ZERO,
            to: end,
        };
        let recorded = algorithm.replay(&params, &timeline, config_for(algorithm, 3, 40.0), whole);
        let layout = Layout::of_trace(&trace, 0.0, 40.0);
        let doc = document(layout, whole, recorded);
        assert!(
            doc.events.len() > 50,
            "{algorithm}: {} events",
            doc.events.len()
        );
        for t in [0.5, 7.25, 19.0, 33.3] {
            let at = SimTime::from_secs_f64(t);
            let upto = doc.events.iter().take_while(|e| e.time <= at).count();
            let rebuilt = rebuild(&doc, upto);
            let stopped = Window { from: at, to: at };
            let (_, fresh) =
                algorithm.replay(&params, &timeline, config_for(algorithm, 3, t), stopped);
            let fresh = fresh.last;
            let links: Vec<LinkState> = rebuilt
                .links
                .iter()
                .map(|(&(a, b), &d)| LinkState(a, b, d))
                .collect();
            assert_eq!(
                links, fresh.links,
                "{algorithm} ({changes:?}) at {t} s: links"
            );
            assert_eq!(
                rebuilt.nodes, fresh.nodes,
                "{algorithm} ({changes:?}) at {t} s: drawings"
            );
            assert_eq!(
                rebuilt.in_flight.len(),
                fresh.in_flight,
                "{algorithm} ({changes:?}) at {t} s: messages in flight"
            );
        }
    }
}

/// A window's start state is what the whole run's deltas give at that time.
#[test]
fn a_cut_window_starts_from_the_state_the_run_reached() {
    let trace = rwp::generate(&scale_rwp(10, AreaShape::Strip, 30.0, 11)).unwrap();
    let timeline = link_timeline(&trace, 250.0);
    let algorithm = Algorithm::parse("me-rl").unwrap();
    let params = algorithm.default_params();
    let config = || config_for(algorithm, 5, 30.0);
    let whole = Window {
        from: SimTime::ZERO,
        to: SimTime::from_secs_f64(30.0),
    };
    let cut = Window {
        from: SimTime::from_secs_f64(12.0),
        to: SimTime::from_secs_f64(20.0),
    };
    let layout = Layout::of_trace(&trace, 0.0, 30.0);
    let all = algorithm.replay(&params, &timeline, config(), whole);
    let all = document(layout.clone(), whole, all);
    let part = algorithm.replay(&params, &timeline, config(), cut);
    let part = document(layout, cut, part);
    let before = all.events.iter().take_while(|e| e.time < cut.from).count();
    let rebuilt = rebuild(&all, before);
    let start: BTreeMap<_, _> = part
        .initial
        .links
        .iter()
        .map(|l| ((l.0, l.1), l.2))
        .collect();
    assert_eq!(start, rebuilt.links);
    let start_nodes: Vec<NodeDrawing> =
        part.initial.nodes.iter().map(|d| part.drawing(d)).collect();
    assert_eq!(start_nodes, rebuilt.nodes);
    assert_eq!(part.initial.messages.len(), rebuilt.in_flight.len());
    // The cut's events are the whole run's events in the window, one for one.
    let inside: Vec<_> = all
        .events
        .iter()
        .filter(|e| e.time >= cut.from && e.time <= cut.to)
        .map(|e| (e.time, e.kind, e.node, e.pair))
        .collect();
    let cut_events: Vec<_> = part
        .events
        .iter()
        .map(|e| (e.time, e.kind, e.node, e.pair))
        .collect();
    assert_eq!(cut_events, inside);
}

fn ht(lid: u32, tau: &str, oid: u32, r: u8, delta: i64, id: u32) -> String {
    format!("({lid}, {tau}, {oid}, {r}, {delta}, {id})")
}

/// Labels with each τ (the reference level's time, which depends on the clock) as `τ`.
fn without_tau(label: &str) -> String {
    let mut parts: Vec<String> = label
        .trim_matches(|c| c == '(' || c == ')')
        .split(", ")
        .map(str::to_string)
        .collect();
    if parts.len() == 6 && parts[1] != "0" && parts[1] != "-1" {
        parts[1] = "τ".into();
    }
    format!("({})", parts.join(", "))
}

fn builtin(name: &str) -> Document {
    let scenario = scenarios::find(name).expect("a built-in scenario");
    let window = replay::window(None, None, scenario.duration()).unwrap();
    let recorded = scenario.record(window);
    document(scenario.layout(), window, recorded)
}

/// The slides' seven-node example: fig. 1 (A elects itself; B and D on A's reflected
/// level) is reached, and the run ends in fig. 6, tuple for tuple.
#[test]
fn slides_le_b_reaches_the_slides_figures_1_and_6() {
    let (a, b, c, d, e, f, g, h) = (0, 1, 2, 3, 4, 5, 6, 7);
    let doc = builtin("slides-le-b");
    let fig1 = [
        (
            a,
            ht(a, "-1", 0, 0, 0, a).replace("(0, -1, 0,", "(0, -1, -1,"),
        ),
        (d, ht(f, "τ", a, 1, -1, d)),
        (e, ht(f, "0", 0, 0, 1, e)),
        (b, ht(f, "τ", a, 1, 0, b)),
        (
            f,
            ht(f, "-1", 0, 0, 0, f).replace("(5, -1, 0,", "(5, -1, -1,"),
        ),
        (h, ht(f, "0", 0, 0, 1, h)),
        (g, ht(f, "0", 0, 0, 2, g)),
    ];
    let reached = (0..=doc.events.len()).any(|k| {
        let nodes = rebuild(&doc, k).nodes;
        fig1.iter()
            .all(|(i, want)| without_tau(&nodes[*i as usize].label) == *want)
    });
    assert!(reached, "fig. 1 never shown");
    let last = rebuild(&doc, doc.events.len()).nodes;
    let fig6 = [
        (d, ht(a, "0", 0, 0, 1, d)),
        (a, "(0, -1, -1, 0, 0, 0)".to_string()),
        (e, ht(a, "0", 0, 0, 2, e)),
        (b, ht(a, "0", 0, 0, 1, b)),
        (f, ht(a, "0", 0, 0, 3, f)),
        (h, ht(a, "0", 0, 0, 4, h)),
        (g, ht(a, "0", 0, 0, 5, g)),
    ];
    for (i, want) in fig6 {
        assert_eq!(last[i as usize].label, want, "fig. 6, node {i}");
    }
    assert!(last[a as usize].flags.contains(&"leader"));
    assert_eq!(
        last[c as usize].leader,
        Some(c),
        "C leads itself throughout"
    );
}

/// The overview walk-through: the cut-off part A–E elects B; L keeps leading L and F.
#[test]
fn slides_le_a_ends_with_b_leading_the_cut_off_part() {
    let doc = builtin("slides-le-a");
    let last = rebuild(&doc, doc.events.len()).nodes;
    for (i, node) in last.iter().enumerate().take(5) {
        assert_eq!(node.leader, Some(1), "node {i}");
    }
    assert_eq!(last[5].leader, Some(5));
    assert_eq!(last[6].leader, Some(5));
    assert!(last[1].flags.contains(&"leader") && last[5].flags.contains(&"leader"));
    assert!(doc.violations.is_empty());
}

/// The RL walk-through does what its description says: 3 gets the token over 4 and
/// enters its CS; after 0–1 fails, 1 raises its height and enters its CS.
#[test]
fn slides_rl_shows_the_token_travel_and_a_height_raise() {
    let doc = builtin("slides-rl");
    let entered: Vec<NodeId> = doc
        .events
        .iter()
        .flat_map(|e| e.set.iter())
        .filter(|r| r.3.contains(&"cs"))
        .map(|r| r.0)
        .collect();
    assert_eq!(entered, [3, 1]);
    let down = doc.events.iter().position(|e| e.kind == "down").unwrap();
    let raised = doc.events[down..].iter().any(|e| {
        e.set
            .iter()
            .any(|r| r.0 == 1 && doc.strings[r.1 as usize].starts_with("(1,"))
    });
    assert!(raised, "node 1 raised its height after losing 0-1");
    let tokens = doc
        .events
        .iter()
        .filter(|e| e.send.iter().any(|m| m.3 == "Token"))
        .count();
    assert!(tokens >= 4, "the token travelled: {tokens} hops");
    let last = rebuild(&doc, doc.events.len()).nodes;
    assert!(last[1].flags.contains(&"token"));
}

fn linkrev(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
}

#[test]
fn the_cli_writes_one_self_contained_page_and_refuses_bad_windows() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("run.html");
    let page_s = page.to_str().unwrap();
    let out = linkrev(&[
        "replay",
        "--algo",
        "me-rl",
        "--rwp",
        "nodes=8,duration=20",
        "--seed",
        "2",
        "-o",
        page_s,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("linkrev-replay/1"));
    assert!(!html.contains("/*LINKREV_REPLAY_DATA*/"));
    for external in ["src=\"http", "href=\"http", "@import", "fetch("] {
        assert!(!html.contains(external), "external resource: {external}");
    }
    for (flags, field) in [
        (&["--from", "30"][..], "--from"),
        (&["--to", "-1"][..], "--to"),
        (&["--from", "5", "--to", "2"][..], "--to"),
    ] {
        let bad = dir.path().join("bad.html");
        let mut args = vec![
            "replay",
            "--algo",
            "me-rl",
            "--rwp",
            "nodes=8,duration=20",
            "-o",
            bad.to_str().unwrap(),
        ];
        args.extend(flags);
        let out = linkrev(&args);
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(field), "{flags:?}: {err}");
        assert!(!bad.exists(), "no page written for {flags:?}");
    }
    let help = String::from_utf8_lossy(&linkrev(&["replay", "--help"]).stdout).into_owned();
    for builtin in scenarios::BUILTINS {
        assert!(
            help.contains(builtin.name),
            "--help does not name {}",
            builtin.name
        );
    }
    let out = linkrev(&["replay", "--scenario", "slides-nothing", "-o", page_s]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("slides-nothing"));
}

/// `linkrev run` names the replay command for its first violation, and that command
/// runs and marks the violation on the timeline.
#[test]
fn run_prints_a_replay_command_for_its_first_violation() {
    let dir = tempfile::tempdir().unwrap();
    // le-malpani's known flaw under partitions: a dense enough 30-node run shows it.
    let out = linkrev(&[
        "run",
        "--algo",
        "le-malpani",
        "--rwp",
        "nodes=30,duration=200",
        "--seed",
        "3",
    ]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("replay it"))
        .unwrap_or_else(|| panic!("no replay command in:\n{text}"));
    let command = line.trim_start_matches("replay it").trim();
    let mut words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
    assert_eq!(words[0], "linkrev");
    assert_eq!(words[1], "replay");
    let page = dir.path().join("violation.html");
    let json = dir.path().join("violation.json");
    let o = words.iter().position(|w| w == "-o").unwrap();
    words[o + 1] = page.to_str().unwrap().to_string();
    words.extend(["--json-out".to_string(), json.to_str().unwrap().to_string()]);
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(&words[1..])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(
        !doc["violations"].as_array().unwrap().is_empty(),
        "the violation is marked"
    );
}

/// Words of a POSIX shell command line with single-quoted parts (as the report quotes).
fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => (quoted, any) = (!quoted, true),
            ' ' if !quoted => {
                if any {
                    words.push(std::mem::take(&mut word));
                }
                any = false;
            }
            c => (word, any) = (word + &c.to_string(), true),
        }
    }
    if any {
        words.push(word);
    }
    words
}

/// A sweep whose runs show le-malpani's known flaw: the report names the violating run
/// with a replay command, which reproduces the run (the same violation count as stored)
/// and marks the violation on the page's timeline; `linkrev run --run KEY` reproduces
/// the stored run alone.
#[test]
fn the_report_gives_each_violating_run_a_replay_command_that_shows_it() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("flaw.toml");
    std::fs::write(
        &spec,
        "name = \"flaw\"\nmaster_seed = 1\nreplications = 6\nalgorithms = [\"le-malpani\"]\n\n\
         [mobility]\nnodes = 30\narea = \"1500x300\"\nspeed_min = 1.0\nspeed_max = 20.0\n\
         pause = 30.0\nduration = 200.0\n",
    )
    .unwrap();
    let results = tmp.path().join("results");
    let report = tmp.path().join("report");
    let ok = |out: std::process::Output| {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    ok(linkrev(&[
        "sweep",
        spec.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]));
    ok(linkrev(&[
        "report",
        results.to_str().unwrap(),
        "--out",
        report.to_str().unwrap(),
    ]));
    let page = std::fs::read_to_string(report.join("index.html")).unwrap();
    let commands: Vec<String> = page
        .split("<code class=\"replay\">")
        .skip(1)
        .map(|s| s[..s.find("</code>").unwrap()].replace("&#39;", "'"))
        .collect();
    assert!(!commands.is_empty(), "no replay command in the report");
    let mut words = shell_words(&commands[0]);
    assert_eq!(&words[..2], ["linkrev", "replay"]);
    let key = words[words.iter().position(|w| w == "--run").unwrap() + 1].clone();
    let o = words.iter().position(|w| w == "-o").unwrap();
    let html = tmp.path().join("violation.html");
    let json = tmp.path().join("violation.json");
    words[o + 1] = html.to_str().unwrap().to_string();
    words.extend(["--json-out".to_string(), json.to_str().unwrap().to_string()]);
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    let printed = ok(linkrev(&args));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(
        !doc["violations"].as_array().unwrap().is_empty(),
        "the violation is on the page's timeline"
    );
    assert!(printed.contains("safety violations"));
    // The run alone, as stored: the same count of violations as the report's runs table.
    let alone = ok(linkrev(&[
        "run",
        "--results",
        results.to_str().unwrap(),
        "--run",
        &key,
    ]));
    let count = |text: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.starts_with("safety violations"))
            .unwrap();
        line.split_whitespace().last().unwrap().parse().unwrap()
    };
    let listed = &page[page.find(&format!("<li><code>{key}</code>")).unwrap()..];
    let stored: u64 = listed[listed.find("): seed ").unwrap()..]
        .split(": ")
        .nth(2)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(stored >= 1);
    assert_eq!(count(&alone), stored, "{alone}");
    let bad = linkrev(&[
        "run",
        "--results",
        results.to_str().unwrap(),
        "--run",
        "flaw/nope",
    ]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("flaw/nope"));
}

/// Under `drop` a break restarts a link's FIFO order: a message sent after the link came
/// back may arrive before one sent before the break (which is then lost). A link that
/// flaps faster than the delays makes that happen; every arrival must still be matched
/// to the message due at its time.
#[test]
fn messages_are_matched_when_new_ones_overtake_lost_ones() {
    use linkrev::topology::events::LinkChange::{Down, Up};
    let mut flaps = Vec::new();
    for k in 0..300 {
        let t = 1.0 + k as f64 * 0.001;
        flaps.push((t, 0, 1, Down));
        flaps.push((t + 0.0005, 0, 1, Up));
    }
    let timeline = common::timeline(3, 3.0, &[(0, 1), (1, 2)], &flaps);
    for name in ["le-malpani", "me-rl"] {
        let algorithm = Algorithm::parse(name).unwrap();
        let mut config = config_for(algorithm, 9, 3.0);
        config.network.detection_delay = linkrev::sim::Duration(0);
        let whole = Window {
            from: SimTime::ZERO,
            to: SimTime::from_secs_f64(3.0),
        };
        let recorded = algorithm.replay(&algorithm.default_params(), &timeline, config, whole);
        let layout = Layout::circle(3);
        let doc = document(layout, whole, recorded);
        let lost = doc.events.iter().filter(|e| !e.lost.is_empty()).count();
        assert!(lost > 10, "{name}: {lost} losses");
        // `rebuild` checks each arrival against the time its message was due.
        rebuild(&doc, doc.events.len());
    }
}

/// Every link of `links` is drawn once, from the higher height to the lower, and each
/// node's label is its height.
fn drawn_downwards<P>(
    what: &str,
    h: &linkrev::protocol::testkit::Harness<P>,
    links: &[(NodeId, NodeId)],
) where
    P: linkrev::protocol::ReplayView + linkrev::protocol::HeightView,
    P::Height: std::fmt::Display,
{
    for &(i, j) in links {
        let (p, q) = (&h.nodes[i as usize], &h.nodes[j as usize]);
        let down = p.height() > q.height();
        assert_eq!(p.points_to(j, q), Some(down), "{what}: {i} → {j}");
        assert_eq!(q.points_to(i, p), Some(!down), "{what}: {j} → {i}");
    }
    for p in &h.nodes {
        assert_eq!(p.label(), p.height().to_string(), "{what}");
    }
}

/// The replay's arrows of every height-based protocol, and Raymond's along `HOLDER`,
/// after link changes have been handled (mutation testing found them unchecked).
#[test]
fn the_replay_orients_each_drawn_link_as_the_protocol_does() {
    use linkrev::protocol::me_krl::{Krl, KrlConfig};
    use linkrev::protocol::me_raymond::Raymond;
    use linkrev::protocol::testkit::Harness;
    use linkrev::protocol::{AppEvent, ReplayView as _};
    let start = [(0, 1), (1, 2), (2, 3), (3, 0), (1, 3)];
    let after = [(0, 1), (1, 2), (3, 0), (1, 3)];
    macro_rules! changed {
        ($p:ty) => {{
            let mut h = Harness::<$p>::new(4, &start);
            h.link_down(2, 3);
            h.deliver_all(10_000);
            h
        }};
    }
    drawn_downwards(
        "le-ingram",
        &changed!(linkrev::protocol::le_ingram::LeIngram),
        &after,
    );
    drawn_downwards(
        "gb-full",
        &changed!(linkrev::protocol::route_gb::GbFull),
        &after,
    );
    drawn_downwards(
        "gb-partial",
        &changed!(linkrev::protocol::route_gb::GbPartial),
        &after,
    );
    let mut krl = Harness::<Krl>::configured(
        &KrlConfig {
            k: 2,
            forwarding: false,
        },
        4,
        &start,
    );
    krl.app(2, AppEvent::RequestCs);
    krl.link_down(2, 3);
    krl.deliver_all(10_000);
    for (i, j) in after {
        let (p, q) = (&krl.nodes[i as usize], &krl.nodes[j as usize]);
        let down = p.rl().height() > q.rl().height();
        assert_eq!(p.points_to(j, q), Some(down), "me-krl: {i} → {j}");
        assert_eq!(q.points_to(i, p), Some(!down), "me-krl: {j} → {i}");
        assert_eq!(p.label(), p.rl().height().to_string());
    }

    // Raymond: a tree link points from a node to its HOLDER, and no other link points.
    let mut ray = Harness::<Raymond>::new(4, &[(0, 1), (1, 2), (1, 3)]);
    ray.app(3, AppEvent::RequestCs);
    ray.deliver_all(10_000);
    for (i, j) in [(0, 1), (1, 2), (1, 3), (0, 2)] {
        let (p, q) = (&ray.nodes[i as usize], &ray.nodes[j as usize]);
        let expected = if p.holder() == j && p.holder() != i {
            Some(true)
        } else if q.holder() == i && q.holder() != j {
            Some(false)
        } else {
            None
        };
        assert_eq!(p.points_to(j, q), expected, "raymond: {i} → {j}");
        assert_eq!(
            q.points_to(i, p),
            expected.map(|d| !d),
            "raymond: {j} → {i}"
        );
    }
}
