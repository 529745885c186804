//! Per node: how many neighbours it holds a stale view of, and how many are lower than
//! it, kept current as heights, views and links change. The legality checks of the
//! families whose nodes keep heights (leader election, routes) ask exactly these two
//! questions of every node; keeping the answers lets a monitor judge a component from
//! counts, and re-examine only the nodes an event changed and their neighbours.

use crate::NodeId;
use crate::protocol::HeightView;
use crate::topology::components::ComponentTracker;

/// The counts, with the heights they were taken against.
#[derive(Clone, Debug)]
pub struct ViewCounts<H> {
    stale: Vec<u32>,
    lower: Vec<u32>,
    /// Every node's height when the counts were last brought up to date.
    heights: Vec<H>,
    /// Scratch: the nodes recounted in the current update.
    recount: Vec<bool>,
    /// The nodes whose counts the last update may have changed: those of `changed`
    /// (recounted) and their neighbours adjusted for one link, possibly repeated. A
    /// monitor re-derives its per-node flags for exactly these.
    pub affected: Vec<NodeId>,
}

impl<H> Default for ViewCounts<H> {
    fn default() -> Self {
        Self {
            stale: Vec::new(),
            lower: Vec::new(),
            heights: Vec::new(),
            recount: Vec::new(),
            affected: Vec::new(),
        }
    }
}

impl<H: Ord + Clone> ViewCounts<H> {
    /// Every node's counts from scratch; `height(v)` is `v`'s height and `view(v, j)`
    /// what `v` believes `j`'s height is.
    pub fn new(
        graph: &ComponentTracker,
        height: impl Fn(NodeId) -> H,
        view: impl Fn(NodeId, NodeId) -> Option<H>,
    ) -> Self {
        let n = graph.node_count();
        let heights: Vec<H> = (0..n as NodeId).map(&height).collect();
        let mut counts = Self {
            stale: vec![0; n],
            lower: vec![0; n],
            heights,
            recount: vec![false; n],
            affected: Vec::new(),
        };
        for v in 0..n as NodeId {
            counts.recount_node(graph, v, &view);
        }
        counts
    }

    /// [`Self::new`] with the heights and views `nodes` hold.
    pub fn of_nodes<P: HeightView<Height = H>>(graph: &ComponentTracker, nodes: &[P]) -> Self {
        Self::new(
            graph,
            |v| nodes[v as usize].height(),
            |v, j| nodes[v as usize].neighbour_height(j),
        )
    }

    /// [`Self::update`] with the heights and views `nodes` hold.
    pub fn update_from_nodes<'a, P: HeightView<Height = H>>(
        &mut self,
        graph: &ComponentTracker,
        changed: impl Iterator<Item = &'a NodeId> + Clone,
        nodes: &[P],
    ) {
        self.update(
            graph,
            changed,
            |v| nodes[v as usize].height(),
            |v, j| nodes[v as usize].neighbour_height(j),
        );
    }

    /// Neighbours `v` has a stale view of.
    pub fn stale(&self, v: NodeId) -> u32 {
        self.stale[v as usize]
    }

    /// `v`'s height as of the last update.
    pub fn height(&self, v: NodeId) -> &H {
        &self.heights[v as usize]
    }

    /// Neighbours lower than `v` (0: `v` is a sink).
    pub fn lower(&self, v: NodeId) -> u32 {
        self.lower[v as usize]
    }

    fn recount_node(
        &mut self,
        graph: &ComponentTracker,
        v: NodeId,
        view: &impl Fn(NodeId, NodeId) -> Option<H>,
    ) {
        let own = &self.heights[v as usize];
        let (mut stale, mut lower) = (0, 0);
        for &j in graph.neighbours(v) {
            let actual = &self.heights[j as usize];
            stale += u32::from(view(v, j).as_ref() != Some(actual));
            lower += u32::from(actual < own);
        }
        (self.stale[v as usize], self.lower[v as usize]) = (stale, lower);
    }

    /// Brings the counts up to date after an event in which the nodes of `changed`
    /// (possibly repeated) ran handlers or had links change: the set `T`. Nodes of `T`
    /// are recounted; a neighbour `j` outside `T` has the same links and views as
    /// before, and only its link to a node of `T` can count differently, so it is
    /// adjusted for that link alone, from the height stored before the event and the
    /// height now. Both are listed in `affected`.
    pub fn update<'a>(
        &mut self,
        graph: &ComponentTracker,
        changed: impl Iterator<Item = &'a NodeId> + Clone,
        height: impl Fn(NodeId) -> H,
        view: impl Fn(NodeId, NodeId) -> Option<H>,
    ) {
        self.affected.clear();
        for &v in changed.clone() {
            self.recount[v as usize] = true;
            self.affected.push(v);
        }
        for &v in changed.clone() {
            let now = height(v);
            if self.heights[v as usize] == now {
                continue;
            }
            let before = std::mem::replace(&mut self.heights[v as usize], now);
            let now = &self.heights[v as usize];
            for &j in graph.neighbours(v) {
                if self.recount[j as usize] {
                    continue;
                }
                let seen = view(j, v);
                let own = &self.heights[j as usize];
                let stale_then = seen.as_ref() != Some(&before);
                let stale_now = seen.as_ref() != Some(now);
                let s = &mut self.stale[j as usize];
                *s = *s + u32::from(stale_now) - u32::from(stale_then);
                let l = &mut self.lower[j as usize];
                *l = *l + u32::from(now < own) - u32::from(before < *own);
                self.affected.push(j);
            }
        }
        for &v in changed {
            if std::mem::replace(&mut self.recount[v as usize], false) {
                self.recount_node(graph, v, &view);
            }
        }
    }
}
