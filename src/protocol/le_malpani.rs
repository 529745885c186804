//! Leader election by link reversal: Malpani, Welch and Vaidya (DIALM 2000), the
//! algorithm for one topology change at a time, as the seed slides give it
//! (the course slides' sections "Node Height in LE", "The Algorithm", rules A–E, and
//! the overview walk-through; `docs/src/explanation/algorithms.md` cites them).
//!
//! # Heights and links
//!
//! Every node carries a [`Height`] `(lid, τ, oid, r, δ, id)`. As in TORA, heights are
//! compared by reference level `(τ, oid, r)`, then `δ`, then `id`; a link is directed from
//! the higher to the lower endpoint, and a node has an *outgoing link* when some
//! neighbour is lower by the node's own view of the neighbours' heights. The leader's
//! reference level is `(−1, −1, 0)`, below every other level, so a leader is a sink.
//!
//! The slides compare heights only inside one leader's DAG. When a neighbour believes in
//! another leader (a merge, or a new leader spreading after a partition), this module
//! still compares by `(τ, oid, r, δ, id)` and lets `lid` play no part in link directions:
//! rule E is what reconciles the two leaders, and it runs before the sink test of the same
//! step (see [`LeMalpani`]). `lid` is the last key of [`Height`]'s order only so that the
//! order agrees with equality; it never decides between two nodes (ids are unique).
//!
//! # Choices where the slides are silent or misprinted
//!
//! - τ is the driver's event time in nanoseconds **plus one** (saturating), as `i64`.
//!   Rule E puts adopters on reference level `(0, 0, 0)`; rule A's "new higher reference
//!   level" must lie above it even for a failure at time 0, so τ ≥ 1 for every level a
//!   failure defines. Later failures still get higher levels. (Two failures handled by one
//!   node at the same instant would reuse one level; that needs two changes at once, which
//!   the algorithm excludes.)
//! - Rule C as printed copies `(τj, oidj, rj)`; the overview ("A creates higher sublevel
//!   within the new sub-level") and TORA reflect it, so C sets `r := 1`.
//! - Rules A and D print `(τi, oidi, ri) := (−1, −1)`; `r := 0` (the example prints the
//!   leaders as `(A, −1, −1, 0, A)`, with one of `r`, `δ` omitted; both are 0).
//! - Rule D prints "rj = 1 for all j"; the overview says the higher sub-level is
//!   "reflected back to C (originator)" and "C elects itself", and the paper requires
//!   `oidj = i`. This module requires `oid = i`. A sink whose neighbours all sit on one
//!   reflected level defined by another node is in no rule of the slides; the node keeps
//!   its height and the step is counted ([`LeMalpani::uncovered_steps`]).
//! - Within one Update step, rule E is checked before rules B–D (see [`LeMalpani`]).
//! - A neighbour whose height is unknown (a link formed and its Update has not arrived)
//!   is neither an outgoing nor an incoming link and takes no part in rules B–D; its
//!   Update arrives next on the FIFO link and is handled as any other.
//! - An Update from a node that is not a neighbour any more (the simulator's `drain`
//!   link-break semantics deliver messages already in flight) is ignored: the link is
//!   gone, so the sender's height says nothing about any link of this node, and if the
//!   link forms again both ends send their heights anew.
//!
//! # Known failures of the algorithm as given
//!
//! Random one-change-at-a-time runs (`tests/le_malpani.rs`) find two mechanisms by which
//! these rules end illegal; the minimal cases are kept there as `counterexample_*` tests.
//!
//! - After a partition whose new leader has a larger id than the lost one, an Update sent
//!   before the election, still naming the lost leader, reaches a node that has already
//!   adopted the new one, and rule E's "lidᵢ > lidⱼ" brings the lost leader back. The
//!   component then ends naming a leader outside it, or never goes quiet: the new leader
//!   itself gives up its leadership for the stale id and elects itself again when the
//!   reflection returns, forever. FIFO links do not prevent the race; in the tests' runs
//!   with unit message delays it never occurred.
//! - In a merge, rule E puts the adopter on (0, 0, 0), below any neighbour on a level a
//!   failure defined, so the adopter can be a sink that is not a leader. If that
//!   neighbour is on a reflected level, no rule applies and the sink stays.
//!
//! They are reported, not patched: this module is the slides' algorithm, and a corrected
//! variant is a separate, named protocol.
//!
//! # Variants
//!
//! The node type [`LeNode`] is generic over a [`RuleSet`]: the one place where variants
//! of these rules differ (so far, what a sink does when every neighbour sits on one
//! reflected level another node defined). [`LeMalpani`] is `LeNode<Slides>`, the slides'
//! rules; `le_tora5` adds TORA's fifth case and says where it comes from.

