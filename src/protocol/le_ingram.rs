//! Leader election for dynamic networks: Ingram, Shields, Walter and Welch, "An
//! asynchronous leader election algorithm for dynamic networks" (IPDPS 2009), with the
//! causal clocks of the journal version (Ingram, Radeva, Shields, Viqar, Walter and
//! Welch, "A leader election algorithm for dynamic networks with causal clocks",
//! Distributed Computing 26, 2013). The papers prove that once topology changes stop,
//! every connected component ends with exactly one leader, whatever the pattern of
//! changes before, and (the 2009 abstract) that "in certain well-behaved situations, a
//! new leader is not elected unnecessarily".
//!
//! # What this module rests on
//!
//! The papers' own text could not be read here (only their abstracts are public in the
//! sources available to this project). The rules below were put together from public
//! restatements, and each point says how firmly it stands:
//!
//! - **V** (verified in an abstract): the 2009 algorithm assumes a common global clock;
//!   the journal version replaces it with any totally ordered causal clock (logical or
//!   perfect), the handlers unchanged; the guarantees above, as the abstracts word them.
//! - **R** (read in a restatement or an implementation, not in the papers): J. A.
//!   Pestre's report "A hierarchical leader election algorithm for dynamic networks with
//!   causal clocks" (Télécom Paris, 2020; its §I restates the 2013 algorithm and its
//!   §III gives pseudocode of a two-level extension that keeps the original's
//!   mechanisms), its Akka implementation, and a C++ implementation of the flat
//!   algorithm. Everything in "Rules" below is **R** unless marked otherwise.
//! - **I** (inferred here): marked where it occurs.
//!
//! # Heights
//!
//! A height is `(τ, oid, r, δ, nlts, lid, i)`, compared lexicographically, every field
//! ascending ([`IngramHeight`]): the reference level `(τ, oid, r)` first, then `δ`, then
//! the *leader pair* `(nlts, lid)`, then the id. `nlts` is minus the (clock) time of the
//! leader's election, so a more recent election has a *smaller* pair, and a smaller pair
//! has priority: newer elections win, ties go to the smaller leader id. Links point from
//! the higher to the lower height.
//!
//! # Rules
//!
//! Each node keeps `N` (neighbours it has heard from, with its view of their heights)
//! and `forming` (links that are up but whose first Update has not arrived; a link joins
//! `N` only with that Update). A node is a **sink** when it is not its own leader, every
//! neighbour in `N` carries its own leader pair, and every neighbour in `N` is higher.
//!
//! - **Link up** to `j`: `j` joins `forming`; send an Update to `j`.
//! - **Link down** to `j`: `j` leaves `N` and `forming`. If `N` is now empty, elect self
//!   (send to `forming`); else, if a sink, start a new reference level.
//! - **Update** from `j` (ignored unless `j` is in `N` or `forming`): record `j`'s height,
//!   move `j` to `N`. If `j` carries this node's leader pair and this node is a sink:
//!   if all of `N` share one reference level `(τ, oid, r)`, then (1) `τ > 0, r = 0`:
//!   reflect it, `(τ, oid, 1)`, `δ = 0`; (2) `τ > 0, r = 1, oid = i`: the reflection came
//!   back to its originator, elect self; (3) otherwise start a new reference level;
//!   else propagate the largest neighbour level, `δ` one below the smallest `δ` on it.
//!   If `j` carries another leader pair: adopt it if it has priority, copying `j`'s
//!   reference level with `δ_j + 1` (not rule E's `(0, 0, 0)` of Malpani et al.); if not,
//!   send this node's height back to `j` (the restatement's else-branch; the other
//!   sources omit it, and it is harmless: **I**).
//! - After an event that changed the height, send it to `N ∪ forming`.
//! - **Elect self**: `(0, 0, 0, 0, −T, i, i)`. **New reference level**: `(T, i, 0, 0, …)`
//!   keeping the leader pair. `T` is the node's clock.
//!
//! # Clocks (parameter `clock`)
//!
//! - `perfect` (default; the 2009 paper's global clock): `T` is the simulation time of the
//!   event in nanoseconds plus one, handed to the handler as data (the protocol core reads
//!   no clock). Plus one keeps `τ > 0` for a level started at time 0 (`τ = 0` means "no
//!   search", **I**). Two events at one node in the same nanosecond (zero delays,
//!   deliveries that coincide) get `T` one above the previous one, so a node's clock
//!   strictly increases, as a clock must (**I**).
//! - `causal` (the journal version with Lamport clocks, as the Akka implementation does
//!   it; how the papers carry clock values is not verified, **R**): each node keeps a
//!   counter, raised by one on every event and to above the sender's on every Update
//!   (`T := max(T, T_msg) + 1`); every Update carries the sender's counter.
//!
//! # What the conformance suite found: causal clocks and stale levels (**I**)
//!
//! A Lamport clock orders only events that are causally related. A reference level a
//! sink starts lingers in the heights of the nodes it reached after its search is over
//! (the sink found a way down again), and a node that never heard of it can later start
//! a new level with a smaller `τ`, or an equal `τ` and a smaller id, which then ranks below
//! the stale one. A sink
//! between the two propagates the larger, stale level, its reflection comes back to the
//! stale level's originator from every side, and the originator elects itself although
//! the leader is still reachable. The change was one at a time and the network stayed
//! connected, so the election is unnecessary. With `clock = perfect` a later level always
//! ranks above an earlier one, and this cannot happen. `tests/le_ingram.rs`
//! (`causal_clocks_can_rank_a_new_reference_level_below_a_stale_one`) shows it on five
//! nodes. In the conformance suite's random scenarios (up to 8 nodes, changes
//! serialized, always connected), 25 of 40,000 cases with causal clocks elected a leader
//! unnecessarily, and 0 of 100,000 with the perfect clock. No case broke safety or
//! convergence. The journal version promises stability only "in certain well-behaved
//! situations" (**V**). Its text could not be read here, so whether those situations
//! exclude stale levels is not known. The rules are kept as reconstructed.
//!
//! # Choices made here (**I**)
//!
//! - **Initial state**, as for the other families: per component of the t = 0 graph, the
//!   smallest id leads with height `(0, 0, 0, 0, 0, l, l)`, every other node has
//!   `(0, 0, 0, d, 0, l, i)` with `d` its hop distance, `N` = its neighbours with exact
//!   views, `forming` empty, clocks 0. `nlts = 0` is older than any later election
//!   (`−T < 0`).
//! - A node left without neighbours elects itself even if it already leads (the
//!   restatement's rule, taken literally); that renews its leader pair. The monitors'
//!   `elections` count a node *becoming* its own leader, so it is not counted there
//!   ([`LeIngram::elections`] counts it).
//! - The papers' channels lose their messages when they go down, as the simulator's
//!   `link_break = "drop"` does. Under `drain` (the default) an Update sent before a
//!   break can arrive after the link formed again and be taken as the link's first
//!   Update, a stale view until the fresh one follows on the same FIFO link: a departure
//!   from the papers' model, which the validation runs in `analysis/le_validation_*.toml`
//!   cover (half of them `drain`; no violation).
//! - Messages from a node that is neither in `N` nor in `forming` (a link broke while they
//!   were in flight) are ignored, as the restatement says.

