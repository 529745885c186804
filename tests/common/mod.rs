//! Helpers shared by the simulator's integration tests.

use linkrev::NodeId;
use linkrev::sim::{
    ChangeMode, CsTime, DelayModel, Duration, LinkBreak, NetworkConfig, RunConfig, SimTime,
    WorkloadConfig,
};
use linkrev::topology::events::{LinkChange, LinkEvent, LinkInterval, LinkTimeline};

/// A hand-written link timeline: `initial` links up from t = 0, then `events`.
#[allow(dead_code)] // Not every test binary that includes this module uses it.
pub fn timeline(
    n: usize,
    duration: f64,
    initial: &[(NodeId, NodeId)],
    events: &[(f64, NodeId, NodeId, LinkChange)],
) -> LinkTimeline {
    let intervals = initial
        .iter()
        .map(|&(a, b)| LinkInterval {
            a,
            b,
            start: 0.0,
            end: duration,
        })
        .collect();
    let events = events
        .iter()
        .map(|&(time, a, b, change)| LinkEvent { time, a, b, change })
        .collect();
    LinkTimeline {
        range: 1.0,
        duration,
        node_count: n,
        intervals,
        events,
    }
}

/// A mutual-exclusion run configuration: 1–5 ms hops, `drain`, `overlap`, no detection
/// delay, CS requests at `rate` per node and second with CS durations of mean
/// `cs_time_s` (exponential, or constant when `constant_cs`).
#[allow(dead_code)] // Not every test binary that includes this module uses it.
pub fn me_config(
    seed: u64,
    duration: f64,
    rate: f64,
    cs_time_s: f64,
    constant_cs: bool,
) -> RunConfig {
    let cs = Duration::from_secs_f64(cs_time_s);
    RunConfig {
        network: NetworkConfig {
            delay: DelayModel::Uniform {
                min: Duration::from_secs_f64(0.001),
                max: Duration::from_secs_f64(0.005),
            },
            link_break: LinkBreak::Drain,
            detection_delay: Duration(0),
            changes: ChangeMode::Overlap,
        },
        workload: Some(WorkloadConfig {
            rate,
            cs_time: match constant_cs {
                true => CsTime::Constant(cs),
                false => CsTime::Exponential { mean: cs },
            },
        }),
        duration: SimTime::from_secs_f64(duration),
        seed,
        script: None,
        max_events: None,
    }
}
