//! Gafni–Bertsekas link reversal: full (`gb-full`) and partial (`gb-partial`) reversal,
//! which keep a destination-oriented DAG under topology changes (the "route" family).
//!
//! E. M. Gafni and D. P. Bertsekas, "Distributed algorithms for generating loop-free
//! routes in networks with frequently changing topology", IEEE Transactions on
//! Communications 29(1), 1981, pp. 11–18 (cited below as *GB*). Every node keeps a
//! height, totally ordered; each link is directed from its higher end to its lower end,
//! so the orientation is acyclic whatever the heights. The destination never changes
//! its height. Any other node that is a *sink* (it has neighbours and all of them are
//! higher) raises its height by its algorithm's rule, which reverses some of its links,
//! and tells its neighbours. When no node but the destination is a sink, every node of
//! the destination's component has a directed path to it (GB's Theorem: in a finite
//! DAG every maximal directed path ends at a sink).
//!
//! # The two rules (GB §III, "full reversal" and "partial reversal" by heights)
//!
//! - **Full reversal**, height `(a, i)`: a sink takes `a := max{a_j} + 1` over its
//!   neighbours `j`, so it becomes higher than all of them and every one of its links
//!   reverses.
//! - **Partial reversal**, height `(a, b, i)` compared lexicographically: a sink takes
//!   `a := min{a_j} + 1`; then, if some neighbour has `a_j` equal to the new `a`,
//!   `b := min{b_j : a_j = a} − 1`, else `b` is kept. It becomes higher than the
//!   neighbours with the smallest `a` (those links reverse) and lower than the others
//!   at the new level (those stay incoming), so only the links of neighbours that have
//!   not reversed since its last reversal turn.
//!
//! The text of GB was not available to us, nor the restatements in Welch and Walter's
//! "Link Reversal Algorithms" (Morgan & Claypool 2011) or in Busch and Tirthapura,
//! "Analysis of link reversal routing algorithms" (SIAM J. Computing 35(2), 2005), of
//! which only the abstracts were. What we checked: full reversal's rule is restated in
//! these terms in public course material; for partial reversal's, with `a` starting
//! equal everywhere, a throwaway simulation of random executions (not shipped) found
//! the same reversal counts as the list-based definition of partial reversal (a sink
//! reverses the links of the neighbours not on its list, or all of them if all are;
//! Iowa State Com S 611 lecture notes), where `+ 1` in place of `− 1` for `b` did not. Here full reversal uses the same three-field height with `b = 0` throughout,
//! which orders exactly as `(a, i)`.
//!
//! # Messages and the choices that GB leaves to an implementation
//!
//! GB describes the reversal rules on a graph whose nodes read each other's heights;
//! here nodes exchange them by messages, as TORA and the leader-election algorithms do:
//!
//! - one message kind, `Height(h)`, sent to every neighbour when a node's height
//!   changes (the peers of links still forming included), and to the peer when a link
//!   forms;
//! - a node's view of a neighbour is the last height received from it; a neighbour
//!   joins the view with its first `Height` after the link formed, and leaves it when the
//!   link fails; a `Height` from a node that is no longer a neighbour (in flight when the
//!   link failed, under `drain`) is ignored;
//! - a node decides it is a sink by its view. Views can only be too low (heights only
//!   grow, and links are FIFO), so a node that believes it is a sink is one; and two
//!   neighbours are never both sinks, so the message-passing execution performs the
//!   same reversal steps as GB's shared-variable one. Every schedule takes the same
//!   number of steps at every node (Charron-Bost, Gaillard, Welch and Widder, "Routing
//!   without ordering", SPAA 2009, give exact per-node counts valid for every
//!   execution); the property tests compare the protocol, delivered in random orders,
//!   with synchronous rounds and random sequential orders of a brute force;
//! - a node without neighbours is not a sink (there is nothing to reverse).
//!
//! # Initial state
//!
//! The destination-oriented DAG of the t = 0 graph, from hop distances `d` to the
//! destination (parameter `dest`, node 0 by default): full reversal `(d, 0, i)`,
//! partial reversal `(0, d, i)` (the reversal levels `a` start equal, `b` orders by
//! distance), the destination itself `(0, 0, dest)`. A component that cannot reach the
//! destination at t = 0 is oriented towards its lowest id `r` at heights offset by the
//! node count, so it has one sink, `r`. As in GB, sinks act on the initial state:
//! every node is started at t = 0 ([`Protocol::STARTS`]), so `r` reverses at once and
//! such a component reverses for as long as it is cut off (next section). (A quiet
//! start would leave `r` a sink without a route once its component joins the
//! destination's, since no message need ever reach it.)
//!
//! # Partitions
//!
//! GB has no partition detection: in a component without the destination some node is
//! always a sink, so reversals go on for as long as the component stays cut off (its
//! heights grow without bound, one step per message delay). The route monitor counts
//! these steps (`partitioned_reversals`) and reports such components as partitioned,
//! not as violations; the run goes on (heights are 64-bit: at a million steps per
//! simulated second they would take 290,000 years to overflow).

