//! The protocol layer's small building blocks, each against what its docs promise:
//! parameter declarations (ranges, words, node ids), the effect list a handler fills,
//! the neighbour map, the route family's initial heights across components and its
//! configuration, `me-krl`'s critical-section view, and two of `le-ingram`'s sink cases
//! driven with hand-made Updates. Part of the mutation oracles (`tests/mutation_oracles.rs`).

use linkrev::NodeId;
use linkrev::protocol::config::{ParamDefault, ParamKind};
use linkrev::protocol::le_ingram::{IngramHeight, IngramMsg, LeIngram};
use linkrev::protocol::le_malpani::RefLevel;
use linkrev::protocol::me_krl::{Krl, KrlConfig};
use linkrev::protocol::neighbour_map::NeighbourMap;
use linkrev::protocol::route_gb::{Full, GbHeight, GbNode, Partial, Reversal, RouteConfig};
use linkrev::protocol::testkit::Harness;
use linkrev::protocol::{
    AlgoParams, AppEvent, Ctx, HeightView, LeaderView, ParamDef, Protocol, ProtocolConfig,
    TokenView,
};

const RATIO: ParamDef = ParamDef {
    name: "ratio",
    description: "a test ratio",
    kind: ParamKind::Float { min: 0.0, max: 1.0 },
    default: ParamDefault::Float(0.5),
};

const HOLDER: ParamDef = ParamDef {
    name: "holder",
    description: "a test node",
    kind: ParamKind::Node,
    default: ParamDefault::Int(0),
};

const MODE: ParamDef = ParamDef {
    name: "mode",
    description: "a test word",
    kind: ParamKind::Choice(&["on", "off"]),
    default: ParamDefault::Word("off"),
};

#[test]
fn a_parameter_describes_its_kind_in_words() {
    let int = ParamDef {
        kind: ParamKind::Int { min: 1, max: 64 },
        ..HOLDER
    };
    assert_eq!(int.kind_text(), "an integer in 1..=64");
    assert_eq!(RATIO.kind_text(), "a number in [0.0, 1.0]");
    assert_eq!(MODE.kind_text(), "one of on, off");
}

#[test]
fn a_real_parameter_takes_exactly_its_closed_range() {
    let ok = |x: f64| {
        RATIO
            .check(linkrev::protocol::config::ParamValue::Float(x))
            .is_ok()
    };
    assert!(ok(0.0) && ok(0.5) && ok(1.0));
    assert!(!ok(-0.001), "below min");
    assert!(!ok(1.001), "above max");
    assert!(!ok(f64::NAN) && !ok(f64::INFINITY));
}

#[test]
fn a_node_parameter_must_name_a_node_of_the_run() {
    let at = |text: &str| AlgoParams::from_texts(&[HOLDER], &[text.to_string()]).unwrap();
    assert!(at("holder=3").check_node_ids(&[HOLDER], 4).is_ok());
    let err = at("holder=4")
        .check_node_ids(&[HOLDER], 4)
        .expect_err("node 4 of 4");
    assert!(err.contains("ids 0 to 3"), "{err}");
    assert!(at("holder=0").check_node_ids(&[HOLDER], 0).is_err());
}

#[test]
fn a_word_parameter_reads_back_as_given() {
    let params = AlgoParams::from_texts(&[MODE], &["mode=on".to_string()]).unwrap();
    assert_eq!(params.word("mode"), "on");
    assert_eq!(AlgoParams::defaults(&[MODE]).word("mode"), "off");
}

#[test]
fn a_handler_reads_the_effects_it_pushed_in_order() {
    let mut ctx = Ctx::<u8>::new(0, 0);
    assert!(ctx.effects().is_empty());
    ctx.send(1, 7);
    ctx.send(2, 9);
    let sent: Vec<(NodeId, u8)> = ctx
        .effects()
        .iter()
        .map(|e| match e {
            linkrev::protocol::Effect::Send { to, msg } => (*to, *msg),
            other => panic!("only sends were pushed: {other:?}"),
        })
        .collect();
    assert_eq!(sent, [(1, 7), (2, 9)]);
}

#[test]
fn the_neighbour_map_counts_its_entries() {
    let mut map = NeighbourMap::<u8>::default();
    assert_eq!((map.len(), map.is_empty()), (0, true));
    map.insert(5, 1);
    map.insert(2, 1);
    map.insert(5, 3);
    assert_eq!(map.len(), 2, "a second insert of 5 replaces its value");
    map.remove(&2);
    assert_eq!(map.len(), 1);
}