use super::neighbour_map::NeighbourMap;
use super::{Ctx, HeightView, LeaderView, Message, Protocol};
use crate::MAX_NODES;
use crate::NodeId;
use crate::graph::{UNREACHED, bfs_forest, breadth_first};
use std::cmp::Ordering;
use std::fmt;
use std::marker::PhantomData;

/// A reference level `(τ, oid, r)`, ordered lexicographically (the derived order follows
/// the field order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RefLevel {
    /// The "logical time" of the failure that defined the level (nanoseconds + 1), 0 on
    /// rule E's level, −1 on a leader's.
    pub tau: i64,
    /// The node that defined the level, 0 on rule E's level, −1 on a leader's. An `i32`
    /// rather than an `i64`: node ids are below [`MAX_NODES`], and the narrower field makes
    /// a [`Height`] 32 bytes instead of 40, so the heights the monitors read at random
    /// never straddle two cache lines (measured with `perf` at 1,600 nodes).
    pub oid: i32,
    /// Whether the level is the reflected sub-level.
    pub r: bool,
}

/// Node `id` as a reference level's `oid`.
pub(super) fn originator(id: NodeId) -> i32 {
    i32::try_from(id).expect("node ids are below MAX_NODES, so they fit in an i32")
}

// `originator` relies on it.
const _: () = assert!(MAX_NODES <= i32::MAX as usize);

impl RefLevel {
    /// Calls `visit` on τ if it is a time stamp (a level a failure defined), not one of
    /// the constant levels' τ (−1, 0).
    fn visit_stamp(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        if self.tau > 0 {
            visit(&mut self.tau);
        }
    }

    /// A leader's level `(−1, −1, 0)`: below every other level, so the leader is a sink.
    pub const LEADER: RefLevel = RefLevel {
        tau: -1,
        oid: -1,
        r: false,
    };
    /// Rule E's level `(0, 0, 0)`, on which a node that adopts a leader restarts (and on
    /// which [`LeMalpani::initial_states`] puts every non-leader). Its `oid` 0 is also node
    /// 0's id, as the slides print it; that would matter only on the reflected `(0, 0, 1)`,
    /// which rule C makes if a sink's neighbours all sit on `(0, 0, 0)`.
    pub const ADOPTED: RefLevel = RefLevel {
        tau: 0,
        oid: 0,
        r: false,
    };
}

/// A node's height `(lid, τ, oid, r, δ, id)` ("Node Height in LE").
///
/// Ordered by reference level, then `δ`, then `id` (TORA's order); `lid` comes last only
/// to keep the order consistent with equality. Two nodes' heights always differ in `id`,
/// so the order between nodes is total and every orientation it induces is acyclic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Height {
    /// The node believed to lead this node's component.
    pub lid: NodeId,
    /// The reference level `(τ, oid, r)`.
    pub level: RefLevel,
    /// The offset ("propagation ordering parameter") within the level.
    pub delta: i64,
    /// The node's own id, which makes heights unique.
    pub id: NodeId,
}

// Two heights to a cache line; the monitors read neighbours' heights at random (`oid`).
const _: () = assert!(std::mem::size_of::<Height>() == 32);

impl Height {
    /// The height `(lid, τ, oid, r, δ, id)`.
    pub fn new(lid: NodeId, tau: i64, oid: i32, r: bool, delta: i64, id: NodeId) -> Self {
        Self {
            lid,
            level: RefLevel { tau, oid, r },
            delta,
            id,
        }
    }

