//! The discrete-event simulator: drives any [`crate::protocol::Protocol`] over a link
//! timeline with a stated network model and a mutual-exclusion workload.
//!
//! - [`time`]: integer-nanosecond `SimTime`.
//! - [`queue`]: the event queue, ordered by `(time, sequence)`.
//! - [`delay`]: per-hop delay distributions.
//! - [`engine`]: the event loop (events in time order to the protocol handlers,
//!   `overlap`/`serialize` topology changes, observers after every event).
//! - [`network`]: the network model: FIFO links, link epochs and `drain`/`drop`
//!   breaks, detection delay, routed sends.
//! - [`routes`]: shortest paths for routed messages, checked rather than recomputed
//!   when the topology changes.
//! - `link_matrix`: the links of a small network as bit rows, for the routing's
//!   searches.
//! - [`workload`]: the CS request process and its records.
//! - [`hold`]: the hold-model benchmark of the event queue against a bare heap.
//! - [`seeds`]: independent random streams derived from one run seed.

pub mod delay;
pub mod engine;
pub mod hold;
mod link_matrix;
pub mod network;
pub mod queue;
pub mod routes;
pub mod script;
pub mod seeds;
pub mod time;
pub mod workload;

pub use delay::DelayModel;
pub use engine::{Happening, Observer, RunConfig, Simulation, World};
pub use network::{ChangeMode, LinkBreak, NetworkConfig};
pub use script::Script;
pub use time::{Duration, SimTime};
pub use workload::{CsTime, RequestRecord, WorkloadConfig};

/// Run-wide counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunCounters {
    /// Events handled (topology changes, deliveries, requests, releases, notifications).
    pub events: u64,
    /// Protocol messages sent, one per hop.
    pub messages: u64,
    /// Of those, per kind: indexed like the protocol's
    /// [`Message::KINDS`](crate::protocol::Message::KINDS).
    pub messages_by_kind: Vec<u64>,
    /// Route-discovery flood messages the routing layer charged (also in `messages`).
    pub route_requests: u64,
    /// Route-discovery reply messages the routing layer charged (also in `messages`).
    pub route_replies: u64,
    /// Messages lost with their links (sent over a down link, or dropped by a break).
    pub messages_lost: u64,
    /// Of those, messages that carried the token.
    pub tokens_lost: u64,
    /// Topology changes applied.
    pub topology_changes: u64,
    /// Critical-section entries.
    pub cs_entries: u64,
    /// `serialize` mode: changes still waiting for quiescence when the run ended.
    pub changes_pending_at_end: u64,
    /// Why the run stopped before its duration, if it did (see
    /// [`engine::MAX_IN_FLIGHT`]).
    pub aborted: Option<String>,
}

impl RunCounters {
    /// Counts one message of kind `kind` (an index into the protocol's kinds).
    pub fn count_message(&mut self, kind: usize) {
        self.messages += 1;
        if self.messages_by_kind.len() <= kind {
            self.messages_by_kind.resize(kind + 1, 0);
        }
        self.messages_by_kind[kind] += 1;
    }
}
