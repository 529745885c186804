//! Raymond's tree-based token algorithm for mutual exclusion, the baseline RL is compared
//! with.
//!
//! K. Raymond, "A tree-based algorithm for distributed mutual exclusion", ACM Transactions
//! on Computer Systems 7(1), 1989, pp. 61–77. Each node keeps the paper's four variables
//! — `HOLDER` (itself, or the logical tree neighbour in whose direction the token lies),
//! `USING`, `REQUEST_Q` and `ASKED` — and reacts to every event by the paper's two
//! procedures, `ASSIGN_PRIVILEGE` then `MAKE_REQUEST`, in that order. Nothing else is added:
//! the point of a baseline is to be the published algorithm, not an improved one.
//!
//! # The tree
//!
//! Raymond assumes a fixed, unrooted spanning tree whose edges are reliable channels. Here
//! it is [`bfs_tree`] of the t = 0 graph rooted at the initial token holder (parameter
//! `holder`, node 0 by default; where the token starts is the experiment's choice, the
//! paper leaves it open); every other node's `HOLDER` is its BFS parent, so all `HOLDER`
//! arrows point at the token, which is the paper's legal initial state. Nodes that cannot
//! reach the holder at t = 0 are attached as [`bfs_tree`] documents (their component's
//! BFS tree, its root a logical child of the holder): logical tree edges need not be
//! physical links.
//!
//! # Transport: a routing layer, free or paid for (parameter `routing`)
//!
//! Every message goes to a logical tree neighbour with [`Ctx::send_routed`]; the
//! simulator's routing layer carries it hop by hop over the physical graph, one message
//! and one delay per hop, and holds it while no path exists (the book's design page,
//! `docs/src/explanation/design.md`, "Raymond baseline"; the RL paper's "primitive on top of a routing layer"). Raymond's paper
//! assumes reliable channels and says nothing of their cost, so what the routes cost is
//! the experiment's choice:
//!
//! - `oracle` (default): an **ideal oracle** that knows the current graph for free. Each
//!   hop takes a shortest path of the current graph; the baseline pays nothing for route
//!   discovery or maintenance and never sees a route error. This flatters Raymond
//!   compared with RL, whose message counts include all of its own topology maintenance.
//! - `discovery`: **on-demand routes, charged**. A stated simplification of on-demand
//!   routing in the manner of AODV (Perkins, Belding-Royer, Das, RFC 3561), not AODV
//!   itself: a route is discovered when a message needs one, cached, and used until one
//!   of its hops is found broken. A discovery costs a flood of the sender's current
//!   component (one `RouteRequest` message per node of it: every node rebroadcasts once)
//!   and a `RouteReply` back along the new path (one message per hop), and the message
//!   waits for both: the flood's delays to the destination and the reply's back (one
//!   hop delay each, drawn from the delay model). Left out: hello messages, sequence
//!   numbers, route error messages, expanding-ring search, timeouts and retries, and
//!   route lifetimes. The exact rules are [`crate::sim::network`]'s ("Routing").
//!
//! Consequences for the handlers:
//! - Link up/down events do nothing: the routing layer absorbs topology changes, and
//!   Raymond's state only concerns logical neighbours.
//! - `from` in [`Protocol::on_message`] must be the logical neighbour that sent the
//!   message (the routed send's origin), not the last physical hop; a `Request` from a
//!   node that is no longer a physical neighbour is normal and handled like any other.

use super::{
    AlgoParams, AppEvent, Ctx, INITIAL_HOLDER, Message, ParamDef, ParamDefault, ParamKind,
    Protocol, ProtocolConfig, Routing, TokenView,
};
use crate::NodeId;
use crate::graph::bfs_forest;
use std::collections::VecDeque;

/// The parameter `routing`: what the baseline's routes cost.
pub const ROUTING: ParamDef = ParamDef {
    name: "routing",
    description: "oracle (shortest paths known for free) or discovery (on-demand routes, charged in messages and delay)",
    kind: ParamKind::Choice(&["oracle", "discovery"]),
    default: ParamDefault::Word("oracle"),
};

/// `me-raymond`'s configuration: where the token starts and how routes are paid for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RaymondConfig {
    /// The node holding the token at t = 0 (parameter `holder`).
    pub holder: NodeId,
    /// The routing layer's cost model (parameter `routing`).
    pub routing: Routing,
}

impl ProtocolConfig for RaymondConfig {
    const PARAMS: &'static [ParamDef] = &[INITIAL_HOLDER, ROUTING];