use super::le_malpani::{RefLevel, originator};
use super::neighbour_map::NeighbourMap;
use super::{
    AlgoParams, Ctx, HeightView, LeaderView, Message, ParamDef, ParamDefault, ParamKind, Protocol,
    ProtocolConfig,
};
use crate::NodeId;
use crate::graph::bfs_forest;
use std::collections::BTreeSet;
use std::fmt;

/// Where a node's clock `T` comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Clock {
    /// The simulation time of the event (the 2009 paper's global clock).
    #[default]
    Perfect,
    /// A Lamport clock carried in every Update (the journal version's causal clocks).
    Causal,
}

/// The configuration of `le-ingram`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IngramConfig {
    /// Where `T` comes from.
    pub clock: Clock,
}

const CLOCK: ParamDef = ParamDef {
    name: "clock",
    description: "the nodes' clock: perfect (simulation time) or causal (Lamport clocks)",
    kind: ParamKind::Choice(&["perfect", "causal"]),
    default: ParamDefault::Word("perfect"),
};

impl ProtocolConfig for IngramConfig {
    const PARAMS: &'static [ParamDef] = &[CLOCK];

    fn from_params(params: &AlgoParams) -> Self {
        Self {
            clock: match params.word(CLOCK.name) {
                "causal" => Clock::Causal,
                _ => Clock::Perfect,
            },
        }
    }
}

/// A height `(τ, oid, r, δ, nlts, lid, i)`, ordered field by field as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IngramHeight {
    /// The reference level `(τ, oid, r)`.
    pub level: RefLevel,
    /// The offset within the level.
    pub delta: i64,
    /// Minus the clock time of the leader's election (0 for the initial leaders).
    pub nlts: i64,
    /// The leader this node believes in.
    pub lid: NodeId,
    /// The node's own id.
    pub id: NodeId,
}

