//! The checker's exact quotients rest on each protocol's claim that its rules commute
//! with a renaming of values: shifting heights ([`linkrev::check::shift`]) and ranking
//! time stamps ([`linkrev::check::stamps`]). These tests check the claims step by step on
//! random executions of every protocol that makes one, and check that the quotients keep
//! every verdict where the full search closes too. The third quotient, dropping changes
//! that can never come ([`linkrev::check::dead_changes`]), is checked against a plain
//! search for a quiet state.

use linkrev::check::graph::{SmallGraph, rooted_connected_graphs};
use linkrev::check::model::ProtocolModel;
use linkrev::check::state::CheckState;
use linkrev::check::{self, CheckSetup, dead_changes, shift, stamps};
use linkrev::family::{LeaderElection, MutualExclusion, Route, Watches};
use linkrev::protocol::le_malpani::LeMalpani;
use linkrev::protocol::le_tora5::LeTora5;
use linkrev::protocol::me_krl::Krl;
use linkrev::protocol::me_rl::Rl;
use linkrev::protocol::route_gb::{GbFull, GbPartial};
use linkrev::protocol::{Message as _, Protocol};
use linkrev::registry::Algorithm;
use linkrev::sim::ChangeMode;
use proptest::prelude::*;
use stateright::Model as _;

#[path = "common/check_runs.rs"]
mod check_runs;
use check_runs::execution;
#[path = "common/verdicts.rs"]
mod verdicts;
use verdicts::verdicts;

fn setup(graph: SmallGraph, changes: u8, requests: u8, mode: ChangeMode) -> CheckSetup {
    CheckSetup {
        changes,
        change_mode: mode,
        requests,
        max_depth: 30,
        ..CheckSetup::plain(graph)
    }
}

/// Every step of a random execution commutes with shifting each group's heights by
/// its own vector, and with renormalizing.
fn shifts_commute<F: Watches<P>, P: Protocol>(
    config: P::Config,
    setup: &CheckSetup,
    choices: &[u16],
    vectors: &[[i64; 2]],
) -> Result<(), TestCaseError> {
    let model = F::model(config, setup);
    for (state, action) in execution(&model, choices) {
        hooks_agree(&state)?;
        let groups = shift::groups(&state);
        let by: Vec<Option<[i64; 2]>> = (0..state.nodes.len())
            .map(|g| Some(vectors[g % vectors.len()]))
            .collect();
        let mut shifted = state.clone();
        shift::shift_groups(&mut shifted, &groups, &by);
        let mut want = model.step(&state, action.clone()).expect("enabled");
        shift::shift_groups(&mut want, &groups, &by);
        let got = model.step(&shifted, action.clone()).expect("still enabled");
        prop_assert_eq!(&got, &want, "shifting does not commute with {:?}", action);
        // Renormalizing is a normal form: a state and any shift of it renormalize to
        // the same state (a floor that ignored a height would leave them apart).
        let mut normal = state.clone();
        shift::renormalize(&mut normal);
        let mut shifted_normal = shifted.clone();
        shift::renormalize(&mut shifted_normal);
        prop_assert_eq!(
            &shifted_normal,
            &normal,
            "renormalizing is not a normal form"
        );
        let mut a = model.step(&normal, action.clone()).expect("enabled");
        let mut b = model.step(&state, action.clone()).expect("enabled");
        shift::renormalize(&mut a);
        shift::renormalize(&mut b);
        prop_assert_eq!(a, b, "renormalizing does not commute with {:?}", action);
    }
    Ok(())
}

/// The hooks the checker's reductions read agree with each other and with the rules,
/// on every node and message of `state`:
/// - a message's kind (its by-kind column) is its variant's name;
/// - raising every level by `d` ([`Protocol::for_each_level`], the gap abstraction) is
///   shifting every height by `[d, 0]`, where the protocol claims both;
/// - a message said to be ignored from a non-neighbour is ignored: delivered from its
///   sender to any node the sender has no link to now (as the checker's dead-message
///   quotient would drop it), it changes nothing and sends nothing.
fn hooks_agree<P: Protocol>(state: &CheckState<P>) -> Result<(), TestCaseError> {
    use linkrev::protocol::Ctx;
    let levels = P::LEVELS_STEP_BY_ONE && P::SHIFT_INVARIANT;
    for (from, _, msg) in state.queues.iter() {
        prop_assert!(
            format!("{msg:?}").starts_with(msg.kind()),
            "{:?} counted as {}",
            msg,
            msg.kind()
        );
        if levels {
            let (mut raised, mut shifted) = (msg.clone(), msg.clone());
            raised.for_each_level(&mut |level| *level += 3);
            shifted.shift_heights([3, 0]);
            prop_assert_eq!(raised, shifted, "levels of {:?}", msg);
        }
        if msg.ignored_from_non_neighbour() {
            for (to, node) in state.nodes.iter().enumerate() {
                let to = to as linkrev::NodeId;
                if to == from || state.links.contains((from.min(to), from.max(to))) {
                    continue;
                }
                let mut after = node.clone();
                let mut ctx = Ctx::new(to, 0);
                after.on_message(from, msg.clone(), &mut ctx);
                prop_assert!(
                    after == *node && ctx.effects().is_empty(),
                    "{:?} from a stranger is not ignored",
                    msg
                );
            }
        }
    }
    if levels {
        for node in &state.nodes {
            let (mut raised, mut shifted) = (node.clone(), node.clone());
            raised.for_each_level(&mut |level| *level += 3);
            shifted.shift_heights([3, 0]);
            prop_assert!(raised == shifted, "levels of {:?}", node);
        }
    }
    Ok(())
}

