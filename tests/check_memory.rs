//! `linkrev check --max-memory`, alone in its process: resident memory is the
//! process's, so no other test may allocate beside it.

use linkrev::check::graph::SmallGraph;
use linkrev::check::{CheckSetup, Verdict};
use linkrev::registry::Algorithm;

/// `--max-memory`: a search that would outgrow its memory bound ends, cut, with every
/// property unknown and the report saying why, and its resident memory stays near the
/// bound. The same search without the bound would pass it: it is 10 million states.
#[test]
fn a_search_past_its_memory_bound_ends_unknown_with_a_report() {
    let (before, _) = linkrev::memory::resident().expect("Linux reports resident memory");
    let bound = before + (48 << 20);
    let setup = CheckSetup {
        changes: 2,
        requests: 2,
        max_depth: 40,
        max_states: 10_000_000,
        max_memory: Some(bound),
        symmetry: true,
        renormalize: true,
        partial_order: true,
        ..CheckSetup::plain(SmallGraph::parse("ring:4").unwrap())
    };
    let rl = Algorithm::parse("me-rl").unwrap();
    let report = rl.check(&rl.default_params(), &setup);
    assert_eq!(report.cut_by, Some("memory bound"), "{report:?}");
    assert!(report.truncated);
    for p in &report.properties {
        assert!(matches!(p.verdict, Verdict::Unknown), "{}", p.name);
    }
    assert!(report.states_generated < 10_000_000);
    let (_, peak) = linkrev::memory::resident().unwrap();
    // The bound is read every few thousand states: it is passed by little.
    assert!(
        peak < bound + (64 << 20),
        "peak {} MB against a bound of {} MB",
        peak >> 20,
        bound >> 20
    );
}
