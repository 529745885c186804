//! Symmetry reduction: states that differ only by a renaming of the nodes are explored
//! once.
//!
//! If renaming the nodes commutes with every handler ([`Protocol::renamed`]), then a
//! renamed state has the renamed futures, and every property the checker judges (how
//! many nodes are in the CS, how many tokens exist, whether a component is legal) reads
//! the same on both. So the search may replace every state by one *representative* of
//! its renamings and lose nothing: every reachable state still has a renaming among the
//! explored ones (by induction along any execution), and a shortest violating execution
//! in the reduced search is as short as in the full one. Each violating execution found
//! is renamed back step by step into an execution of the real system
//! ([`unrename_path`]).
//!
//! stateright's own `symmetry()` applies only to its depth-first search, which loses
//! shortest counterexamples; here the model itself returns representatives, so the
//! breadth-first search explores the quotient.
//!
//! Which protocols qualify: only those whose rules never compare node ids. Every
//! link-reversal algorithm here breaks ties between equal heights by node id (and leader
//! election elects by id), so its only symmetry is the identity and it is explored in
//! full; Raymond's tree algorithm qualifies (its rules only pass ids along).
//!
//! The representative of a state is, among the renamings that list the nodes in the
//! order of a renaming-invariant colour (degree, messages queued from and to the node,
//! waiting or in the CS, refined twice by the neighbours' colours), the one with the
//! smallest hash. Any renaming would be sound; a canonical one merges more states.
//! When a colour class is so large that trying every order costs more than
//! [`MAX_CANDIDATES`] renamings, one fixed order is taken (sound, merging less).

use super::state::{CheckState, Step};
use crate::NodeId;
use crate::protocol::{Message, Protocol};
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};

/// The most renamings tried per state (7!: a class of 7 interchangeable nodes).
pub const MAX_CANDIDATES: usize = 5040;

/// `v` becomes `rename[v]`.
pub type Renaming = Vec<NodeId>;

impl<P: Protocol> CheckState<P> {
    /// The state with every node renamed, or `None` if the protocol has no symmetry.
    pub fn renamed(&self, rename: &[NodeId]) -> Option<Self> {
        let at = |v: NodeId| rename[v as usize];
        let mut nodes: Vec<Option<P>> = vec![None; self.nodes.len()];
        for (v, node) in self.nodes.iter().enumerate() {
            nodes[rename[v] as usize] = Some(node.renamed(rename)?);
        }
        let queues = self
            .queues
            .map(|from, to, m| Some((at(from), at(to), m.renamed(rename)?)))?;
        let mut routed: Vec<(NodeId, NodeId, P::Msg)> = self
            .routed
            .iter()
            .map(|(o, d, m)| Some((at(*o), at(*d), m.renamed(rename)?)))
            .collect::<Option<_>>()?;
        // Stable: each pair's messages stay in the order sent.
        routed.sort_by_key(|&(o, d, _)| (o, d));
        let pair = |a: NodeId, b: NodeId| (at(a).min(at(b)), at(a).max(at(b)));
        Some(Self {
            nodes: nodes
                .into_iter()
                .map(|n| n.expect("a permutation"))
                .collect(),
            queues,
            routed,
            links: self.links.iter().map(|(a, b)| pair(a, b)).collect(),
            changes_left: self.changes_left,
            requests_left: self.requests_left,
            waiting: self.waiting.iter().map(at).collect(),
            in_cs: self.in_cs.iter().map(at).collect(),
            served: self.served,
            tokens_lost: self.tokens_lost,
            cut_off: self.cut_off.map(|set| set.iter().map(at).collect()),
            clock: self.clock,
        })
    }
}

impl Step {
    /// The same step in renamed nodes.
    pub fn renamed(&self, rename: &[NodeId]) -> Step {
        let at = |v: NodeId| rename[v as usize];
        match *self {
            Step::Deliver { from, to } => Step::Deliver {
                from: at(from),
                to: at(to),
            },
            Step::DeliverRouted { origin, dest } => Step::DeliverRouted {
                origin: at(origin),
                dest: at(dest),
            },
            Step::Link { a, b, up } => Step::Link {
                a: at(a).min(at(b)),
                b: at(a).max(at(b)),
                up,
            },
            Step::Request { node } => Step::Request { node: at(node) },
            Step::Release { node } => Step::Release { node: at(node) },
        }
    }
}

/// Whether `P` declares a symmetry (asked of one node of `state`).
pub fn applies<P: Protocol>(state: &CheckState<P>) -> bool {
    let identity: Renaming = (0..state.nodes.len() as NodeId).collect();
    state.renamed(&identity).is_some()
}