/// Every step of a random execution gives rank-equal states from rank-equal ones: from
/// a state, and from the same state with its stamps ranked or spread apart.
fn stamps_commute<F: Watches<P>, P: Protocol>(
    setup: &CheckSetup,
    choices: &[u16],
    gaps: &[i64],
) -> Result<(), TestCaseError>
where
    P::Config: Default,
{
    let model = F::model(P::Config::default(), setup);
    for (state, action) in execution(&model, choices) {
        hooks_agree(&state)?;
        let mut ranked = state.clone();
        stamps::rank(&mut ranked);
        // Spread the ranks apart (still in order, still below the next event's stamp).
        let mut spread = ranked.clone();
        let mut spread_stamp = |s: &mut i64| {
            *s = (1..=*s).map(|i| gaps[i as usize % gaps.len()]).sum::<i64>();
        };
        for node in &mut spread.nodes {
            node.for_each_stamp(&mut spread_stamp);
        }
        spread
            .queues
            .for_each_mut(|_, _, m| m.for_each_stamp(&mut spread_stamp));
        let mut reference = model.step(&state, action.clone()).expect("enabled");
        stamps::rank(&mut reference);
        for from in [ranked, spread] {
            let mut got = model.step(&from, action.clone()).expect("still enabled");
            stamps::rank(&mut got);
            prop_assert_eq!(
                &got,
                &reference,
                "ranking stamps does not commute with {:?}",
                action
            );
        }
    }
    Ok(())
}

fn graph(index: usize) -> SmallGraph {
    let graphs = rooted_connected_graphs(4);
    graphs[index % graphs.len()].clone()
}

