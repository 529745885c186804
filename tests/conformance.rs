//! The conformance suites ([`linkrev::conformance`]) on every registered algorithm: a
//! registered algorithm is tested by its family's suite without anyone adding a test.
//! Also here: the suites can fail (the slides' partition flaw), and facts every
//! variant of a family shares.

use linkrev::conformance::scenario;

use linkrev::conformance::{self, run};

use linkrev::registry::Algorithm;
use linkrev::sim::ChangeMode;
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use scenario::{Scenario, scenario};

/// Every registered algorithm passes its family's suite.
#[test]
fn every_registered_algorithm_passes_its_familys_suite() {
    for algorithm in Algorithm::all() {
        conformance::check(algorithm.def());
    }
}

/// Every kind of message an algorithm sends has a column in its family's runs table,
/// and no column counts a kind twice.
#[test]
fn every_message_kind_is_counted_once_by_its_family() {
    for algorithm in Algorithm::all() {
        let counted: Vec<&str> = linkrev::family::counted_kinds(algorithm.family()).collect();
        for kind in algorithm.message_kinds() {
            let times = counted.iter().filter(|k| *k == kind).count();
            assert_eq!(
                times,
                1,
                "{}'s {kind} messages are counted {times} times by {}",
                algorithm.name(),
                algorithm.family().name()
            );
        }
    }
}

/// The suites can fail: a leader-election run whose changes partition the network ends
/// illegal for the slides' rules in some cases, and the suite's check must see it. Here
/// the suite's property is applied to partitioning scenarios and must find a case.
#[test]
fn the_leader_election_check_finds_the_slides_partition_flaw() {
    let algorithm = Algorithm::parse("le-malpani").expect("registered");
    // A fixed seed: this test asserts that a failure exists, which must not be luck.
    let mut runner = TestRunner::new_with_rng(
        Config::with_cases(512),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let result = runner.run(&scenario(), |s| {
        let out = run(algorithm.def(), &s, ChangeMode::Serialize);
        prop_assert_eq!(out.summary.safety_violations, 0);
        for c in out.changes().iter().filter(|c| !c.censored) {
            prop_assert!(c.converged);
        }
        Ok(())
    });
    assert!(
        result.is_err(),
        "512 partitioning scenarios found no flaw of the slides' rules"
    );
}

/// Elections are counted for every leader-election variant: on the path 0–1–2, node 2 is
/// cut off at t = 1 s and must elect itself (a necessary election); the link comes
/// back at t = 2 s and the merge elects no one.
#[test]
fn a_cut_off_node_elects_itself_once_in_every_variant() {
    use linkrev::topology::events::{LinkChange, LinkEvent, LinkInterval, LinkTimeline};
    let timeline = LinkTimeline {
        range: 1.0,
        duration: 10.0,
        node_count: 3,
        intervals: [(0, 1), (1, 2)]
            .map(|(a, b)| LinkInterval {
                a,
                b,
                start: 0.0,
                end: 10.0,
            })
            .to_vec(),
        events: [(1.0, LinkChange::Down), (2.0, LinkChange::Up)]
            .map(|(time, change)| LinkEvent {
                time,
                a: 1,
                b: 2,
                change,
            })
            .to_vec(),
    };
    let s = Scenario {
        timeline,
        delay: "const:1ms".into(),
        seed: 1,
    };
    for algorithm in Algorithm::all().filter(|a| a.family() == linkrev::family::LEADER_ELECTION) {
        let out = run(algorithm.def(), &s, ChangeMode::Overlap);
        let count = |c: &str| out.summary.metrics.count(c).unwrap();
        let name = algorithm.name();
        assert_eq!(out.summary.safety_violations, 0, "{name}");
        assert_eq!(count("elections"), 1, "{name}");
        assert_eq!(count("unnecessary_elections"), 0, "{name}");
    }
}