    /// The height of node `id` leading its own component: `(id, −1, −1, 0, 0, id)`.
    pub fn leader(id: NodeId) -> Self {
        Self {
            lid: id,
            level: RefLevel::LEADER,
            delta: 0,
            id,
        }
    }
}

impl Ord for Height {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.level, self.delta, self.id, self.lid).cmp(&(
            other.level,
            other.delta,
            other.id,
            other.lid,
        ))
    }
}

impl PartialOrd for Height {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Height {
    /// `(lid, τ, oid, r, δ, id)`, the slides' notation with numbers for nodes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "({}, {}, {}, {}, {}, {})",
            self.lid,
            self.level.tau,
            self.level.oid,
            u8::from(self.level.r),
            self.delta,
            self.id
        )
    }
}

/// The only message of the algorithm: the sender's current height.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LeMsg {
    /// The sender's height when it sent the message.
    Update(Height),
}

impl Message for LeMsg {
    /// `on_message` returns at once when the sender is not a neighbour (module docs).
    fn ignored_from_non_neighbour(&self) -> bool {
        true
    }

    const KINDS: &'static [&'static str] = &["Update"];

    fn kind_index(&self) -> usize {
        0
    }

    fn for_each_stamp(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        let LeMsg::Update(height) = self;
        height.level.visit_stamp(visit);
    }
}

/// Where leader-election variants built on these rules differ; [`Slides`] is the
/// slides' published behaviour.
pub trait RuleSet: Clone + fmt::Debug + Eq + std::hash::Hash + Send + Sync + 'static {
    /// A sink that is not its own leader, after an Update, with every known neighbour on
    /// one reflected level that another node defined (rule D needs `oid = i`): no rule
    /// of the slides covers it.
    fn sink_below_foreign_reflection(node: &mut LeNode<Self>, time_ns: u64);
}

/// The slides' rules A–E as published: the uncovered sink keeps its height, and the step
/// is counted ([`LeNode::uncovered_steps`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Slides;

impl RuleSet for Slides {
    fn sink_below_foreign_reflection(node: &mut LeNode<Self>, _time_ns: u64) {
        node.uncovered_steps = node.uncovered_steps.saturating_add(1);
    }
}

/// The slides' algorithm: [`LeNode`] with the published rules.
pub type LeMalpani = LeNode<Slides>;

/// One node of the leader-election algorithm, with the rules of `R` where variants
/// differ.
///
/// A step is one event: a link forming, a link failing, or an Update arriving. Within an
/// Update step the node (1) records the sender's height, (2) applies rule E if the sender
/// believes in another leader, then (3), if it is not its own leader and has no outgoing
/// link, applies the first of rules B, C, D whose condition holds, and (4) sends an Update
/// to every neighbour if its height changed ("At the end of each step …"). E comes first
/// because it moves the node into the other leader's DAG, and the sink test must judge
/// the node's links where it ends up: a node that adopts a leader from a neighbour on a
/// raised reference level lands on `(0, 0, 0)` below that neighbour and may be a sink at
/// once, and nothing else would ever wake it. A failure step removes the link and applies
/// rule A if the node is then a sink and not its own leader.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeNode<R> {
    height: Height,
    /// `N_i` with `height[j]`: `None` until the first Update over a new link arrives.
    neighbours: NeighbourMap<Option<Height>>,
    uncovered_steps: u32,
    rules: PhantomData<R>,
}

impl<R: RuleSet> LeNode<R> {
    /// A node in a given state (the slides' examples start mid-run). `height.id` is the
    /// node's id.
    pub fn new(
        height: Height,
        neighbours: impl IntoIterator<Item = (NodeId, Option<Height>)>,
    ) -> Self {
        Self {
            height,
            neighbours: neighbours.into_iter().collect(),
            uncovered_steps: 0,
            rules: PhantomData,
        }
    }

    /// Nodes at `heights` (indexed by id) on `links`, each knowing its neighbours'
    /// heights: a quiet network in a given state (the slides' examples start mid-run).
    pub fn with_views(heights: &[Height], links: &[(NodeId, NodeId)]) -> Vec<Self> {
        heights
            .iter()
            .map(|&own| {
                let neighbours = links.iter().filter_map(|&(a, b)| {
                    let j = match own.id {
                        id if id == a => b,
                        id if id == b => a,
                        _ => return None,
                    };
                    Some((j, Some(heights[j as usize])))
                });
                Self::new(own, neighbours)
            })
            .collect()
    }