fn mode(serialize: bool) -> ChangeMode {
    if serialize {
        ChangeMode::Serialize
    } else {
        ChangeMode::Overlap
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn rl_commutes_with_shifts(g in 0usize..40, changes in 0u8..4, serialize: bool, choices in proptest::collection::vec(any::<u16>(), 60), vectors in proptest::collection::vec((-9i64..9, -9i64..9), 1..4)) {
        let vectors: Vec<[i64; 2]> = vectors.into_iter().map(|(a, b)| [a, b]).collect();
        shifts_commute::<MutualExclusion, Rl>(Default::default(), &setup(graph(g), changes, 3, mode(serialize)), &choices, &vectors)?;
    }

    #[test]
    fn krl_commutes_with_shifts(g in 0usize..40, changes in 0u8..4, serialize: bool, choices in proptest::collection::vec(any::<u16>(), 60), vectors in proptest::collection::vec((-9i64..9, -9i64..9), 1..4)) {
        let vectors: Vec<[i64; 2]> = vectors.into_iter().map(|(a, b)| [a, b]).collect();
        let config = linkrev::protocol::me_krl::KrlConfig { k: 2, forwarding: true };
        shifts_commute::<MutualExclusion, Krl>(config, &setup(graph(g), changes, 3, mode(serialize)), &choices, &vectors)?;
    }

    #[test]
    fn gafni_bertsekas_commutes_with_shifts(g in 0usize..40, changes in 0u8..4, serialize: bool, choices in proptest::collection::vec(any::<u16>(), 60), vectors in proptest::collection::vec((-9i64..9, -9i64..9), 1..4)) {
        let full: Vec<[i64; 2]> = vectors.iter().map(|&(a, _)| [a, 0]).collect();
        let partial: Vec<[i64; 2]> = vectors.into_iter().map(|(a, b)| [a, b]).collect();
        let s = setup(graph(g), changes, 0, mode(serialize));
        shifts_commute::<Route, GbFull>(Default::default(), &s, &choices, &full)?;
        shifts_commute::<Route, GbPartial>(Default::default(), &s, &choices, &partial)?;
    }

    #[test]
    fn leader_election_commutes_with_stamp_ranking(g in 0usize..40, changes in 1u8..4, choices in proptest::collection::vec(any::<u16>(), 60), gaps in proptest::collection::vec(1i64..50, 1..6)) {
        let s = setup(graph(g), changes, 0, ChangeMode::Serialize);
        stamps_commute::<LeaderElection, LeMalpani>(&s, &choices, &gaps)?;
        stamps_commute::<LeaderElection, LeTora5>(&s, &choices, &gaps)?;
    }
}

/// Full reversal's heights keep `b = 0`, so only `a` may be shifted: a shift of `b`
/// must show up as a difference (the test above would pass vacuously otherwise).
#[test]
fn shifting_full_reversal_b_does_not_commute() {
    let s = setup(
        SmallGraph::parse("path:4").unwrap(),
        1,
        0,
        ChangeMode::Serialize,
    );
    let model = <Route as Watches<GbFull>>::model(Default::default(), &s);
    let broken = (0..200u16).any(|seed| {
        let choices: Vec<u16> = (0..40)
            .map(|i| seed.wrapping_mul(31).wrapping_add(i * 7))
            .collect();
        execution(&model, &choices)
            .into_iter()
            .any(|(state, action)| {
                let groups = shift::groups(&state);
                let by = vec![Some([0, 3]); state.nodes.len()];
                let mut shifted = state.clone();
                shift::shift_groups(&mut shifted, &groups, &by);
                let mut want = model.step(&state, action.clone()).unwrap();
                shift::shift_groups(&mut want, &groups, &by);
                model.step(&shifted, action).unwrap() != want
            })
    });
    assert!(broken, "a shift of full reversal's b never changed a step");
}

/// Where the full search closes, the quotient search gives the same verdicts (and the
/// same shortest violations), with no more states.
#[test]
fn quotients_keep_every_verdict() {
    let cases: &[(&str, &str, u8, u8, ChangeMode)] = &[
        ("me-rl", "complete:4", 1, 2, ChangeMode::Serialize),
        ("me-rl", "ring:4", 1, 2, ChangeMode::Serialize),
        ("me-krl", "complete:4", 1, 2, ChangeMode::Serialize),
        ("gb-full", "complete:4", 2, 0, ChangeMode::Overlap),
        ("gb-partial", "complete:4", 2, 0, ChangeMode::Overlap),
        ("le-malpani", "ring:4", 1, 0, ChangeMode::Serialize),
        ("le-tora5", "ring:4", 1, 0, ChangeMode::Serialize),
        ("le-malpani", "path:4", 2, 0, ChangeMode::Serialize),
    ];
    let mut merged = Vec::new();
    for &(name, graph, changes, requests, mode) in cases {
        let algorithm = Algorithm::parse(name).unwrap();
        let mut s = setup(SmallGraph::parse(graph).unwrap(), changes, requests, mode);
        s.max_depth = 60;
        s.max_states = 5_000_000;
        let full = algorithm.check(&algorithm.default_params(), &s);
        s.renormalize = true;
        let quotient = algorithm.check(&algorithm.default_params(), &s);
        let what = format!("{name} on {graph}, {changes} changes");
        assert!(
            matches!(full.cut_by, None | Some(check::EVERY_PROPERTY_VIOLATED)),
            "{what}: the full search must close"
        );
        assert!(quotient.renormalized && !full.renormalized, "{what}");
        assert!(quotient.states <= full.states, "{what}");
        merged.push(format!("{what}: {} -> {}", full.states, quotient.states));
        assert_eq!(verdicts(&full), verdicts(&quotient), "{what}");
    }
    // The quotients must merge something, or the comparison says nothing.
    let fewer = merged.iter().filter(|m| {
        let (a, b) = m.rsplit_once(": ").unwrap().1.split_once(" -> ").unwrap();
        b.parse::<usize>().unwrap() < a.parse::<usize>().unwrap()
    });
    assert!(fewer.count() >= 2, "{merged:#?}");
}

/// Stamp ranking merges states where leader election makes new levels at different
/// times: le-tora5 on the paw (leader 0 on a pendant) with one failure, to 28 actions.
#[test]
fn ranking_stamps_merges_states() {
    let paw = SmallGraph {
        name: "paw".into(),
        nodes: 4,
        edges: vec![(0, 1), (1, 2), (1, 3), (2, 3)],
    };
    let algorithm = Algorithm::parse("le-tora5").unwrap();
    let mut s = setup(paw, 1, 0, ChangeMode::Serialize);
    s.max_depth = 28;
    let full = algorithm.check(&algorithm.default_params(), &s);
    s.renormalize = true;
    let ranked = algorithm.check(&algorithm.default_params(), &s);
    assert!(ranked.renormalized);
    assert!(
        ranked.states * 3 < full.states * 2,
        "{} -> {}",
        full.states,
        ranked.states
    );
}

/// Whether a plain search of `model` (no quotient) from `from` meets a state with nothing
/// in flight within `depth` actions.
fn quiet_within<P: Protocol>(model: &ProtocolModel<P>, from: &CheckState<P>, depth: usize) -> bool {
    let mut seen = std::collections::HashSet::from([from.clone()]);
    let mut level = vec![from.clone()];
    let mut actions = Vec::new();
    for _ in 0..=depth {
        if level.iter().any(CheckState::quiet) {
            return true;
        }
        let mut next_level = Vec::new();
        for state in &level {
            actions.clear();
            model.actions(state, &mut actions);
            for action in actions.drain(..) {
                if let Some(next) = model.step(state, action)
                    && seen.insert(next.clone())
                {
                    next_level.push(next);
                }
            }
        }
        level = next_level;
    }
    false
}

/// Along seeded random executions on every rooted connected 4-node graph with changes
/// one at a time, in every state cut into components with messages in flight and a
/// change left: where the dead-change quotient drops the budget, a plain search of the
/// full model finds no quiet state within 10 actions (the changes it dropped really
/// could not come that soon); where that search finds one, the quotient kept the
/// budget. Returns how often it dropped one, and how often it kept one that a plain
/// search shows could come.
fn dead_changes_checked<F: Watches<P>, P: Protocol>(
    config: P::Config,
    requests: u8,
) -> (usize, usize) {
    use rand::{RngExt as _, SeedableRng as _};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(39);
    let (mut dropped, mut kept) = (0, 0);
    for g in 0..rooted_connected_graphs(4).len() {
        let s = setup(graph(g), 2, requests, ChangeMode::Serialize);
        let plain = F::model(config.clone(), &s);
        let mut model = F::model(config.clone(), &s);
        model.renormalize = true;
        for _ in 0..6 {
            let choices: Vec<u16> = (0..40).map(|_| rng.random()).collect();
            for (state, _) in execution(&plain, &choices) {
                let cut = state.graph().component_count() > 1;
                if !cut || state.quiet() || state.changes_left == 0 {
                    continue;
                }
                let mut quotient = state.clone();
                dead_changes::forget_dead_changes(&model, &mut quotient);
                let reachable = quiet_within(&plain, &state, 10);
                if quotient.changes_left != state.changes_left {
                    dropped += 1;
                    assert_eq!(
                        quotient,
                        CheckState {
                            changes_left: 0,
                            ..state.clone()
                        }
                    );
                    assert!(
                        !reachable,
                        "graph {}: a quiet state is reachable from {state:?}",
                        graph(g).name
                    );
                } else if reachable {
                    kept += 1;
                }
            }
        }
    }
    (dropped, kept)
}

#[test]
fn dead_changes_are_dead() {
    let rl = dead_changes_checked::<MutualExclusion, Rl>(Default::default(), 2);
    let gb = dead_changes_checked::<Route, GbFull>(Default::default(), 0);
    // The quotient must act, or the check says nothing. (On these graphs every cut
    // state met with messages in flight had a part that reverses for ever: `kept` is
    // 0, and the next test shows a budget kept.)
    assert!(
        rl.0 > 10 && gb.0 > 10,
        "(dropped, kept): me-rl {rl:?}, gb-full {gb:?}"
    );
}

/// RL on the path 0 – 1 – 2 (token at 0), two changes one at a time. Cutting 1 – 2
/// leaves node 2 alone, and a request at 1 then puts messages in flight that are
/// answered: the network can be quiet again, so the budget stays. Cutting 0 – 1
/// instead leaves 1 and 2 without the token, reversing for ever: the budget goes.
#[test]
fn dead_changes_keep_a_change_that_can_come() {
    use linkrev::check::model::Step;
    let s = setup(
        SmallGraph::parse("path:3").unwrap(),
        2,
        2,
        ChangeMode::Serialize,
    );
    let plain = <MutualExclusion as Watches<Rl>>::model(Default::default(), &s);
    let mut model = <MutualExclusion as Watches<Rl>>::model(Default::default(), &s);
    model.renormalize = true;
    let after = |steps: &[Step]| {
        let mut state = plain.initial();
        for step in steps {
            state = plain.step(&state, step.clone()).expect("enabled");
        }
        let mut quotient = state.clone();
        dead_changes::forget_dead_changes(&model, &mut quotient);
        (state, quotient)
    };
    let (state, quotient) = after(&[
        Step::Link {
            a: 1,
            b: 2,
            up: false,
        },
        Step::Request { node: 1 },
    ]);
    assert!(!state.quiet() && state.graph().component_count() == 2);
    assert!(quiet_within(&plain, &state, 10));
    assert_eq!(quotient.changes_left, 1);

    let (state, quotient) = after(&[Step::Link {
        a: 0,
        b: 1,
        up: false,
    }]);
    assert!(!state.quiet() && state.changes_left == 1);
    assert!(!quiet_within(&plain, &state, 12));
    assert_eq!(quotient.changes_left, 0);
}
