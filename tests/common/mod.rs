//! Helpers shared by the simulator's integration tests.

use linkrev::NodeId;
use linkrev::topology::events::{LinkChange, LinkEvent, LinkInterval, LinkTimeline};

/// A hand-written link timeline: `initial` links up from t = 0, then `events`.
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