    /// This node's id (`height.id`).
    pub fn id(&self) -> NodeId {
        self.height.id
    }

    /// `N_i` with the last height heard from each neighbour, by id.
    pub fn neighbours(&self) -> impl Iterator<Item = (NodeId, Option<Height>)> + '_ {
        self.neighbours.iter().map(|(&j, &h)| (j, h))
    }

    /// Whether this node believes it leads its component.
    pub fn is_leader(&self) -> bool {
        self.height.lid == self.height.id
    }

    /// Whether some neighbour is lower, by this node's view.
    pub fn has_outgoing(&self) -> bool {
        self.known().any(|h| h < self.height)
    }

    /// Whether some neighbour is higher, by this node's view.
    pub fn has_incoming(&self) -> bool {
        self.known().any(|h| h > self.height)
    }

    /// How many steps ended with this node a sink that no rule of the slides covers: not
    /// its own leader, after an Update, with every known neighbour on one reflected level
    /// that another node defined (rule D needs `oid = i`). The node then keeps its height
    /// and stays a sink. Within one component, TORA's reflection reaches only its
    /// originator as an all-reflected sink, so this stays 0 there; a merge through a node
    /// on a reflected level reaches it (`counterexample_merge_at_reflected_node`).
    pub fn uncovered_steps(&self) -> u32 {
        self.uncovered_steps
    }

    fn known(&self) -> impl Iterator<Item = Height> + '_ {
        self.neighbours.values().filter_map(|h| *h)
    }

    fn is_sink_non_leader(&self) -> bool {
        !self.is_leader() && !self.has_outgoing()
    }

    fn elect_self(&mut self) {
        self.height = Height::leader(self.height.id);
    }

    /// A new reference level `(τ, i, 0)` with `δ = 0`, τ the event time (module docs).
    pub(super) fn new_reference_level(&mut self, time_ns: u64) {
        let tau = i64::try_from(time_ns).unwrap_or(i64::MAX).saturating_add(1);
        self.height.level = RefLevel {
            tau,
            oid: originator(self.height.id),
            r: false,
        };
        self.height.delta = 0;
    }

    /// Rule A: no outgoing links due to a link failure.
    fn rule_a(&mut self, time_ns: u64) {
        if self.has_incoming() {
            self.new_reference_level(time_ns);
        } else {
            self.elect_self();
        }
    }

    /// Rule E: `j` believes in another leader.
    fn rule_e(&mut self, hj: Height) {
        let adopt = self.height.lid > hj.lid
            || (self.height.level.oid == originator(hj.lid) && self.height.level.r);
        if adopt {
            self.height.lid = hj.lid;
            self.height.level = RefLevel::ADOPTED;
            self.height.delta = hj.delta.saturating_add(1);
        }
    }

    /// Rules B, C, D: no outgoing links due to a link reversal after an Update.
    fn rules_bcd(&mut self, time_ns: u64) {
        let mut known = self.known();
        let Some(first) = known.next() else {
            return;
        };
        let mut max = first.level;
        let mut all_equal = true;
        for h in known {
            all_equal &= h.level == first.level;
            max = max.max(h.level);
        }
        if !all_equal {
            // B: just below the highest neighbours' level.
            let min_delta = self
                .known()
                .filter(|h| h.level == max)
                .map(|h| h.delta)
                .min()
                .unwrap_or(0);
            self.height.level = max;
            self.height.delta = min_delta.saturating_sub(1);
        } else if !max.r {
            // C: reflect the level.
            self.height.level = RefLevel { r: true, ..max };
            self.height.delta = 0;
        } else if max.oid == originator(self.height.id) {
            // D: the reflection came back to the originator.
            self.elect_self();
        } else {
            R::sink_below_foreign_reflection(self, time_ns);
        }
    }

    fn broadcast_if_changed(&self, before: Height, ctx: &mut Ctx<LeMsg>) {
        if self.height != before {
            for &j in self.neighbours.keys() {
                ctx.send(j, LeMsg::Update(self.height));
            }
        }
    }
}