fn fingerprint<T: Hash>(value: &T) -> u64 {
    // SipHash with fixed keys: the same representative in every run and thread.
    let mut hasher = std::hash::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// Each node's colour: what a renaming cannot change about it.
fn colours<P: Protocol>(state: &CheckState<P>) -> Vec<u64> {
    let n = state.nodes.len();
    let mut neighbours = vec![Vec::new(); n];
    for (a, b) in state.links.iter() {
        neighbours[a as usize].push(b);
        neighbours[b as usize].push(a);
    }
    let mut counts = vec![[0usize; 4]; n];
    for ((from, to), len) in state.queues.links() {
        counts[from as usize][0] += len;
        counts[to as usize][1] += len;
    }
    for &(origin, dest, _) in &state.routed {
        counts[origin as usize][2] += 1;
        counts[dest as usize][3] += 1;
    }
    let mut colour: Vec<u64> = (0..n)
        .map(|v| {
            let id = v as NodeId;
            fingerprint(&(
                neighbours[v].len(),
                counts[v],
                state.waiting.contains(id),
                state.in_cs.contains(id),
            ))
        })
        .collect();
    for _ in 0..2 {
        colour = (0..n)
            .map(|v| {
                let mut around: Vec<u64> =
                    neighbours[v].iter().map(|&w| colour[w as usize]).collect();
                around.sort_unstable();
                fingerprint(&(colour[v], around))
            })
            .collect();
    }
    colour
}

/// The representative of `state`'s renamings and the renaming that gives it.
pub fn representative<P: Protocol>(state: &CheckState<P>) -> (CheckState<P>, Renaming) {
    let colour = colours(state);
    // Nodes grouped by colour, classes in colour order, members in id order.
    let mut classes: BTreeMap<u64, Vec<NodeId>> = BTreeMap::new();
    for (v, &c) in colour.iter().enumerate() {
        classes.entry(c).or_default().push(v as NodeId);
    }
    let mut classes: Vec<Vec<NodeId>> = classes.into_values().collect();
    let candidates = classes
        .iter()
        .try_fold(1usize, |acc, class| acc.checked_mul(factorial(class.len())))
        .unwrap_or(usize::MAX);
    let mut best: Option<(u64, CheckState<P>, Renaming)> = None;
    loop {
        // The nodes in this order get names 0, 1, 2, ….
        let mut rename: Renaming = vec![0; state.nodes.len()];
        for (new, &old) in classes.iter().flatten().enumerate() {
            rename[old as usize] = new as NodeId;
        }
        let renamed = state.renamed(&rename).expect("symmetry applies");
        let hash = fingerprint(&renamed);
        if best.as_ref().is_none_or(|(h, _, _)| hash < *h) {
            best = Some((hash, renamed, rename));
        }
        if candidates > MAX_CANDIDATES || !next_order(&mut classes) {
            break;
        }
    }
    let (_, state, rename) = best.expect("one candidate at least");
    (state, rename)
}

fn factorial(k: usize) -> usize {
    (1..=k)
        .try_fold(1usize, |acc, i| acc.checked_mul(i))
        .unwrap_or(usize::MAX)
}

/// Steps to the next combination of orders of the classes (odometer of
/// lexicographic permutations); `false` after the last.
fn next_order(classes: &mut [Vec<NodeId>]) -> bool {
    for class in classes.iter_mut().rev() {
        if next_permutation(class) {
            return true;
        }
        // It wrapped round to sorted order: carry to the previous class.
    }
    false
}

/// The next lexicographic permutation in place; `false` (and sorted) after the last.
fn next_permutation(items: &mut [NodeId]) -> bool {
    let Some(i) = (1..items.len()).rev().find(|&i| items[i - 1] < items[i]) else {
        items.sort_unstable();
        return false;
    };
    let j = (i..items.len())
        .rev()
        .find(|&j| items[j] > items[i - 1])
        .expect("a larger item after the pivot");
    items.swap(i - 1, j);
    items[i..].reverse();
    true
}

/// `first` after `then`: `v` becomes `then[first[v]]`.
fn compose(first: &[NodeId], then: &[NodeId]) -> Renaming {
    first.iter().map(|&v| then[v as usize]).collect()
}

fn inverse(rename: &[NodeId]) -> Renaming {
    let mut inverse = vec![0; rename.len()];
    for (v, &w) in rename.iter().enumerate() {
        inverse[w as usize] = v as NodeId;
    }
    inverse
}

/// An execution of the reduced search (each step taken in a representative) renamed
/// back into one of the real system from `init`: `step(state, action)` is the model's
/// successor without reduction. Returns the real steps and the real last state.
pub fn unrename_path<P: Protocol>(
    init: CheckState<P>,
    path: &[Step],
    step: impl Fn(&CheckState<P>, Step) -> Option<CheckState<P>>,
) -> (Vec<Step>, CheckState<P>) {
    // Invariant: representative `shown` = `to_shown`(real state `real`).
    let (mut shown, mut to_shown) = representative(&init);
    let mut real = init;
    let mut steps = Vec::with_capacity(path.len());
    for action in path {
        let real_action = action.renamed(&inverse(&to_shown));
        real = step(&real, real_action.clone()).expect("the reduced step is enabled");
        let next = step(&shown, action.clone()).expect("the reduced step is enabled");
        let (next_shown, rename) = representative(&next);
        to_shown = compose(&to_shown, &rename);
        shown = next_shown;
        steps.push(real_action);
    }
    debug_assert!(real.renamed(&to_shown).as_ref() == Some(&shown));
    (steps, real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn orders_of_classes_are_enumerated_once_each() {
        let mut classes = vec![vec![0, 1, 2], vec![3], vec![4, 5]];
        let mut seen = BTreeSet::new();
        loop {
            seen.insert(classes.concat());
            if !next_order(&mut classes) {
                break;
            }
        }
        assert_eq!(seen.len(), 6 * 2, "3! × 1! × 2!");
        assert_eq!(
            classes,
            vec![vec![0, 1, 2], vec![3], vec![4, 5]],
            "back to sorted"
        );
    }

    #[test]
    fn renamings_compose_and_invert() {
        let a = vec![2, 0, 1];
        let b = vec![1, 2, 0];
        let ab = compose(&a, &b);
        for v in 0..3 {
            assert_eq!(ab[v], b[a[v] as usize]);
        }
        assert_eq!(compose(&a, &inverse(&a)), vec![0, 1, 2]);
    }
}
