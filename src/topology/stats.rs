//! Mobility statistics of a trace at a given range, in the spirit of BonnMotion's
//! `Statistics` application: how often links change, how dense and how connected the
//! network is, and how fast nodes move. These are the covariates a researcher needs next
//! to protocol metrics ("RL is slower here because links change twice as often").
//!
//! Definitions (all time averages are over `[0, duration]`):
//! - `link_ups`, `link_downs`, `link_changes`: events after `t = 0` (see [`super::events`]).
//! - `mean_degree`: time-average node degree, `2 · Σ link-interval length / (n · duration)`.
//! - `mean_link_duration`: mean length of *completed* links, those that both came up and
//!   went down inside the trace (links present at 0 or still up at the end are censored
//!   and left out; `None` when no link completed).
//! - `mean_components`: time-average number of connected components.
//! - `frac_time_connected`: fraction of time the whole network is one component.
//! - `mean_speed`: time- and node-average speed, pauses included.
//! - `link_changes_per_node`: events each node took part in (setdest's per-node column).

use super::components::ComponentTracker;
use super::events::{LinkChange, LinkTimeline};
use crate::mobility::Trace;
use serde::Serialize;

/// The statistics above, for one trace and one range.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MobilityStats {
    /// Number of nodes in the trace.
    pub nodes: usize,
    /// Length of the trace, seconds.
    pub duration: f64,
    /// Radio range the links were computed at, metres.
    pub range: f64,
    /// Links that came up after `t = 0`.
    pub link_ups: usize,
    /// Links that went down after `t = 0`.
    pub link_downs: usize,
    /// `link_ups + link_downs`; setdest's footer `Link Changes` counts these at 250 m.
    pub link_changes: usize,
    /// Link changes per second of trace.
    pub link_change_rate: f64,
    /// Pairs linked at `t = 0`; not counted as link ups.
    pub initial_links: usize,
    /// Time-average node degree.
    pub mean_degree: f64,
    /// Mean length of completed links, seconds; `None` when no link completed.
    pub mean_link_duration: Option<f64>,
    /// Links that came up and went down inside the trace (the sample of
    /// `mean_link_duration`).
    pub completed_links: usize,
    /// Time-average number of connected components.
    pub mean_components: f64,
    /// Fraction of the trace's time during which the network is one component.
    pub frac_time_connected: f64,
    /// Time- and node-average speed, m/s, pauses included.
    pub mean_speed: f64,
    /// Link changes each node took part in, indexed by node (setdest's per-node
    /// column).
    pub link_changes_per_node: Vec<usize>,
}

/// Computes [`MobilityStats`] from a trace and its link timeline.
pub fn mobility_stats(trace: &Trace, timeline: &LinkTimeline) -> MobilityStats {
    let n = trace.node_count();
    let duration = trace.duration;
    let link_ups = timeline
        .events
        .iter()
        .filter(|e| e.change == LinkChange::Up)
        .count();
    let link_downs = timeline.events.len() - link_ups;

    let mut per_node = vec![0usize; n];
    for e in &timeline.events {
        per_node[e.a as usize] += 1;
        per_node[e.b as usize] += 1;
    }

    let linked_time: f64 = timeline.intervals.iter().map(|iv| iv.length()).sum();
    let completed: Vec<f64> = timeline
        .intervals
        .iter()
        .filter(|iv| iv.start > 0.0 && iv.end < duration)
        .map(|iv| iv.length())
        .collect();

    let (mean_components, frac_time_connected) = component_averages(timeline);

    let moving: f64 = trace
        .nodes
        .iter()
        .flat_map(|t| t.legs())
        .map(|leg| leg.speed() * leg.duration())
        .sum();

    MobilityStats {
        nodes: n,
        duration,
        range: timeline.range,
        link_ups,
        link_downs,
        link_changes: timeline.events.len(),
        link_change_rate: timeline.events.len() as f64 / duration,
        initial_links: timeline.initial_links().len(),
        mean_degree: 2.0 * linked_time / (n as f64 * duration),
        mean_link_duration: (!completed.is_empty())
            .then(|| completed.iter().sum::<f64>() / completed.len() as f64),
        completed_links: completed.len(),
        mean_components,
        frac_time_connected,
        mean_speed: moving / (n as f64 * duration),
        link_changes_per_node: per_node,
    }
}

/// Time-average component count and fraction of time connected, by replaying the events.
fn component_averages(timeline: &LinkTimeline) -> (f64, f64) {
    let mut graph = ComponentTracker::new(timeline.node_count);
    for (a, b) in timeline.initial_links() {
        graph.add_edge(a, b);
    }
    let (mut last, mut area, mut connected) = (0.0, 0.0, 0.0);
    for e in &timeline.events {
        let span = e.time - last;
        area += span * graph.component_count() as f64;
        if graph.component_count() == 1 {
            connected += span;
        }
        last = e.time;
        match e.change {
            LinkChange::Up => graph.add_edge(e.a, e.b),
            LinkChange::Down => {
                graph.remove_edge(e.a, e.b);
            }
        }
    }
    let span = timeline.duration - last;
    area += span * graph.component_count() as f64;
    if graph.component_count() == 1 {
        connected += span;
    }
    (area / timeline.duration, connected / timeline.duration)
}