impl<R: RuleSet> LeaderView for LeNode<R> {
    fn leader(&self) -> NodeId {
        self.height.lid
    }
}

impl<R: RuleSet> HeightView for LeNode<R> {
    type Height = Height;

    fn height(&self) -> Height {
        self.height
    }

    fn neighbour_height(&self, j: NodeId) -> Option<Height> {
        self.neighbours.get(&j).copied().flatten()
    }

    fn views(&self) -> impl Iterator<Item = (NodeId, &Height)> + '_ {
        self.neighbours
            .iter()
            .filter_map(|(&j, h)| h.as_ref().map(|h| (j, h)))
    }
}

impl<R: RuleSet> super::ReplayView for LeNode<R> {
    fn label(&self) -> String {
        self.height.to_string()
    }

    fn points_to(&self, _peer: NodeId, other: &Self) -> Option<bool> {
        super::points_down(self, other)
    }

    fn describe(&self) -> String {
        let mut out = format!("height {}\nleader {}\n", self.height, self.height.lid);
        for (j, h) in self.neighbours.iter() {
            match h {
                Some(h) => out.push_str(&format!("view of {j}: {h}\n")),
                None => out.push_str(&format!("view of {j}: (no Update yet)\n")),
            }
        }
        out
    }
}

impl<R: RuleSet> Protocol for LeNode<R> {
    type Msg = LeMsg;

    type Config = ();

    /// τ is the event time plus one when a rule defines a level, and is otherwise only
    /// compared (levels are ordered lexicographically) or copied.
    const STAMP_INVARIANT: bool = true;

    fn for_each_stamp(&mut self, visit: &mut dyn FnMut(&mut i64)) {
        self.height.level.visit_stamp(visit);
        for height in self.neighbours.values_mut().flatten() {
            height.level.visit_stamp(visit);
        }
    }

    /// Per component of the t = 0 graph, the smallest id leads (rule E prefers smaller
    /// leader ids, so no merge later has to undo the choice) with height
    /// `(l, −1, −1, 0, 0, l)`; every other node has `(l, 0, 0, 0, d, id)` with `d` its hop
    /// distance to the leader, so each has an outgoing link towards the leader; every
    /// node knows its neighbours' heights.
    fn initial_states(_config: &(), neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        let n = neighbours.len();
        let adjacent = |i: usize| {
            neighbours[i]
                .iter()
                .copied()
                .filter(move |&j| (j as usize) < n && j as usize != i)
        };
        // Roots after node 0 are taken in increasing order, so each is its
        // component's smallest id.
        let forest = bfs_forest(neighbours, 0);
        let heights: Vec<Height> = (0..n)
            .map(|i| {
                let lid = forest.root[i];
                if lid as usize == i {
                    Height::leader(lid)
                } else {
                    Height {
                        lid,
                        level: RefLevel::ADOPTED,
                        delta: i64::from(forest.depth[i]),
                        id: i as NodeId,
                    }
                }
            })
            .collect();
        (0..n)
            .map(|i| {
                LeNode::new(
                    heights[i],
                    adjacent(i).map(|j| (j, Some(heights[j as usize]))),
                )
            })
            .collect()
    }

    #[inline]
    fn prefetch(&self) {
        self.neighbours.prefetch();
    }

    /// "When an incident link forms, i updates N_i and sends an Update message over the
    /// link with its current height." The neighbour's height is unknown until its own
    /// Update arrives.
    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<LeMsg>) {
        if peer == self.height.id {
            return;
        }
        self.neighbours.insert(peer, None);
        ctx.send(peer, LeMsg::Update(self.height));
    }

    /// Updates `N_i`, then rule A if the failure left the node a sink that is not its own
    /// leader.
    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<LeMsg>) {
        if self.neighbours.remove(&peer).is_none() {
            return;
        }
        let before = self.height;
        if self.is_sink_non_leader() {
            self.rule_a(ctx.event_time_ns());
        }
        self.broadcast_if_changed(before, ctx);
    }

    /// Records `height[j]`, then rule E, then rules B–D (see [`LeMalpani`] for the order).
    /// Updates from non-neighbours, or whose height names another node, are ignored.
    fn on_message(&mut self, from: NodeId, msg: LeMsg, ctx: &mut Ctx<LeMsg>) {
        let LeMsg::Update(hj) = msg;
        if hj.id != from {
            debug_assert!(false, "Update from {from} carries the height of {}", hj.id);
            return;
        }
        let Some(slot) = self.neighbours.get_mut(&from) else {
            return;
        };
        *slot = Some(hj);
        let before = self.height;
        if hj.lid != self.height.lid {
            self.rule_e(hj);
        }
        if self.is_sink_non_leader() {
            self.rules_bcd(ctx.event_time_ns());
        }
        self.broadcast_if_changed(before, ctx);
    }
}