use super::neighbour_map::NeighbourMap;
use super::{
    AlgoParams, Ctx, HeightView, Message, ParamDef, ParamDefault, ParamKind, Protocol,
    ProtocolConfig, RouteView,
};
use crate::NodeId;
use crate::graph::bfs_forest;
use std::fmt;
use std::marker::PhantomData;

/// A node's height `(a, b, i)`, compared lexicographically (the field order makes the
/// derived `Ord` exactly that). Full reversal keeps `b = 0`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GbHeight {
    /// The reversal level.
    pub a: i64,
    /// Partial reversal's second component (0 in full reversal).
    pub b: i64,
    /// The node's id; heights are distinct.
    pub id: NodeId,
}

impl GbHeight {
    /// The height `(a, b, id)`.
    pub const fn new(a: i64, b: i64, id: NodeId) -> Self {
        Self { a, b, id }
    }
}

impl fmt::Display for GbHeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.a, self.b, self.id)
    }
}

/// The only message: the sender's height.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HeightMsg(pub GbHeight);

impl Message for HeightMsg {
    /// `on_message` returns at once when the sender is neither a neighbour nor forming.
    fn ignored_from_non_neighbour(&self) -> bool {
        true
    }

    const KINDS: &'static [&'static str] = &["Height"];

    fn kind_index(&self) -> usize {
        0
    }

    fn height_parts(&self) -> Option<[i64; 2]> {
        Some([self.0.a, self.0.b])
    }

    fn shift_heights(&mut self, by: [i64; 2]) {
        self.0.a += by[0];
        self.0.b += by[1];
    }

    fn for_each_level(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        visit(&mut self.0.a);
    }
}

/// The rule a sink applies: where full and partial reversal differ.
pub trait Reversal: Clone + fmt::Debug + Eq + std::hash::Hash + Send + Sync + 'static {
    /// The initial height of a node at hop distance `d` from its component's root.
    fn initial(d: i64, id: NodeId) -> GbHeight;
    /// The new height of sink `own`, from its neighbours' heights (not empty).
    fn reverse(own: GbHeight, neighbours: &[GbHeight]) -> GbHeight;
}

/// Full reversal (module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Full;

impl Reversal for Full {
    fn initial(d: i64, id: NodeId) -> GbHeight {
        GbHeight::new(d, 0, id)
    }

    fn reverse(own: GbHeight, neighbours: &[GbHeight]) -> GbHeight {
        let top = neighbours.iter().map(|h| h.a).max().unwrap_or(own.a);
        GbHeight::new(top + 1, 0, own.id)
    }
}

/// Partial reversal (module docs).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Partial;

impl Reversal for Partial {
    fn initial(d: i64, id: NodeId) -> GbHeight {
        GbHeight::new(0, d, id)
    }

    fn reverse(own: GbHeight, neighbours: &[GbHeight]) -> GbHeight {
        let a = neighbours.iter().map(|h| h.a).min().unwrap_or(own.a) + 1;
        let b = neighbours
            .iter()
            .filter(|h| h.a == a)
            .map(|h| h.b)
            .min()
            .map_or(own.b, |m| m - 1);
        GbHeight::new(a, b, own.id)
    }
}

/// The parameter `dest`: the node every route leads to.
pub const DEST: ParamDef = ParamDef {
    name: "dest",
    description: "the destination: the node every route leads to (its height never changes)",
    kind: ParamKind::Node,
    default: ParamDefault::Int(0),
};

