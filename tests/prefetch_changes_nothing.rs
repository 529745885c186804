//! The event loop's prefetching (`linkrev::prefetch`, on by default only for networks of
//! `PREFETCH_FROM_NODES` nodes or more) must change nothing but speed. Random scenarios
//! run with prefetching forced on and forced off, for every registered algorithm, under
//! both topology-change modes: the final node states, the run's counters, the request
//! records and the monitors' verdicts must all be equal.

use linkrev::observe::le::LeMonitor;
use linkrev::observe::me::MeMonitor;
use linkrev::observe::route::RouteMonitor;
use linkrev::protocol::le_ingram::LeIngram;
use linkrev::protocol::le_malpani::LeMalpani;
use linkrev::protocol::le_tora5::LeTora5;
use linkrev::protocol::me_krl::{Krl, KrlConfig};
use linkrev::protocol::me_raymond::{Raymond, RaymondConfig};
use linkrev::protocol::me_rl::Rl;
use linkrev::protocol::route_gb::{GbFull, GbPartial};
use linkrev::protocol::{Protocol, Routing};
use linkrev::sim::{ChangeMode, Observer, RunConfig, Simulation};
use proptest::prelude::*;

use linkrev::conformance::scenario;
use scenario::{Scenario, config};

/// Runs `P` (configured by `protocol`) on `s` with prefetching on and with it off,
/// observed by `observer()`, and returns both runs' outcome as text: states, counters,
/// requests, and what `verdict` reads from the observer.
fn both_ways<P, O>(
    s: &Scenario,
    cfg: &RunConfig,
    protocol: &P::Config,
    observer: impl Fn() -> O,
    verdict: impl Fn(&O) -> String,
) -> [String; 2]
where
    P: Protocol + std::fmt::Debug,
    O: Observer<P>,
{
    [true, false].map(|on| {
        let mut sim = Simulation::<P>::configured(&s.timeline, cfg.clone(), protocol);
        sim.set_prefetch(on);
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

fn me_verdict(m: &MeMonitor) -> String {
    format!("{m:?}")
}

fn le_verdict<H>(m: &LeMonitor<H>) -> String {
    format!(
        "{:?} {:?} {} {} {} {}",
        m.records,
        m.safety,
        m.leaderless_node_time,
        m.leader_changes,
        m.elections,
        m.unnecessary_elections
    )
}

fn route_verdict<H>(m: &RouteMonitor<H>) -> String {
    format!(
        "{:?} {:?} {} {} {}",
        m.records, m.safety, m.reversals, m.partitioned_reversals, m.routed_node_time
    )
}

const MODES: [ChangeMode; 2] = [ChangeMode::Overlap, ChangeMode::Serialize];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn mutual_exclusion_runs_are_the_same_with_and_without_prefetching(s in scenario::scenario()) {
        for mode in MODES {
            let cfg = config(&s, mode, true);
            let me = || MeMonitor::new(1);
            let [on, off] = both_ways::<Rl, _>(&s, &cfg, &Default::default(), me, me_verdict);
            prop_assert_eq!(on, off);
            // Two tokens, forwarded: k-RL's own rules on top of RL's.
            let krl = KrlConfig { k: 2, forwarding: true };
            let two = || MeMonitor::new(2);
            let [on, off] = both_ways::<Krl, _>(&s, &cfg, &krl, two, me_verdict);
            prop_assert_eq!(on, off);
            for routing in [Routing::Oracle, Routing::Discovery] {
                let raymond = RaymondConfig { holder: 0, routing };
                let [on, off] = both_ways::<Raymond, _>(&s, &cfg, &raymond, me, me_verdict);
                prop_assert_eq!(on, off);
            }
        }
    }

    #[test]
    fn height_based_runs_are_the_same_with_and_without_prefetching(s in scenario::scenario()) {
        for mode in MODES {
            let cfg = config(&s, mode, false);
            let [on, off] = both_ways::<LeMalpani, _>(&s, &cfg, &(), LeMonitor::new, le_verdict);
            prop_assert_eq!(on, off);
            let [on, off] = both_ways::<LeTora5, _>(&s, &cfg, &(), LeMonitor::new, le_verdict);
            prop_assert_eq!(on, off);
            let [on, off] =
                both_ways::<LeIngram, _>(&s, &cfg, &Default::default(), LeMonitor::new, le_verdict);
            prop_assert_eq!(on, off);
            let route = || RouteMonitor::new(0);
            let [on, off] =
                both_ways::<GbFull, _>(&s, &cfg, &Default::default(), route, route_verdict);
            prop_assert_eq!(on, off);
            let [on, off] =
                both_ways::<GbPartial, _>(&s, &cfg, &Default::default(), route, route_verdict);
            prop_assert_eq!(on, off);
        }
    }
}