/// Checks that a quiescent configuration is legal: in every connected component of
/// `links`, all nodes name one leader that lies in the component, that leader is the
/// component's only sink, and every node's neighbour set and view of its neighbours'
/// heights match the links and the actual heights. (Heights are unique, so the DAG they
/// orient is acyclic by construction.) `nodes[i]` must be node `i`. Returns the first
/// violation found, in words.
pub fn is_legal<R: RuleSet>(nodes: &[LeNode<R>], links: &[(NodeId, NodeId)]) -> Result<(), String> {
    let n = nodes.len();
    let mut adjacency = vec![Vec::new(); n];
    for &(a, b) in links {
        if a as usize >= n || b as usize >= n || a == b {
            return Err(format!("link {a}-{b} is not between two of the {n} nodes"));
        }
        adjacency[a as usize].push(b);
        adjacency[b as usize].push(a);
    }
    for list in &mut adjacency {
        list.sort_unstable();
        list.dedup();
    }
    let mut depth = vec![UNREACHED; n];
    for start in 0..n as NodeId {
        if depth[start as usize] != UNREACHED {
            continue;
        }
        let mut members = vec![start];
        breadth_first(
            |v| &adjacency[v as usize],
            start,
            None,
            &mut depth,
            |v, _| members.push(v),
        );
        component_is_legal(nodes, &adjacency, &members)?;
    }
    Ok(())
}

/// [`is_legal`] for one component: `members` are its nodes and `adjacency[i]` the sorted
/// neighbours of node `i` in the current graph (monitors check only the components a
/// change touched).
pub fn component_is_legal<R: RuleSet>(
    nodes: &[LeNode<R>],
    adjacency: &[Vec<NodeId>],
    members: &[NodeId],
) -> Result<(), String> {
    let node = |i: NodeId| {
        nodes
            .get(i as usize)
            .ok_or_else(|| format!("node {i} does not exist"))
    };
    let Some(&first) = members.first() else {
        return Ok(());
    };
    let lid = node(first)?.height.lid;
    if !members.contains(&lid) {
        return Err(format!(
            "node {first} names leader {lid}, which is not in its component {members:?}"
        ));
    }
    for &i in members {
        let p = node(i)?;
        if p.id() != i {
            return Err(format!("nodes[{i}] has id {}", p.id()));
        }
        if p.height.lid != lid {
            return Err(format!(
                "node {i} names leader {} but node {first} names {lid}",
                p.height.lid
            ));
        }
        let actual = adjacency.get(i as usize).map_or(&[][..], Vec::as_slice);
        if !p.neighbours.keys().copied().eq(actual.iter().copied()) {
            return Err(format!(
                "node {i} has neighbours {:?} but its links are {actual:?}",
                p.neighbours.keys().collect::<Vec<_>>()
            ));
        }
        let mut sink = true;
        for &j in actual {
            let hj = node(j)?.height;
            if p.neighbour_height(j) != Some(hj) {
                return Err(format!(
                    "node {i} sees {j} at {:?} but it is at {hj}",
                    p.neighbour_height(j).map(|h| h.to_string())
                ));
            }
            sink &= hj > p.height;
        }
        if sink && i != lid {
            return Err(format!(
                "node {i} at {} is a sink but the leader is {lid}",
                p.height
            ));
        }
        if !sink && i == lid {
            return Err(format!("leader {i} at {} is not a sink", p.height));
        }
    }
    Ok(())
}
