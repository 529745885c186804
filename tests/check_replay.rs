//! The checker and the simulator are one system: every execution the checker explores,
//! replayed through the simulator as a scenario (routed messages included), ends in the
//! same protocol states; and symmetry reduction explores exactly one state per orbit of
//! node renamings, for the protocol that declares the symmetry, with the same verdicts.

use linkrev::NodeId;
use linkrev::check::graph::{SmallGraph, rooted_connected_graphs};
use linkrev::check::model::{CheckState, ProtocolModel, Step};
use linkrev::check::scenario::Scenario;
use linkrev::check::{self, CheckSetup};
use linkrev::family::{LeaderElection, MutualExclusion, Route, Watches};
use linkrev::protocol::Protocol;
use linkrev::protocol::le_malpani::LeMalpani;
use linkrev::protocol::me_krl::Krl;
use linkrev::protocol::me_raymond::Raymond;
use linkrev::protocol::me_rl::Rl;
use linkrev::protocol::route_gb::GbPartial;
use linkrev::registry::Algorithm;
use linkrev::sim::{
    ChangeMode, CsTime, DelayModel, Duration, LinkBreak, NetworkConfig, RunConfig, Simulation,
    WorkloadConfig,
};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use stateright::Model;
use std::collections::HashSet;

fn setup(graph: &str, changes: u8, requests: u8) -> CheckSetup {
    CheckSetup {
        changes,
        requests,
        max_depth: 40,
        renormalize: true,
        partial_order: true,
        ..CheckSetup::plain(SmallGraph::parse(graph).unwrap())
    }
}

/// A random execution of `model` of up to `length` steps (fewer if it gets stuck).
fn random_walk<P: Protocol>(
    model: &ProtocolModel<P>,
    length: usize,
    rng: &mut ChaCha8Rng,
) -> Vec<Step> {
    let mut state = model.initial();
    let mut steps = Vec::new();
    let mut enabled = Vec::new();
    for _ in 0..length {
        enabled.clear();
        model.actions(&state, &mut enabled);
        if enabled.is_empty() {
            break;
        }
        let step = enabled[rng.random_range(0..enabled.len())].clone();
        state = model.step(&state, step.clone()).expect("an enabled step");
        steps.push(step);
    }
    steps
}

/// Replays `steps` through the simulator, as `linkrev run --scenario` does, and returns
/// every node's final state.
fn simulate<P: Protocol>(algorithm: &str, model: &ProtocolModel<P>, steps: &[Step]) -> Vec<P> {
    let scenario = Scenario {
        algorithm: algorithm.into(),
        params: Vec::new(),
        nodes: model.nodes,
        links: model.initial_links.clone(),
        steps: steps.to_vec(),
    };
    // The text round trip too: what `linkrev check --out` writes is what is replayed.
    let scenario = Scenario::parse(&scenario.to_text("test"), "test", |a| {
        Algorithm::parse(a).is_some()
    })
    .unwrap();
    let timeline = scenario.timeline().unwrap();
    let config = RunConfig {
        network: NetworkConfig {
            delay: DelayModel::Constant(Duration(1)),
            link_break: LinkBreak::Drain,
            detection_delay: Duration(0),
            changes: ChangeMode::Overlap,
        },
        workload: Some(WorkloadConfig {
            rate: 1.0,
            cs_time: CsTime::Constant(Duration(1)),
        }),
        duration: scenario.duration(),
        seed: 1,
        script: Some(std::sync::Arc::new(scenario.script().unwrap())),
        max_events: None,
    };
    let mut sim = Simulation::<P>::configured(&timeline, config, &model.config);
    sim.run(&mut ());
    sim.nodes().to_vec()
}

