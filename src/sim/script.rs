//! A scripted run: every delivery and application event at a given time, instead of
//! drawn delays and a random workload. `linkrev run --scenario` replays an execution the
//! model checker found ([`crate::check::scenario`]) through the simulator this way: the
//! same protocol code, monitors and metrics, in exactly the checker's order.

use super::time::SimTime;
use crate::NodeId;
use crate::protocol::AppEvent;
use std::collections::{BTreeMap, VecDeque};

/// When things happen in a scripted run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    /// Per directed link, the delivery time of each message sent over it, in sending
    /// order (links are FIFO, so the k-th message sent is the k-th delivered). A message
    /// beyond its link's list is never delivered within the run.
    pub deliveries: BTreeMap<(NodeId, NodeId), VecDeque<SimTime>>,
    /// Per (origin, destination), the delivery time of each routed message between them,
    /// in sending order. A routed message waits at its origin until then and is carried
    /// along a shortest path of the graph of that moment with no delay per hop (the
    /// model checker's one-step delivery); it stays at its origin forever when its list
    /// has no time for it.
    pub routed: BTreeMap<(NodeId, NodeId), VecDeque<SimTime>>,
    /// Application events (CS requests and releases) and when they happen. Nothing else
    /// requests or releases the CS in a scripted run.
    pub app: Vec<(SimTime, NodeId, AppEvent)>,
}
