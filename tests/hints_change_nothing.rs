//! The event loop's hints to the processor (`linkrev::prefetch`, on by default only for
//! networks of `HINTS_FROM_NODES` nodes or more) must change nothing but speed. Random
//! scenarios run with hints forced on and forced off: the final node states, the run's
//! counters, the request records and the monitors' verdicts must all be equal.

use linkrev::observe::le::LeMonitor;
use linkrev::observe::me::MeMonitor;
use linkrev::protocol::Protocol;
use linkrev::protocol::le_malpani::LeMalpani;
use linkrev::protocol::me_raymond::Raymond;
use linkrev::protocol::me_rl::Rl;
use linkrev::protocol::route_gb::GbPartial;
use linkrev::sim::{ChangeMode, RunConfig, Simulation};
use proptest::prelude::*;

#[path = "common/scenario.rs"]
mod scenario;
use scenario::{Scenario, config};

/// Runs `P` on `s` with hints on and with hints off, observed by `observer()`, and
/// returns both runs' outcome as text (states, counters, requests, and what `verdict`
/// reads from the observer).
fn both_ways<P, O>(
    s: &Scenario,
    cfg: RunConfig,
    observer: impl Fn() -> O,
    verdict: impl Fn(&O) -> String,
) -> [String; 2]
where
    P: Protocol + std::fmt::Debug,
    O: linkrev::sim::Observer<P>,
{
    [true, false].map(|on| {
        let mut sim = Simulation::<P>::new(&s.timeline, cfg.clone());
        sim.set_hints(on);
        let mut watcher = observer();
        sim.run(&mut watcher);
        format!(
            "{:?}\n{:?}\n{:?}\n{}",
            sim.nodes(),
            sim.counters(),
            sim.requests(),
            verdict(&watcher)
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn mutual_exclusion_runs_are_the_same_with_and_without_hints(s in scenario::scenario()) {
        let cfg = config(&s, ChangeMode::Overlap, true);
        let me = || MeMonitor::new(1);
        let [on, off] = both_ways::<Rl, _>(&s, cfg.clone(), me, |m| format!("{m:?}"));
        prop_assert_eq!(on, off);
        let [on, off] = both_ways::<Raymond, _>(&s, cfg, me, |m| format!("{m:?}"));
        prop_assert_eq!(on, off);
    }

    #[test]
    fn height_based_runs_are_the_same_with_and_without_hints(s in scenario::scenario()) {
        let cfg = config(&s, ChangeMode::Serialize, false);
        let le = |m: &LeMonitor<_>| {
            format!(
                "{:?} {:?} {} {} {} {}",
                m.records, m.safety, m.leaderless_node_time, m.leader_changes, m.elections,
                m.unnecessary_elections
            )
        };
        let [on, off] = both_ways::<LeMalpani, _>(&s, cfg.clone(), LeMonitor::new, le);
        prop_assert_eq!(on, off);
        let [on, off] = both_ways::<GbPartial, _>(&s, cfg, || (), |_| String::new());
        prop_assert_eq!(on, off);
    }
}