/// Random executions of `model`, each replayed through the simulator: the same states.
fn replays_alike<P: Protocol>(algorithm: &str, model: ProtocolModel<P>, walks: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut routed = 0;
    for walk in 0..walks {
        let steps = random_walk(&model, 30, &mut rng);
        routed += steps
            .iter()
            .filter(|s| matches!(s, Step::DeliverRouted { .. }))
            .count();
        let mut expected = model.initial();
        for step in &steps {
            expected = model.step(&expected, step.clone()).unwrap();
        }
        let simulated = simulate(algorithm, &model, &steps);
        assert_eq!(
            simulated,
            expected.nodes,
            "{algorithm}, walk {walk}: {}",
            steps
                .iter()
                .map(check::describe)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if algorithm == "me-raymond" {
        assert!(routed > 100, "the walks deliver routed messages: {routed}");
    }
}

#[test]
fn the_simulator_replays_every_checker_execution_to_the_same_states() {
    let me = setup("ring:5", 4, 6);
    replays_alike(
        "me-raymond",
        <MutualExclusion as Watches<Raymond>>::model(Default::default(), &me),
        60,
    );
    replays_alike(
        "me-rl",
        <MutualExclusion as Watches<Rl>>::model(Default::default(), &me),
        60,
    );
    replays_alike(
        "me-krl",
        <MutualExclusion as Watches<Krl>>::model(Default::default(), &me),
        60,
    );
    let other = setup("grid:2x3", 4, 0);
    replays_alike(
        "le-malpani",
        <LeaderElection as Watches<LeMalpani>>::model((), &other),
        60,
    );
    replays_alike(
        "gb-partial",
        <Route as Watches<GbPartial>>::model(Default::default(), &other),
        60,
    );
}

/// Every state reachable in `model` (no depth bound: the budgets make it finite).
fn all_states<P: Protocol>(model: &ProtocolModel<P>) -> Vec<CheckState<P>> {
    let mut seen = HashSet::new();
    let mut stack = vec![model.initial()];
    let mut out = Vec::new();
    let mut actions = Vec::new();
    while let Some(state) = stack.pop() {
        if !seen.insert(state.clone()) {
            continue;
        }
        actions.clear();
        model.actions(&state, &mut actions);
        for a in actions.drain(..) {
            stack.push(model.step(&state, a).unwrap());
        }
        out.push(state);
    }
    out
}

/// The number of classes of `states` under renaming, by trying all n! renamings of
/// each state (independent of the checker's colour-guided representative).
fn brute_force_orbits<P: Protocol>(states: &[CheckState<P>]) -> usize {
    let n = states[0].nodes.len() as NodeId;
    let mut renamings: Vec<Vec<NodeId>> = vec![Vec::new()];
    for _ in 0..n {
        renamings = renamings
            .into_iter()
            .flat_map(|r| {
                (0..n)
                    .filter(|v| !r.contains(v))
                    .map(|v| [r.clone(), vec![v]].concat())
                    .collect::<Vec<_>>()
            })
            .collect();
    }
    let smallest = |state: &CheckState<P>| -> String {
        renamings
            .iter()
            .map(|r| {
                let mut renamed = state.renamed(r).unwrap();
                renamed.clock = 0;
                format!("{renamed:?}")
            })
            .min()
            .unwrap()
    };
    states.iter().map(smallest).collect::<HashSet<_>>().len()
}

#[test]
fn symmetry_reduction_explores_one_state_per_renaming_orbit() {
    for graph in ["star:4", "path:4", "complete:4"] {
        let mut s = setup(graph, 1, 2);
        let full = all_states(&<MutualExclusion as Watches<Raymond>>::model(
            Default::default(),
            &s,
        ));
        let orbits = brute_force_orbits(&full);
        let plain = Algorithm::parse("me-raymond").unwrap();
        let unreduced = plain.check(&plain.default_params(), &s);
        s.symmetry = true;
        let reduced = plain.check(&plain.default_params(), &s);
        assert!(reduced.symmetry && !unreduced.symmetry);
        assert!(!reduced.truncated, "{graph}: explored in full");
        assert_eq!(
            unreduced.states,
            full.len(),
            "{graph}: the brute force agrees"
        );
        assert_eq!(reduced.states, orbits, "{graph}: one state per orbit");
        assert!(
            orbits < full.len(),
            "{graph}: {orbits} orbits of {} states",
            full.len()
        );
        eprintln!("{graph}: {orbits} orbits of {} states", full.len());
        let verdicts = |r: &check::CheckReport| -> Vec<String> {
            r.properties
                .iter()
                .map(|p| format!("{:?}", p.verdict))
                .collect()
        };
        assert_eq!(verdicts(&reduced), verdicts(&unreduced), "{graph}");
    }
}

#[test]
fn algorithms_that_compare_ids_are_explored_in_full() {
    let mut s = setup("ring:4", 1, 1);
    s.symmetry = true;
    for name in ["me-rl", "le-malpani", "gb-full"] {
        let algorithm = Algorithm::parse(name).unwrap();
        let mut s = s.clone();
        if algorithm.family() != linkrev::family::MUTUAL_EXCLUSION {
            s.requests = 0;
        }
        assert!(
            !algorithm.check(&algorithm.default_params(), &s).symmetry,
            "{name}"
        );
    }
}

#[test]
fn raymonds_renaming_commutes_with_every_step() {
    // The soundness condition of the reduction, on random states and renamings.
    let model = <MutualExclusion as Watches<Raymond>>::model(
        Default::default(),
        &setup("complete:5", 3, 4),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let mut checked = 0;
    for _ in 0..40 {
        let steps = random_walk(&model, 25, &mut rng);
        let mut state = model.initial();
        for step in steps {
            let mut rename: Vec<NodeId> = (0..5).collect();
            for i in (1..rename.len()).rev() {
                rename.swap(i, rng.random_range(0..=i));
            }
            let renamed = state.renamed(&rename).unwrap();
            let mut enabled = Vec::new();
            model.actions(&state, &mut enabled);
            let mut enabled_renamed = Vec::new();
            model.actions(&renamed, &mut enabled_renamed);
            let mut expected: Vec<Step> = enabled.iter().map(|a| a.renamed(&rename)).collect();
            expected.sort_by_key(|a| format!("{a:?}"));
            enabled_renamed.sort_by_key(|a| format!("{a:?}"));
            assert_eq!(expected, enabled_renamed, "the same steps are enabled");
            for a in &enabled {
                let then_rename = model.step(&state, a.clone()).unwrap().renamed(&rename);
                let rename_then = model.step(&renamed, a.renamed(&rename));
                assert_eq!(then_rename, rename_then);
                checked += 1;
            }
            state = model.step(&state, step).unwrap();
        }
    }
    assert!(checked > 1_000, "{checked}");
}

#[test]
fn a_violation_found_under_symmetry_is_an_execution_of_the_real_system() {
    // Raymond judged by a property it must break, and one that no renaming changes:
    // "the privilege is never in flight". Found in the reduced search and renamed back,
    // the execution must replay step by step in the unreduced model to a state with the
    // privilege in flight, and be as short as the unreduced search's.
    let graphs = rooted_connected_graphs(4);
    for graph in graphs.iter().take(4) {
        let mut s = setup("path:2", 1, 2);
        s.graph = graph.clone();
        let lengths: Vec<usize> = [false, true]
            .into_iter()
            .map(|symmetry| {
                s.symmetry = symmetry;
                let mut model =
                    <MutualExclusion as Watches<Raymond>>::model(Default::default(), &s);
                model.properties.truncate(1);
                model.properties[0].name = "privilege_stays";
                model.properties[0].judge = |_, st| match st.tokens_in_flight() {
                    0 => Ok(()),
                    n => Err(format!("{n} in flight")),
                };
                let report = check::run("me-raymond", model, &s);
                assert_eq!(report.symmetry, symmetry);
                let check::Verdict::Violated { path, .. } = &report.properties[0].verdict else {
                    panic!("{:?}", report.properties[0].verdict)
                };
                let model = <MutualExclusion as Watches<Raymond>>::model(Default::default(), &s);
                let mut state = model.initial();
                for step in path {
                    state = model.step(&state, step.clone()).expect("a real step");
                }
                assert_eq!(state.tokens_in_flight(), 1, "{path:?}");
                path.len()
            })
            .collect();
        assert_eq!(
            lengths[0], lengths[1],
            "shortest either way on {}",
            graph.name
        );
    }
}