#[test]
fn a_route_configuration_takes_its_destination_from_the_parameters() {
    let params = AlgoParams::from_texts(RouteConfig::PARAMS, &["dest=3".to_string()]).unwrap();
    assert_eq!(RouteConfig::from_params(&params).dest, 3);
}

#[test]
fn a_route_height_prints_as_its_triple() {
    assert_eq!(GbHeight::new(2, -1, 7).to_string(), "(2, -1, 7)");
}

/// Nodes cut off from the destination at t = 0 start above every node of the
/// destination's component, so none of them is mistaken for a route to it.
fn cut_off_components_start_above<R: Reversal>() {
    // Component {0, 1, 2} holds the destination 0; {3, 4} does not.
    let adj: Vec<Vec<NodeId>> = vec![vec![1], vec![0, 2], vec![1], vec![4], vec![3]];
    let nodes = GbNode::<R>::initial_states(&RouteConfig { dest: 0 }, &adj);
    let highest_with_dest = (0..3).map(|i| nodes[i].height()).max().unwrap();
    for (i, node) in nodes.iter().enumerate().skip(3) {
        assert!(
            node.height() > highest_with_dest,
            "node {i}: {} not above {highest_with_dest}",
            node.height()
        );
    }
    assert!(nodes[4].height() > nodes[3].height(), "3 is 4's way out");
}

#[test]
fn cut_off_components_start_above_the_destinations_component() {
    cut_off_components_start_above::<Full>();
    cut_off_components_start_above::<Partial>();
}

#[test]
fn a_krl_node_in_the_critical_section_says_so() {
    let config = KrlConfig {
        k: 1,
        forwarding: false,
    };
    let mut h = Harness::<Krl>::configured(&config, 3, &[(0, 1), (1, 2)]);
    h.app(2, AppEvent::RequestCs);
    h.deliver_all(100);
    let in_cs: Vec<bool> = h.nodes.iter().map(TokenView::in_cs).collect();
    assert_eq!(in_cs, [false, false, true]);
    h.app(2, AppEvent::ReleaseCs);
    assert!(!h.nodes[2].in_cs());
}

/// An Update carrying `level` and `delta` from node `from`, led by node 0 since t = 0.
fn update(from: NodeId, level: RefLevel, delta: i64) -> IngramMsg {
    IngramMsg {
        height: IngramHeight {
            level,
            delta,
            nlts: 0,
            lid: 0,
            id: from,
        },
        clock: 0,
    }
}

/// Node 1 of the path 0–1–2 (led by 0), after Updates from both neighbours that make
/// it a sink with both on `level`.
fn middle_node_after(level: RefLevel) -> LeIngram {
    let mut nodes = LeIngram::initial_states(&Default::default(), &[vec![1], vec![0, 2], vec![1]]);
    let mut node = nodes.swap_remove(1);
    let mut ctx = Ctx::new(1, 1_000);
    // Node 2 first: with 0 still below, node 1 is no sink yet.
    node.on_message(2, update(2, level, 5), &mut ctx);
    node.on_message(0, update(0, level, 5), &mut ctx);
    node
}

/// All neighbours on one reflected level that another node started: Ingram's sink rule
/// starts a new reference level; only the originator of the level elects itself.
#[test]
fn a_sink_below_someone_elses_reflected_level_starts_a_new_one() {
    let theirs = RefLevel {
        tau: 5,
        oid: 2,
        r: true,
    };
    let node = middle_node_after(theirs);
    assert_eq!(
        node.leader(),
        0,
        "no election: node 1 did not start that level"
    );
    assert_eq!(node.elections(), 0);
    let mine = node.height().level;
    assert!(!mine.r && mine.tau > 0 && mine != theirs, "{mine:?}");
}

/// All neighbours on the initial level (τ = 0), which is no reference level anyone
/// started: a sink starts a new one rather than reflecting it.
#[test]
fn a_sink_below_the_initial_level_starts_a_new_one_rather_than_reflecting() {
    let initial = RefLevel {
        tau: 0,
        oid: 0,
        r: false,
    };
    let node = middle_node_after(initial);
    let mine = node.height().level;
    assert!(!mine.r && mine.tau > 0, "{mine:?}");
    assert_eq!(node.leader(), 0);
}