    fn from_params(params: &AlgoParams) -> Self {
        Self {
            holder: params.node(INITIAL_HOLDER.name),
            routing: match params.word(ROUTING.name) {
                "discovery" => Routing::Discovery,
                _ => Routing::Oracle,
            },
        }
    }

    fn routing(&self) -> Routing {
        self.routing
    }
}

/// Raymond's two messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RaymondMsg {
    /// "Send me the privilege": the sender has a non-empty queue and has not asked yet.
    Request,
    /// The token itself, passed one logical edge.
    Privilege,
}

impl Message for RaymondMsg {
    const KINDS: &'static [&'static str] = &["Request", "Privilege"];

    fn kind_index(&self) -> usize {
        match self {
            RaymondMsg::Request => 0,
            RaymondMsg::Privilege => 1,
        }
    }

    fn carries_token(&self) -> bool {
        matches!(self, RaymondMsg::Privilege)
    }

    /// Raymond's messages name no node.
    fn renamed(&self, _rename: &[NodeId]) -> Option<Self> {
        Some(*self)
    }
}

/// One node's state: exactly the paper's variables (names in lower case).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Raymond {
    /// This node's id, so that `HOLDER = self` can be written as in the paper.
    me: NodeId,
    /// `HOLDER`: `me` when this node has the privilege, otherwise the logical neighbour
    /// on the tree path towards it.
    holder: NodeId,
    /// `USING`: this node is in its critical section.
    using: bool,
    /// `REQUEST_Q`: logical neighbours (and possibly `me`) waiting for the privilege
    /// through this node, oldest first. Each appears at most once, because a neighbour
    /// asks again only after receiving the privilege.
    request_q: VecDeque<NodeId>,
    /// `ASKED`: a `Request` has been sent to `holder` and not yet answered by the
    /// privilege, so a further one would be redundant.
    asked: bool,
}

impl Raymond {
    /// A node that is not using the privilege, with no waiting requests, whose `HOLDER`
    /// is `holder` (`me` for the token holder).
    pub fn new(me: NodeId, holder: NodeId) -> Self {
        Self {
            me,
            holder,
            using: false,
            request_q: VecDeque::new(),
            asked: false,
        }
    }

    /// `HOLDER`.
    pub fn holder(&self) -> NodeId {
        self.holder
    }

    /// `ASKED`.
    pub fn asked(&self) -> bool {
        self.asked
    }

    /// `REQUEST_Q`, oldest first.
    pub fn request_q(&self) -> impl ExactSizeIterator<Item = NodeId> + '_ {
        self.request_q.iter().copied()
    }

    /// The paper's `ASSIGN_PRIVILEGE`: a node that holds an idle privilege and has a
    /// waiting request hands the privilege to the oldest requester — itself (enter the
    /// critical section) or a neighbour (send `PRIVILEGE`, which makes that neighbour
    /// the new `HOLDER`).
    fn assign_privilege(&mut self, ctx: &mut Ctx<RaymondMsg>) {
        if self.holder == self.me
            && !self.using
            && let Some(next) = self.request_q.pop_front()
        {
            self.holder = next;
            self.asked = false;
            if self.holder == self.me {
                self.using = true;
                ctx.enter_cs();
            } else {
                ctx.send_routed(self.holder, RaymondMsg::Privilege);
            }
        }
    }

    /// The paper's `MAKE_REQUEST`: a node without the privilege that has someone waiting
    /// asks its `HOLDER` for it, once (`ASKED` suppresses repeats until the privilege
    /// comes back).
    fn make_request(&mut self, ctx: &mut Ctx<RaymondMsg>) {
        if self.holder != self.me && !self.request_q.is_empty() && !self.asked {
            ctx.send_routed(self.holder, RaymondMsg::Request);
            self.asked = true;
        }
    }

    /// Every event ends with the same two procedures, in the paper's order.
    fn assign_then_request(&mut self, ctx: &mut Ctx<RaymondMsg>) {
        self.assign_privilege(ctx);
        self.make_request(ctx);
    }
}

impl Protocol for Raymond {
    type Msg = RaymondMsg;

    type Config = RaymondConfig;

    /// No handler reads the event time.
    const READS_TIME: bool = false;

    /// The token starts at the initial holder (node 0 by default); every other node's
    /// `HOLDER` is its parent in [`bfs_tree`], so `HOLDER` arrows form the logical tree
    /// directed at the token.
    fn initial_states(config: &RaymondConfig, neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        bfs_tree(neighbours, config.holder)
            .into_iter()
            .enumerate()
            .map(|(i, parent)| {
                let me = NodeId::try_from(i).expect("node count fits NodeId");
                Raymond::new(me, parent.unwrap_or(me))
            })
            .collect()
    }