impl IngramHeight {
    /// The leader pair `(nlts, lid)`: smaller has priority.
    pub fn leader_pair(&self) -> (i64, NodeId) {
        (self.nlts, self.lid)
    }
}

impl fmt::Display for IngramHeight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "({}, {}, {}, {}, {}, {}, {})",
            self.level.tau,
            self.level.oid,
            u8::from(self.level.r),
            self.delta,
            self.nlts,
            self.lid,
            self.id
        )
    }
}

/// The only message: the sender's height, with its clock (`causal`; 0 otherwise).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IngramMsg {
    /// The sender's height when it sent the message.
    pub height: IngramHeight,
    /// The sender's Lamport clock when it sent the message.
    pub clock: u64,
}

impl Message for IngramMsg {
    /// `on_message` returns at once, before reading the clock, when the sender is
    /// neither a neighbour nor forming.
    fn ignored_from_non_neighbour(&self) -> bool {
        true
    }

    const KINDS: &'static [&'static str] = &["Update"];

    fn kind_index(&self) -> usize {
        0
    }
}

/// One node of `le-ingram`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LeIngram {
    height: IngramHeight,
    /// `N` with this node's view of each neighbour's height.
    neighbours: NeighbourMap<IngramHeight>,
    /// Links up whose first Update has not arrived.
    forming: BTreeSet<NodeId>,
    clock_mode: Clock,
    /// The Lamport clock (`causal`).
    clock: u64,
    /// The last `T` of the perfect clock, which strictly increases at a node.
    last_perfect: i64,
    /// Times this node elected itself.
    elections: u32,
}

impl LeIngram {
    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.height.id
    }

    /// Times this node elected itself.
    pub fn elections(&self) -> u32 {
        self.elections
    }

    /// Links up whose first Update has not arrived.
    pub fn forming(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.forming.iter().copied()
    }

    /// Advances the clock for an event at `time_ns` (carrying `received` when an Update
    /// brings one) and returns `T`.
    fn tick(&mut self, time_ns: u64, received: Option<u64>) -> i64 {
        match self.clock_mode {
            Clock::Perfect => {
                let now = i64::try_from(time_ns).unwrap_or(i64::MAX).saturating_add(1);
                self.last_perfect = now.max(self.last_perfect.saturating_add(1));
                self.last_perfect
            }
            Clock::Causal => {
                self.clock = self.clock.max(received.unwrap_or(0)).saturating_add(1);
                i64::try_from(self.clock).unwrap_or(i64::MAX)
            }
        }
    }

    fn is_leader(&self) -> bool {
        self.height.lid == self.height.id
    }

    fn is_sink(&self) -> bool {
        let pair = self.height.leader_pair();
        !self.is_leader()
            && self
                .neighbours
                .values()
                .all(|h| h.leader_pair() == pair && *h > self.height)
    }

    fn elect_self(&mut self, t: i64) {
        self.elections = self.elections.saturating_add(1);
        self.height = IngramHeight {
            level: RefLevel {
                tau: 0,
                oid: 0,
                r: false,
            },
            delta: 0,
            nlts: t.saturating_neg(),
            lid: self.height.id,
            id: self.height.id,
        };
    }

    fn start_new_ref_level(&mut self, t: i64) {
        self.height.level = RefLevel {
            tau: t,
            oid: originator(self.height.id),
            r: false,
        };
        self.height.delta = 0;
    }

    /// The sink cases of an Update step.
    fn sink_step(&mut self, t: i64) {
        let Some(first) = self.neighbours.values().next().map(|h| h.level) else {
            return;
        };
        if self.neighbours.values().all(|h| h.level == first) {
            if first.tau > 0 && !first.r {
                self.height.level = RefLevel { r: true, ..first };
                self.height.delta = 0;
            } else if first.tau > 0 && first.r && first.oid == originator(self.height.id) {
                self.elect_self(t);
            } else {
                self.start_new_ref_level(t);
            }
        } else {
            let largest = self
                .neighbours
                .values()
                .map(|h| h.level)
                .max()
                .expect("N is not empty");
            let delta = self
                .neighbours
                .values()
                .filter(|h| h.level == largest)
                .map(|h| h.delta)
                .min()
                .expect("some neighbour is on the largest level");
            self.height.level = largest;
            self.height.delta = delta.saturating_sub(1);
        }
    }

    fn send_to_all(&self, ctx: &mut Ctx<IngramMsg>) {
        let msg = self.message();
        for &j in self.neighbours.keys().chain(self.forming.iter()) {
            ctx.send(j, msg);
        }
    }

    fn message(&self) -> IngramMsg {
        IngramMsg {
            height: self.height,
            clock: self.clock,
        }
    }
}

