//! Parts cut off for good ([`linkrev::check::cut_off`]): once changes stop, freezing the
//! components that hold no token keeps every verdict of mutual exclusion's checks, and
//! sleep sets still prune transitions only (the last change's new dependences are
//! enough: with and without sleep sets, the same states).

use linkrev::check::graph::SmallGraph;
use linkrev::check::{CheckReport, CheckSetup};
use linkrev::registry::Algorithm;
use linkrev::sim::ChangeMode;

#[path = "common/verdicts.rs"]
mod verdicts;
use verdicts::verdicts;

fn check(name: &str, s: &CheckSetup) -> CheckReport {
    let algorithm = Algorithm::parse(name).unwrap();
    algorithm.check(&algorithm.default_params(), s)
}

fn setup(graph: &str, changes: u8, requests: u8, mode: ChangeMode) -> CheckSetup {
    CheckSetup {
        changes,
        change_mode: mode,
        requests,
        max_states: 600_000,
        renormalize: true,
        partial_order: true,
        cut_off: true,
        ..CheckSetup::plain(SmallGraph::parse(graph).unwrap())
    }
}

/// Checks `name` with parts cut off and without; asserts both close with the same
/// verdicts and returns their state counts.
fn compare(name: &str, s: &CheckSetup) -> (usize, usize) {
    let what = format!(
        "{name} on {}, {} changes ({:?}), gaps {}",
        s.graph.name, s.changes, s.change_mode, s.abstract_gaps
    );
    let cut = check(name, s);
    let full = check(
        name,
        &CheckSetup {
            cut_off: false,
            ..s.clone()
        },
    );
    assert!(cut.cut_off && !full.cut_off, "{what}");
    assert_eq!(cut.cut_by, None, "{what}: must close");
    assert_eq!(full.cut_by, None, "{what}: must close");
    assert_eq!(verdicts(&cut), verdicts(&full), "{what}");
    assert!(cut.states <= full.states, "{what}");
    if !s.abstract_gaps {
        // The exact system: sleep sets must keep every state, the last change's new
        // dependences included.
        let unpruned = check(
            name,
            &CheckSetup {
                partial_order: false,
                ..s.clone()
            },
        );
        assert_eq!(verdicts(&cut), verdicts(&unpruned), "{what}");
        assert_eq!(
            cut.states, unpruned.states,
            "{what}: sleep sets lost or added states"
        );
        assert!(cut.states_generated <= unpruned.states_generated, "{what}");
    }
    (cut.states, full.states)
}

#[test]
fn freezing_tokenless_parts_keeps_every_verdict() {
    let exact = [
        ("me-rl", "path:3", 2, 1, ChangeMode::Serialize),
        ("me-rl", "star:4", 2, 1, ChangeMode::Serialize),
        ("me-rl", "path:4", 2, 1, ChangeMode::Serialize),
        ("me-rl", "path:3", 3, 1, ChangeMode::Serialize),
        ("me-krl", "path:3", 2, 2, ChangeMode::Overlap),
        ("me-krl", "ring:3", 2, 1, ChangeMode::Overlap),
        ("me-krl", "star:4", 2, 1, ChangeMode::Overlap),
        ("me-krl", "path:4", 2, 1, ChangeMode::Serialize),
    ];
    let (mut with_cut, mut without_cut) = (0, 0);
    for (name, graph, changes, requests, mode) in exact {
        let (cut, full) = compare(name, &setup(graph, changes, requests, mode));
        with_cut += cut;
        without_cut += full;
    }
    // RL with overlapping changes closes only with the gap abstraction.
    for graph in ["path:3", "ring:3", "star:4"] {
        let s = CheckSetup {
            abstract_gaps: true,
            ..setup(graph, 2, 1, ChangeMode::Overlap)
        };
        let (cut, full) = compare("me-rl", &s);
        with_cut += cut;
        without_cut += full;
    }
    assert!(
        with_cut < without_cut,
        "tokenless parts were frozen somewhere: {with_cut} states against {without_cut}"
    );
}
