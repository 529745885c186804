//! The set of states a search has visited, with each node's protocol state interned.
//!
//! A checked system's states share most of their parts: across a hundred thousand
//! states of RL on four nodes there are only a few thousand distinct node states. So a
//! stored state keeps, per node, the index of its node state in one shared table, and
//! the rest of the state (messages in flight, links, budgets) as it is. Equality and
//! hashing are those of the whole state (two node states are equal exactly when their
//! indices are), so the set holds the same states as a set of whole states would, in
//! the same order, at a fraction of the memory (measured by `linkrev bench check`).

use super::state::CheckState;
use crate::protocol::Protocol;
use indexmap::IndexSet;
use rustc_hash::FxBuildHasher;

/// A stored state: its node states by index, and the rest of the state with no nodes
/// (whose equality and hashing leave out the clock, as a whole state's do).
type Stored<P> = (Box<[u32]>, CheckState<P>);

/// Visited states in the order first inserted, each with an index.
pub struct StateStore<P: Protocol> {
    /// Every distinct node state met.
    nodes: IndexSet<P, FxBuildHasher>,
    /// The states.
    states: IndexSet<Stored<P>, FxBuildHasher>,
}

impl<P: Protocol> Default for StateStore<P> {
    fn default() -> Self {
        Self {
            nodes: IndexSet::with_hasher(FxBuildHasher),
            states: IndexSet::with_hasher(FxBuildHasher),
        }
    }
}

impl<P: Protocol> StateStore<P> {
    /// Splits `state` into its stored form, interning its node states.
    fn stored(&mut self, mut state: CheckState<P>) -> Stored<P> {
        let ids = std::mem::take(&mut state.nodes)
            .into_iter()
            .map(|node| self.nodes.insert_full(node).0 as u32)
            .collect();
        (ids, state)
    }

    /// Inserts `state`: its index, and whether it is new.
    pub fn insert(&mut self, state: CheckState<P>) -> (u32, bool) {
        let stored = self.stored(state);
        let (index, new) = self.states.insert_full(stored);
        (index as u32, new)
    }

    /// The index of `state`, if stored.
    pub fn index_of(&self, state: &CheckState<P>) -> Option<u32> {
        let ids = state
            .nodes
            .iter()
            .map(|node| self.nodes.get_index_of(node).map(|i| i as u32))
            .collect::<Option<Box<[u32]>>>()?;
        let shell = CheckState {
            nodes: Vec::new(),
            ..state.clone()
        };
        self.states.get_index_of(&(ids, shell)).map(|i| i as u32)
    }

    /// State `index`, whole again.
    pub fn get(&self, index: u32) -> CheckState<P> {
        let (ids, shell) = &self.states[index as usize];
        CheckState {
            nodes: ids
                .iter()
                .map(|&i| self.nodes[i as usize].clone())
                .collect(),
            ..shell.clone()
        }
    }

    /// Removes the state inserted last.
    pub fn pop(&mut self) {
        self.states.pop();
    }

    /// Number of states.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether no state is stored.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::CheckSetup;
    use crate::check::graph::SmallGraph;
    use crate::family::{MutualExclusion, Watches};
    use crate::protocol::me_rl::Rl;
    use stateright::Model as _;

    /// Every state reachable within 9 actions of RL on a ring: the store keeps the same
    /// states in the same order as a set of whole states, and gives each back whole.
    #[test]
    fn the_store_holds_what_a_set_of_whole_states_holds() {
        let setup = CheckSetup {
            changes: 1,
            requests: 2,
            max_depth: 9,
            max_states: usize::MAX,
            ..CheckSetup::plain(SmallGraph::parse("ring:4").unwrap())
        };
        let model = <MutualExclusion as Watches<Rl>>::model(Default::default(), &setup);
        let mut whole: IndexSet<CheckState<Rl>> = IndexSet::new();
        let mut store = StateStore::default();
        let start = model.initial();
        whole.insert(start.clone());
        store.insert(start);
        let mut next = 0;
        let mut actions = Vec::new();
        while next < whole.len() && whole.len() < 20_000 {
            let state = whole[next].clone();
            actions.clear();
            model.actions(&state, &mut actions);
            for action in actions.drain(..) {
                let after = model.step(&state, action).unwrap();
                let (i, new) = whole.insert_full(after.clone());
                assert_eq!(store.index_of(&after), (!new).then_some(i as u32));
                assert_eq!(store.insert(after), (i as u32, new));
            }
            next += 1;
        }
        assert_eq!(store.len(), whole.len());
        assert!(
            store.nodes.len() * 10 < store.len(),
            "node states are shared"
        );
        for (i, state) in whole.iter().enumerate() {
            let back = store.get(i as u32);
            assert_eq!(&back, state);
            assert_eq!(back.clock, state.clock);
        }
    }
}