impl LeaderView for LeIngram {
    fn leader(&self) -> NodeId {
        self.height.lid
    }
}

impl HeightView for LeIngram {
    type Height = IngramHeight;

    fn height(&self) -> IngramHeight {
        self.height
    }

    fn neighbour_height(&self, j: NodeId) -> Option<IngramHeight> {
        self.neighbours.get(&j).copied()
    }

    fn views(&self) -> impl Iterator<Item = (NodeId, &IngramHeight)> + '_ {
        self.neighbours.iter().map(|(&j, h)| (j, h))
    }
}

impl super::ReplayView for LeIngram {
    fn label(&self) -> String {
        self.height.to_string()
    }

    fn points_to(&self, _peer: NodeId, other: &Self) -> Option<bool> {
        super::points_down(self, other)
    }

    fn describe(&self) -> String {
        let mut out = format!(
            "height {}\nleader {}\nelections {}\n",
            self.height,
            LeaderView::leader(self),
            self.elections
        );
        for (j, h) in self.neighbours.iter() {
            out.push_str(&format!("view of {j}: {h}\n"));
        }
        for j in &self.forming {
            out.push_str(&format!("link to {j} forming (no Update yet)\n"));
        }
        out
    }
}

impl Protocol for LeIngram {
    type Msg = IngramMsg;
    type Config = IngramConfig;

    /// A leader-oriented DAG per component of the t = 0 graph, led by its smallest id
    /// (module docs, "Choices made here").
    fn initial_states(config: &IngramConfig, neighbours: &[Vec<NodeId>]) -> Vec<Self> {
        let forest = bfs_forest(neighbours, 0);
        let height = |i: usize| IngramHeight {
            level: RefLevel {
                tau: 0,
                oid: 0,
                r: false,
            },
            delta: i64::from(forest.depth[i]),
            nlts: 0,
            lid: forest.root[i],
            id: i as NodeId,
        };
        (0..neighbours.len())
            .map(|i| LeIngram {
                height: height(i),
                neighbours: neighbours[i]
                    .iter()
                    .filter(|&&j| j as usize != i)
                    .map(|&j| (j, height(j as usize)))
                    .collect(),
                forming: BTreeSet::new(),
                clock_mode: config.clock,
                clock: 0,
                last_perfect: 0,
                elections: 0,
            })
            .collect()
    }

    #[inline]
    fn prefetch(&self) {
        self.neighbours.prefetch();
    }

    fn on_link_up(&mut self, peer: NodeId, ctx: &mut Ctx<IngramMsg>) {
        if peer == self.height.id {
            return;
        }
        self.tick(ctx.event_time_ns(), None);
        self.neighbours.remove(&peer);
        self.forming.insert(peer);
        ctx.send(peer, self.message());
    }

    fn on_link_down(&mut self, peer: NodeId, ctx: &mut Ctx<IngramMsg>) {
        let known = self.neighbours.remove(&peer).is_some();
        let forming = self.forming.remove(&peer);
        if !known && !forming {
            return;
        }
        let t = self.tick(ctx.event_time_ns(), None);
        let before = self.height;
        if self.neighbours.is_empty() {
            self.elect_self(t);
        } else if self.is_sink() {
            self.start_new_ref_level(t);
        }
        if self.height != before {
            self.send_to_all(ctx);
        }
    }

    fn on_message(&mut self, from: NodeId, msg: IngramMsg, ctx: &mut Ctx<IngramMsg>) {
        let hj = msg.height;
        if hj.id != from || !(self.neighbours.contains_key(&from) || self.forming.contains(&from)) {
            return;
        }
        let t = self.tick(ctx.event_time_ns(), Some(msg.clock));
        self.forming.remove(&from);
        self.neighbours.insert(from, hj);
        let before = self.height;
        if hj.leader_pair() == self.height.leader_pair() {
            if self.is_sink() {
                self.sink_step(t);
            }
        } else if hj.leader_pair() < self.height.leader_pair() {
            self.height = IngramHeight {
                level: hj.level,
                delta: hj.delta.saturating_add(1),
                nlts: hj.nlts,
                lid: hj.lid,
                id: self.height.id,
            };
        } else {
            ctx.send(from, self.message());
        }
        if self.height != before {
            self.send_to_all(ctx);
        }
    }
}
