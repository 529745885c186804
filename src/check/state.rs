//! What the checker explores: one [`Step`] (an event of the simulator) and one
//! [`CheckState`] (every node's protocol state, a FIFO queue per directed link, the
//! current graph, and what remains of the budgets). The model that generates the steps
//! is [`super::model`]; the symmetry reduction that renames states is
//! [`super::symmetry`]; both build on these types.

use super::sets::{InFlight, LinkSet, NodeSet};
use crate::NodeId;
use crate::protocol::{Message, Protocol};
use crate::topology::components::ComponentTracker;

/// One event the checker may take next.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Step {
    /// Deliver the head message of the directed link `from → to`.
    Deliver {
        /// Sender.
        from: NodeId,
        /// Receiver.
        to: NodeId,
    },
    /// Deliver the oldest routed message from `origin` to `dest` (routed messages
    /// between the same two nodes arrive in the order sent, as over one FIFO path);
    /// enabled while a path exists.
    DeliverRouted {
        /// The node that sent it.
        origin: NodeId,
        /// Its destination.
        dest: NodeId,
    },
    /// The link `a – b` (`a < b`) forms (`up`) or fails.
    Link {
        /// Lower endpoint.
        a: NodeId,
        /// Higher endpoint.
        b: NodeId,
        /// Whether it forms.
        up: bool,
    },
    /// The application at `node` requests the critical section.
    Request {
        /// The requesting node.
        node: NodeId,
    },
    /// The application at `node` leaves the critical section.
    Release {
        /// The node in its CS.
        node: NodeId,
    },
}

/// A state of the checked system.
///
/// Equality and hashing leave out [`CheckState::clock`]: states that differ only in the
/// time are one state (see the field).
#[derive(Clone, Debug)]
pub struct CheckState<P: Protocol> {
    /// Every node's protocol state.
    pub nodes: Vec<P>,
    /// Messages in flight on directed links, FIFO per link.
    pub queues: InFlight<P::Msg>,
    /// Routed messages waiting or travelling: (origin, destination, message), sorted by
    /// origin and destination and in the order sent within a pair, which is all the
    /// semantics promise (see [`Step::DeliverRouted`]); a canonical order, so two sends
    /// of different pairs in either order give one state ([`Self::push_routed`]).
    pub routed: Vec<(NodeId, NodeId, P::Msg)>,
    /// The links up now, `(a, b)` with `a < b`.
    pub links: LinkSet,
    /// Topology changes still allowed.
    pub changes_left: u8,
    /// CS requests still to be issued.
    pub requests_left: u8,
    /// Nodes whose request is not served yet.
    pub waiting: NodeSet,
    /// Nodes in their critical section.
    pub in_cs: NodeSet,
    /// Requests served so far.
    pub served: u8,
    /// Tokens lost by being sent over a link that is down.
    pub tokens_lost: u32,
    /// The nodes of the parts no property reads, recorded in the first state with no
    /// change left ([`super::cut_off`]); `None` before, or if the family names none.
    pub cut_off: Option<NodeSet>,
    /// The logical time: actions taken so far. Handlers get it as the event time (leader
    /// election stamps new reference levels with it), so time stamps increase along an
    /// execution as in the simulator. It is not part of the state's identity: two states
    /// equal but for it continue alike up to renaming of future stamps, which are larger
    /// than every stamp present either way (exact for protocols that only compare
    /// stamps, as the registered ones do), so breadth-first search keeps the first.
    pub clock: u64,
}

impl<P: Protocol> CheckState<P> {
    /// Everything but the clock, for equality and hashing.
    #[allow(clippy::type_complexity)]
    fn identity(
        &self,
    ) -> (
        &Vec<P>,
        &InFlight<P::Msg>,
        &Vec<(NodeId, NodeId, P::Msg)>,
        LinkSet,
        (u8, u8, u8, u32),
        (NodeSet, NodeSet, Option<NodeSet>),
    ) {
        (
            &self.nodes,
            &self.queues,
            &self.routed,
            self.links,
            (
                self.changes_left,
                self.requests_left,
                self.served,
                self.tokens_lost,
            ),
            (self.waiting, self.in_cs, self.cut_off),
        )
    }
}

impl<P: Protocol> PartialEq for CheckState<P> {
    fn eq(&self, other: &Self) -> bool {
        self.identity() == other.identity()
    }
}

impl<P: Protocol> Eq for CheckState<P> {}

impl<P: Protocol> std::hash::Hash for CheckState<P> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.identity().hash(state);
    }
}

impl<P: Protocol> CheckState<P> {
    /// Sends a routed message, keeping [`Self::routed`]'s order.
    pub fn push_routed(&mut self, origin: NodeId, dest: NodeId, msg: P::Msg) {
        let at = self
            .routed
            .partition_point(|&(o, d, _)| (o, d) <= (origin, dest));
        self.routed.insert(at, (origin, dest, msg));
    }

    /// Whether no message is in flight (queued or routed).
    pub fn quiet(&self) -> bool {
        self.queues.is_empty() && self.routed.is_empty()
    }

    /// The current graph as a component tracker (what the monitors judge on).
    pub fn graph(&self) -> ComponentTracker {
        let mut graph = ComponentTracker::new(self.nodes.len());
        for (a, b) in self.links.iter() {
            graph.add_edge(a, b);
        }
        graph
    }

    /// Tokens carried by messages in flight.
    pub fn tokens_in_flight(&self) -> u32 {
        let queued = self
            .queues
            .iter()
            .filter(|(_, _, m)| m.carries_token())
            .count();
        let routed = self
            .routed
            .iter()
            .filter(|(_, _, m)| m.carries_token())
            .count();
        (queued + routed) as u32
    }
}
