//! Messages by kind and messages in a component without a token, through the simulator's
//! front door (`Algorithm::run`), on hand-written timelines whose answers follow from
//! the topology alone.

mod common;

use common::{me_config, timeline};
use linkrev::protocol::{AlgoParams, ParamValue};
use linkrev::registry::Algorithm;
use linkrev::run::RunOutput;
use linkrev::topology::events::LinkChange;

const DURATION: f64 = 10.0;

fn run(name: &str, holder: i64, rate: f64, events: &[(f64, u32, u32, LinkChange)]) -> RunOutput {
    let algorithm = Algorithm::parse(name).unwrap();
    let params =
        AlgoParams::resolve(algorithm.params(), [("holder", ParamValue::Int(holder))]).unwrap();
    let tl = timeline(4, DURATION, &[(0, 1), (1, 2), (2, 3)], events);
    algorithm.run(&params, &tl, me_config(7, DURATION, rate, 0.01, true))
}

fn count(out: &RunOutput, column: &str) -> u64 {
    out.summary.metrics.count(column).unwrap()
}

/// On the path 0-1-2-3 with no CS requests, nothing is sent until the link 1-2 fails;
/// then the half without the token reverses for the rest of the run (RL's partition
/// behaviour) and the half with it is silent. So every message is a LinkInfo (or a
/// Request its raising nodes forward) sent without a token, whichever side holds it.
#[test]
fn rl_messages_after_a_cut_are_all_in_the_component_without_the_token() {
    let cut = [(1.0, 1, 2, LinkChange::Down)];
    for holder in [0, 3] {
        let out = run("me-rl", holder, 1e-9, &cut);
        assert_eq!(count(&out, "cs_requests"), 0);
        let messages = out.summary.messages;
        assert!(
            messages > 1000,
            "the cut-off half keeps reversing: {messages}"
        );
        assert_eq!(count(&out, "msgs_tokenless"), messages, "holder {holder}");
        assert_eq!(count(&out, "msgs_link_info"), messages);
        assert_eq!(count(&out, "msgs_token"), 0);
    }
}

/// When the link comes back, the reversing stops: the two LinkInfo messages of the
/// link's formation and whatever follows are sent with the token reachable.
#[test]
fn rl_rejoining_the_token_stops_the_tokenless_messages() {
    let cut_and_heal = [(1.0, 1, 2, LinkChange::Down), (2.0, 1, 2, LinkChange::Up)];
    let out = run("me-rl", 0, 1e-9, &cut_and_heal);
    let (messages, tokenless) = (out.summary.messages, count(&out, "msgs_tokenless"));
    assert!(tokenless > 100, "a second of reversal: {tokenless}");
    assert!(messages >= tokenless + 2, "{messages} vs {tokenless}");
    let forever = run("me-rl", 0, 1e-9, &[(1.0, 1, 2, LinkChange::Down)]);
    assert!(
        tokenless * 4 < count(&forever, "msgs_tokenless"),
        "one second of nine"
    );
}

/// With requests on a connected path, the token is always somewhere on it: no message
/// is tokenless, and RL's kinds and Raymond's add up to the total.
#[test]
fn a_connected_network_sends_nothing_tokenless() {
    for name in ["me-rl", "me-raymond"] {
        let out = run(name, 0, 2.0, &[]);
        assert!(count(&out, "cs_entries") > 50);
        assert_eq!(count(&out, "msgs_tokenless"), 0, "{name}");
        let kinds = ["msgs_request", "msgs_token", "msgs_link_info"];
        let by_kind: u64 = kinds.iter().map(|c| count(&out, c)).sum();
        assert_eq!(by_kind, out.summary.messages, "{name}");
        assert!(count(&out, "msgs_token") > 0 && count(&out, "msgs_request") > 0);
    }
}

/// Raymond with `routing = discovery` on the static path 0-1-2-3: its logical tree is
/// the path, so every route is one hop, each (node, tree neighbour) route is discovered
/// once, and each discovery costs a flood of the 4 nodes and a 1-hop reply.
#[test]
fn raymond_discovers_each_route_once_on_a_static_path() {
    let algorithm = Algorithm::parse("me-raymond").unwrap();
    let params =
        AlgoParams::from_texts(algorithm.params(), &["routing=discovery".to_string()]).unwrap();
    let oracle = run("me-raymond", 0, 2.0, &[]);
    let tl = timeline(4, DURATION, &[(0, 1), (1, 2), (2, 3)], &[]);
    let out = algorithm.run(&params, &tl, me_config(7, DURATION, 2.0, 0.01, true));
    let (floods, replies) = (
        count(&out, "msgs_route_request"),
        count(&out, "msgs_route_reply"),
    );
    assert!((1..=6).contains(&replies), "{replies} discoveries");
    assert_eq!(floods, 4 * replies);
    let protocol: u64 = ["msgs_request", "msgs_token"]
        .iter()
        .map(|c| count(&out, c))
        .sum();
    assert_eq!(out.summary.messages, protocol + floods + replies);
    assert_eq!(count(&oracle, "msgs_route_request"), 0);
    assert_eq!(out.summary.safety_violations, 0);
    assert!(count(&out, "cs_entries") > 50);
}