/// The configuration of the route family's algorithms: the destination.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RouteConfig {
    /// The destination (parameter `dest`).
    pub dest: NodeId,
}

impl ProtocolConfig for RouteConfig {
    const PARAMS: &'static [ParamDef] = &[DEST];

    fn from_params(params: &AlgoParams) -> Self {
        Self {
            dest: params.node(DEST.name),
        }
    }
}

/// One node of Gafni–Bertsekas link reversal with rule `R`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GbNode<R> {
    me: NodeId,
    dest: NodeId,
    height: GbHeight,
    /// The view: each neighbour whose first `Height` has arrived, with its last height.
    neighbours: NeighbourMap<GbHeight>,
    /// Links up whose peer's first `Height` has not arrived.
    forming: Vec<NodeId>,
    rule: PhantomData<R>,
}

/// `gb-full`.
pub type GbFull = GbNode<Full>;
/// `gb-partial`.
pub type GbPartial = GbNode<Partial>;

impl<R: Reversal> GbNode<R> {
    /// Whether this node is the destination.
    pub fn is_destination(&self) -> bool {
        self.me == self.dest
    }

    /// GB's sink, by this node's view: not the destination, with neighbours, all
    /// higher.
    pub fn is_sink(&self) -> bool {
        !self.is_destination()
            && !self.neighbours.is_empty()
            && self.neighbours.values().all(|h| *h > self.height)
    }

    /// The neighbours in the view, in increasing id order.
    pub fn neighbours(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.neighbours.keys().copied()
    }

    /// Reverses if this node is a sink, and tells the neighbours.
    fn reverse_if_sink(&mut self, ctx: &mut Ctx<HeightMsg>) {
        if !self.is_sink() {
            return;
        }
        let heights: Vec<GbHeight> = self.neighbours.values().copied().collect();
        self.height = R::reverse(self.height, &heights);
        debug_assert!(!self.is_sink(), "a reversal leaves an outgoing link");
        // Peers of forming links too: they have our height from the formation, which
        // is now stale.
        for &j in self.neighbours.keys().chain(&self.forming) {
            ctx.send(j, HeightMsg(self.height));
        }
    }
}

impl<R: Reversal> Protocol for GbNode<R> {
    type Msg = HeightMsg;

    type Config = RouteConfig;

    /// GB's sinks act on the initial state: the sink of a component without the
    /// destination starts reversing at once (module docs, "Initial state").
    const STARTS: bool = true;

    fn on_start(&mut self, ctx: &mut Ctx<HeightMsg>) {
        self.reverse_if_sink(ctx);
    }

    /// Both rules compare heights and derive a sink's new one from its neighbours' by a
    /// constant step (full reversal's `b` is always 0, so its least `b` is 0 and it is
    /// never shifted); only the initial heights are absolute, and the destination's
    /// never changes, so its value is never read but compared.
    const SHIFT_INVARIANT: bool = true;

    /// No handler reads the event time.
    const READS_TIME: bool = false;

    fn height_floor(&self) -> Option<[i64; 2]> {
        let parts = |h: &GbHeight| [h.a, h.b];
        Some(
            self.neighbours
                .values()
                .fold(parts(&self.height), |m, h| [m[0].min(h.a), m[1].min(h.b)]),
        )
    }

    fn shift_heights(&mut self, by: [i64; 2]) {
        let shift = |h: &mut GbHeight| {
            h.a += by[0];
            h.b += by[1];
        };
        shift(&mut self.height);
        self.neighbours.values_mut().for_each(shift);
    }

    /// `a` is only compared, or made as `1 + max a` (full reversal) or `1 + min a`
    /// (partial) over the neighbours, or copied into views; `b` is not a level.
    const LEVELS_STEP_BY_ONE: bool = true;

    fn for_each_level(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        visit(&mut self.height.a);
        for h in self.neighbours.values_mut() {
            visit(&mut h.a);
        }
    }

