//! Persistent sets ([`linkrev::check::persistent`]) reach fewer states and keep every
//! verdict: on every configuration small enough for the full search (the 38 labelled
//! connected 4-node graphs with one overlapping change and one request, and a sample
//! with two, where the full search closes within 60,000 transitions) the search that
//! takes them from the start gives the verdicts of the search without them;
//! and a search cut by its budget is tried again with them, whose verdicts are taken
//! only if it closes.

use linkrev::check::graph::{SmallGraph, labelled_connected_graphs};
use linkrev::check::{CheckReport, CheckSetup, PersistentSets, Verdict};
use linkrev::registry::Algorithm;
use linkrev::sim::ChangeMode;

fn setup(graph: SmallGraph, changes: u8, requests: u8, persistent: PersistentSets) -> CheckSetup {
    CheckSetup {
        changes,
        change_mode: ChangeMode::Overlap,
        requests,
        max_states: 60_000,
        renormalize: true,
        partial_order: true,
        abstract_gaps: true,
        cut_off: true,
        persistent_sets: persistent,
        ..CheckSetup::plain(graph)
    }
}

fn check(name: &str, s: &CheckSetup) -> CheckReport {
    let algorithm = Algorithm::parse(name).unwrap();
    algorithm.check(&algorithm.default_params(), s)
}

/// Each property's verdict, a violation without its length (a reduced graph's
/// shortest execution need not be the system's).
fn verdicts(report: &CheckReport) -> Vec<String> {
    report
        .properties
        .iter()
        .map(|p| match &p.verdict {
            Verdict::Violated { .. } => format!("{}: violated", p.name),
            v => format!("{}: {v:?}", p.name),
        })
        .collect()
}

/// Checks `name` without persistent sets and with them from the start; the states of
/// each, or `None` when the search without them does not close within the budget.
fn compare(name: &str, graph: &SmallGraph, changes: u8, requests: u8) -> Option<(usize, usize)> {
    let full = check(
        name,
        &setup(graph.clone(), changes, requests, PersistentSets::Off),
    );
    if full.cut_by.is_some() {
        return None;
    }
    // Without sleep sets where they are on, a reduced state may cost more transitions:
    // a larger budget, for the states to be compared.
    let reduced = check(
        name,
        &CheckSetup {
            max_states: 4 * full.states_generated,
            ..setup(graph.clone(), changes, requests, PersistentSets::Always)
        },
    );
    let what = format!("{name} on {} with {changes} changes", graph.name);
    assert!(!full.persistent_sets, "{what}");
    assert_eq!(
        reduced.cut_by, None,
        "{what}: the reduced search must close too"
    );
    assert_eq!(verdicts(&reduced), verdicts(&full), "{what}");
    assert!(reduced.states <= full.states, "{what}");
    Some((reduced.states, full.states))
}

#[test]
fn persistent_sets_keep_every_verdict_with_fewer_states() {
    let (mut closed, mut reduced, mut full) = (0, 0, 0);
    let mut tally = |found: Option<(usize, usize)>| {
        if let Some((r, f)) = found {
            closed += 1;
            reduced += r;
            full += f;
        }
    };
    for graph in labelled_connected_graphs(4) {
        for name in ["me-rl", "me-krl"] {
            tally(compare(name, &graph, 1, 1));
        }
    }
    for graph in ["ring:4", "star:4", "path:4"] {
        let graph = SmallGraph::parse(graph).unwrap();
        tally(compare("me-krl", &graph, 2, 1));
        tally(compare("me-rl", &graph, 1, 2));
    }
    assert!(closed >= 70, "only {closed} configurations closed");
    eprintln!("{closed} configurations: {reduced} states with persistent sets, {full} without");
    assert!(
        reduced * 10 < full * 8,
        "persistent sets reached {reduced} states, the full search {full}"
    );
}

/// A search cut by its budget is tried again with persistent sets, and its verdicts are
/// those of the second search when that one closes; a second search that is cut too
/// leaves the first's report.
#[test]
fn a_search_cut_by_its_budget_closes_with_persistent_sets() {
    let graph = SmallGraph::parse("path:4").unwrap();
    let within = |max_states| CheckSetup {
        max_states,
        ..setup(graph.clone(), 1, 2, PersistentSets::WhenCut)
    };
    let full = check(
        "me-rl",
        &CheckSetup {
            persistent_sets: PersistentSets::Off,
            ..within(400_000)
        },
    );
    assert_eq!(full.cut_by, None);
    // Below what sleep sets alone need, above what persistent sets need.
    let alone = check(
        "me-rl",
        &CheckSetup {
            persistent_sets: PersistentSets::Always,
            ..within(full.states_generated)
        },
    );
    assert_eq!(alone.cut_by, None);
    assert!(alone.states_generated < full.states_generated);
    let budget = (alone.states_generated + full.states_generated) / 2;
    let second = check("me-rl", &within(budget));
    assert_eq!(second.cut_by, None, "{second:?}");
    assert_eq!(second.persistent_after, Some(budget));
    assert!(second.persistent_sets);
    assert_eq!(second.states_generated, alone.states_generated);
    assert_eq!(verdicts(&second), verdicts(&full));
    // Too small for either: the first search's report, every verdict unknown.
    let neither = check("me-rl", &within(alone.states_generated / 2));
    assert_eq!(neither.cut_by, Some("state bound"));
    assert_eq!(neither.persistent_after, None);
    assert!(!neither.persistent_sets);
    assert!(
        neither
            .properties
            .iter()
            .all(|p| matches!(p.verdict, Verdict::Unknown))
    );
}