    #[inline]
    fn prefetch(&self) {
        crate::prefetch::deque(&self.request_q);
    }

    /// Topology changes are the routing layer's business, not Raymond's.
    fn on_link_up(&mut self, _peer: NodeId, _ctx: &mut Ctx<RaymondMsg>) {}

    /// Topology changes are the routing layer's business, not Raymond's; messages in
    /// transit keep being routed.
    fn on_link_down(&mut self, _peer: NodeId, _ctx: &mut Ctx<RaymondMsg>) {}

    fn on_message(&mut self, from: NodeId, msg: RaymondMsg, ctx: &mut Ctx<RaymondMsg>) {
        match msg {
            RaymondMsg::Request => self.request_q.push_back(from),
            RaymondMsg::Privilege => self.holder = self.me,
        }
        self.assign_then_request(ctx);
    }

    fn on_app(&mut self, event: AppEvent, ctx: &mut Ctx<RaymondMsg>) {
        match event {
            AppEvent::RequestCs => self.request_q.push_back(self.me),
            AppEvent::ReleaseCs => self.using = false,
        }
        self.assign_then_request(ctx);
    }

    /// Raymond's rules never compare node ids (they only test `HOLDER = self` and pass
    /// ids along), so every renaming is a symmetry.
    fn renamed(&self, rename: &[NodeId]) -> Option<Self> {
        let at = |v: NodeId| rename[v as usize];
        Some(Self {
            me: at(self.me),
            holder: at(self.holder),
            using: self.using,
            request_q: self.request_q.iter().map(|&v| at(v)).collect(),
            asked: self.asked,
        })
    }
}

impl super::ReplayView for Raymond {
    fn label(&self) -> String {
        if self.holder == self.me {
            "HOLDER = self".to_string()
        } else {
            format!("HOLDER = {}", self.holder)
        }
    }

    /// Along `HOLDER`: towards the privilege; links off the tree are not oriented.
    fn points_to(&self, peer: NodeId, other: &Self) -> Option<bool> {
        if self.holder == peer && self.holder != self.me {
            Some(true)
        } else if other.holder == self.me && other.holder != other.me {
            Some(false)
        } else {
            None
        }
    }

    fn describe(&self) -> String {
        format!(
            "HOLDER {}\nUSING {}\nASKED {}\nREQUEST_Q {:?}\n",
            self.holder, self.using, self.asked, self.request_q
        )
    }
}

impl TokenView for Raymond {
    /// `HOLDER = self`: sending the privilege sets `HOLDER` to the receiver, so a token in
    /// flight is held by nobody.
    fn holds_token(&self) -> bool {
        self.holder == self.me
    }

    fn in_cs(&self) -> bool {
        self.using
    }
}

/// The logical tree Raymond runs on: the parent of each node, `None` for `root` (where
/// the token starts; node 0 unless the `holder` parameter says otherwise).
///
/// Breadth-first search from `root` over `neighbours` (the t = 0 adjacency lists, which
/// should be symmetric); each node's neighbours are visited in increasing id order
/// whatever order the lists are in, so the tree is a pure function of the graph. A node's
/// parent is therefore its neighbour one level closer to the root that BFS dequeues
/// first (not necessarily the smallest id of that level: with 0–1, 0–2, 1–5, 2–3, 5–4,
/// 3–4, level 2 is dequeued as 5 then 3, so 4 hangs under 5). BFS keeps tree paths as
/// short as the graph allows at t = 0, which is what Raymond's message counts
/// (proportional to tree distance) want.
///
/// Nodes unreachable from `root` are attached deterministically: components are taken in
/// increasing order of their smallest id, each gets the BFS tree rooted at its smallest
/// id (same rule as above), and that root becomes a logical child of `root`. Such an
/// edge is not a physical link; the routing layer carries its messages once a path
/// exists. The result is one tree over all nodes, as the algorithm requires.
///
/// # Panics
///
/// If a list names a node `>= neighbours.len()` (the adjacency lists are built by the
/// simulator, so this is a bug, not bad input).
pub fn bfs_tree(neighbours: &[Vec<NodeId>], root: NodeId) -> Vec<Option<NodeId>> {
    let forest = bfs_forest(neighbours, root);
    // `root` is the root of everything; every other component hangs under it.
    (0..neighbours.len())
        .map(|i| match forest.parent[i] {
            None if i != root as usize => Some(root),
            parent => parent,
        })
        .collect()
}