    /// The destination-oriented DAG of the t = 0 graph (module docs, "Initial state").
    fn initial_states(config: &RouteConfig, neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        let n = neighbours.len();
        let offset = i64::try_from(n).expect("node count fits i64");
        let forest = bfs_forest(neighbours, config.dest);
        let heights: Vec<GbHeight> = (0..n)
            .map(|i| {
                let id = NodeId::try_from(i).expect("node count fits NodeId");
                let d = i64::from(forest.depth[i]);
                match forest.root[i] == config.dest {
                    true => R::initial(d, id),
                    false => R::initial(offset + d, id),
                }
            })
            .collect();
        (0..n)
            .map(|i| GbNode {
                me: NodeId::try_from(i).expect("node count fits NodeId"),
                dest: config.dest,
                height: heights[i],
                neighbours: neighbours[i]
                    .iter()
                    .filter(|&&j| j as usize != i)
                    .map(|&j| (j, heights[j as usize]))
                    .collect(),
                forming: Vec::new(),
                rule: PhantomData,
            })
            .collect()
    }

    #[inline]
    fn prefetch(&self) {
        self.neighbours.prefetch();
        crate::prefetch::slice(&self.forming);
    }

    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<HeightMsg>) {
        if !self.forming.contains(&peer) {
            self.forming.push(peer);
        }
        ctx.send(peer, HeightMsg(self.height));
    }

    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<HeightMsg>) {
        self.forming.retain(|&j| j != peer);
        if self.neighbours.remove(&peer).is_some() {
            self.reverse_if_sink(ctx);
        }
    }

    fn on_message(&mut self, from: NodeId, msg: HeightMsg, ctx: &mut Ctx<HeightMsg>) {
        let HeightMsg(h) = msg;
        if let Some(at) = self.forming.iter().position(|&j| j == from) {
            self.forming.swap_remove(at);
        } else if !self.neighbours.contains_key(&from) {
            // The link failed since `from` sent this.
            return;
        }
        self.neighbours.insert(from, h);
        self.reverse_if_sink(ctx);
    }
}

impl<R: Reversal> RouteView for GbNode<R> {
    fn destination(config: &RouteConfig) -> NodeId {
        config.dest
    }
}

impl<R: Reversal> HeightView for GbNode<R> {
    type Height = GbHeight;

    fn height(&self) -> GbHeight {
        self.height
    }

    fn neighbour_height(&self, j: NodeId) -> Option<GbHeight> {
        self.neighbours.get(&j).copied()
    }

    fn views(&self) -> impl Iterator<Item = (NodeId, &GbHeight)> + '_ {
        self.neighbours.iter().map(|(&j, h)| (j, h))
    }
}

impl<R: Reversal> super::ReplayView for GbNode<R> {
    fn label(&self) -> String {
        self.height.to_string()
    }

    fn points_to(&self, _peer: NodeId, other: &Self) -> Option<bool> {
        super::points_down(self, other)
    }

    fn describe(&self) -> String {
        let mut out = format!("height {}\ndestination {}\n", self.height, self.dest);
        for (j, h) in self.neighbours.iter() {
            out.push_str(&format!("view of {j}: {h}\n"));
        }
        for j in &self.forming {
            out.push_str(&format!("link to {j} forming (no Height yet)\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_reversal_goes_above_every_neighbour() {
        let own = GbHeight::new(1, 0, 5);
        let n = [GbHeight::new(2, 0, 1), GbHeight::new(4, 0, 2)];
        assert_eq!(Full::reverse(own, &n), GbHeight::new(5, 0, 5));
    }

    #[test]
    fn partial_reversal_goes_above_the_lowest_level_and_below_the_rest_of_the_new_one() {
        // Neighbours at levels 0, 1, 1: the new level is 1; among its neighbours at
        // level 1 the least b is 3, so b = 2: above the level-0 neighbour, below both
        // level-1 ones (their links stay incoming).
        let own = GbHeight::new(0, 9, 7);
        let n = [
            GbHeight::new(0, 4, 1),
            GbHeight::new(1, 3, 2),
            GbHeight::new(1, 6, 3),
        ];
        let new = Partial::reverse(own, &n);
        assert_eq!(new, GbHeight::new(1, 2, 7));
        assert!(new > n[0] && new < n[1] && new < n[2]);
        // No neighbour at the new level: b is kept.
        let n = [GbHeight::new(0, 4, 1), GbHeight::new(0, 5, 2)];
        assert_eq!(Partial::reverse(own, &n), GbHeight::new(1, 9, 7));
    }
}
