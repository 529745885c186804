//! One generic run for every family: a family's [`Watches`] implementation supplies
//! the monitors and the summary; this puts them around the simulator. The registry
//! holds it as a function pointer, one per algorithm (`run::<LeaderElection,
//! LeMalpani>`), and the replay viewer runs it with its recorder beside the monitors.

use super::{RunOutput, RunSummary};
use crate::family::def::{Extra, FamilyMetrics, FinishedRun, Watches};
use crate::protocol::{AlgoParams, Protocol, ProtocolConfig};
use crate::sim::{Observer, RunConfig, Simulation};
use crate::topology::events::LinkTimeline;

/// Runs `P`, configured by `params`, with family `F`'s monitors.
pub fn run<F: Watches<P>, P: Protocol>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
) -> RunOutput {
    run_with::<F, P, ()>(params, timeline, config, Extra::none())
}

/// [`run`], with `extra`'s observer told everything after the monitors.
pub fn run_with<F: Watches<P>, P: Protocol, O: Observer<P>>(
    params: &AlgoParams,
    timeline: &LinkTimeline,
    config: RunConfig,
    extra: Extra<'_, P, O>,
) -> RunOutput {
    let protocol = P::Config::from_params(params);
    let mut sim = Simulation::<P>::starting(timeline, config.clone(), &protocol, extra.states);
    let mut monitor = F::monitor(&protocol);
    let safety = F::safety(&mut monitor);
    safety.keep = extra.keep_violations;
    safety.keep_from_s = extra.keep_from.as_secs_f64();
    sim.run(&mut (&mut monitor, extra.observer));
    let finished = FinishedRun {
        nodes: sim.nodes(),
        counters: sim.counters(),
        requests: sim.requests(),
        config: &config,
    };
    let (values, events) = F::summarise(&mut monitor, &finished);
    let metrics = FamilyMetrics::new(F::FAMILY, values);
    let counters = sim.counters();
    let safety = F::safety(&mut monitor);
    let summary = RunSummary {
        algorithm: "",
        family: F::FAMILY,
        seed: config.seed,
        nodes: sim.nodes().len(),
        duration_s: config.duration.as_secs_f64(),
        events: counters.events,
        messages: counters.messages,
        topology_changes: counters.topology_changes,
        changes_pending_at_end: counters.changes_pending_at_end,
        metrics,
        safety_violations: safety.count,
        first_violation: safety.first.clone(),
        aborted: counters.aborted.clone(),
        tokens_lost: counters.tokens_lost,
        messages_lost: counters.messages_lost,
        wall_time_s: 0.0,
    };
    RunOutput {
        summary,
        violations: std::mem::take(&mut safety.kept),
        events,
    }
}
