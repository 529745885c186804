//! Liveness over every fair execution: "once changes stop, every request in a component
//! that holds a token is served", "… every component becomes legal".
//!
//! A property judged only in terminal states says nothing of executions that never
//! end. This pass judges [`When::Eventually`] properties over *every* execution of a
//! closed (finite) state space, infinite ones included, under the fairness an
//! asynchronous network gives:
//!
//! - **fairness**: a message in flight is delivered eventually, and a node in its
//!   critical section leaves it eventually (weak fairness for each delivery link, each
//!   routed pair and each release). Changes and requests come from the environment,
//!   which may stop at any time, so they are never owed.
//! - A **violation** is an execution that, from some point on, makes no change and stays
//!   in states where the property's judgement fails (its *bad* states). There are two
//!   shapes. A *stuck* state is bad and enables no owed action (the environment may
//!   stop there for ever). A *fair cycle* runs through bad states only; on it, every
//!   owed action is either taken or, in some state of the cycle, not enabled.
//!
//! The search: every reachable state is stored (breadth first, so each has a shortest
//! path from the start); the bad states form a subgraph whose strongly connected
//! components are found with Tarjan's algorithm. For weak fairness the test per component
//! is exact: a component holds a fair cycle if and only if every owed action enabled in
//! all its states is also taken on one of its edges (Emerson and Lei's observation; the
//! cycle through every state and edge of the component is then fair, and no cycle of a
//! component that fails the test is).
//!
//! A violation is written as an ordinary scenario: the stem to the first state of the
//! cycle, then the cycle once (or the stem alone, to a stuck state). Replayed, the last
//! state equals the cycle's first, up to the checker's quotients.
//!
//! A proof that a property holds needs the closed state space. A violation does not:
//! a cycle among stored states, each edge a real move (recomputed from the model, not
//! read from the search), is a real cycle, and whether it is fair depends only on the
//! actions its own states enable. So the pass also runs over the states a search cut by
//! its budget stored, moves to states it never reached left out, and reports what it
//! finds there; finding nothing leaves the property unknown. (A state space that is
//! infinite, such as a leader election whose stale updates revive a lost leader for ever
//! with a new time stamp each round, may still hold a cycle up to the quotients, which
//! only this finds.) The lasso is the shortest stem among the stored states', not
//! necessarily the shortest there is.
//!
//! The pass runs without symmetry reduction (fairness names links by node ids, which a
//! renaming would mix up); the quotients of [`super::shift`] and [`super::stamps`]
//! rename no node and are kept.

use super::model::{ProtocolModel, Step, When};
use super::state::CheckState;
use super::store::StateStore;
use crate::protocol::Protocol;
use stateright::Model as _;

/// The stored state graph of a closed search.
pub struct StateGraph<P: Protocol> {
    /// Every reachable state, in breadth-first order (index 0 is the start).
    states: StateStore<P>,
    /// For each state but the start, the state it was first reached from and how.
    parent: Vec<Option<(u32, Step)>>,
    /// Whether every move from a stored state leads to a stored state: false for a
    /// search cut by its budget, for one with persistent sets, and for one with sleep
    /// sets over the gap abstraction, which may skip abstract states no real one maps to
    /// ([`super::explore`]).
    closed: bool,
    /// For a search cut by its budget: the owed moves it took, by state (their targets
    /// are stored), used instead of recomputing every stored state's moves, which would
    /// cost more than the search. Fewer moves than the states have (sleep sets skip
    /// some) can hide a cycle, never invent one.
    recorded: Option<RecordedMoves>,
}

/// Moves a search took, grouped by the state they leave (compressed rows).
pub struct RecordedMoves {
    /// `moves[start[i]..start[i + 1]]` leave state `i`.
    start: Vec<u32>,
    moves: Vec<(Step, u32)>,
}

impl RecordedMoves {
    /// `moves` as `(from, step, to)`, in any order and with repeats, over `states`
    /// states.
    pub fn new(states: usize, mut moves: Vec<(u32, Step, u32)>) -> Self {
        moves.sort_unstable_by(|a, b| (a.0, a.2).cmp(&(b.0, b.2)).then(a.1.cmp(&b.1)));
        moves.dedup();
        let mut start = vec![0u32; states + 1];
        for &(from, ..) in &moves {
            start[from as usize + 1] += 1;
        }
        for i in 0..states {
            start[i + 1] += start[i];
        }
        Self {
            start,
            moves: moves.into_iter().map(|(_, step, to)| (step, to)).collect(),
        }
    }

    fn of(&self, index: u32) -> &[(Step, u32)] {
        let i = index as usize;
        &self.moves[self.start[i] as usize..self.start[i + 1] as usize]
    }
}

/// Whether an enabled `step` is owed by fairness (module docs).
pub(super) fn owed(step: &Step) -> bool {
    matches!(
        step,
        Step::Deliver { .. } | Step::DeliverRouted { .. } | Step::Release { .. }
    )
}

impl<P: Protocol> StateGraph<P> {
    /// Every state reachable in `model`, or `None` if there are more than `max_states`.
    pub fn explore(model: &ProtocolModel<P>, max_states: usize) -> Option<Self> {
        let mut start = model.initial();
        model.quotient_without_renaming(&mut start);
        let mut states = StateStore::default();
        states.insert(start);
        let mut parent = vec![None];
        let mut actions = Vec::new();
        let mut next = 0;
        while next < states.len() {
            let state = states.get(next as u32);
            actions.clear();
            model.actions(&state, &mut actions);
            for action in actions.drain(..) {
                for after in model.successors_without_renaming(&state, &action) {
                    let (_, new) = states.insert(after);
                    if new {
                        if states.len() > max_states || !model.memory.admits() {
                            return None;
                        }
                        parent.push(Some((next as u32, action.clone())));
                    }
                }
            }
            next += 1;
        }
        Some(Self {
            states,
            parent,
            closed: true,
            recorded: None,
        })
    }

    /// A graph from a search that stored every state it visited
    /// ([`super::explore`]): `parent[i]` says how state `i` was first reached; `closed`,
    /// whether it visited every state a move leads to; `recorded`, the owed moves a
    /// search cut by its budget took.
    pub fn from_parts(
        states: StateStore<P>,
        parent: Vec<Option<(u32, Step)>>,
        closed: bool,
        recorded: Option<RecordedMoves>,
    ) -> Self {
        debug_assert_eq!(states.len(), parent.len());
        Self {
            states,
            parent,
            closed,
            recorded,
        }
    }

    /// State `index`.
    pub fn state(&self, index: u32) -> CheckState<P> {
        self.states.get(index)
    }

    /// Number of states.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether the graph is empty (it never is: it holds the start).
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// The steps from the start to state `index`.
    pub fn stem(&self, mut index: u32) -> Vec<Step> {
        let mut steps = Vec::new();
        while let Some((from, step)) = &self.parent[index as usize] {
            steps.push(step.clone());
            index = *from;
        }
        steps.reverse();
        steps
    }

    /// The successors of state `index` by `step`s that are not changes or requests
    /// (neither can recur on a cycle, and "once changes stop" excludes changes).
    fn moves(&self, model: &ProtocolModel<P>, index: u32) -> Vec<(Step, u32)> {
        if let Some(recorded) = &self.recorded {
            return recorded.of(index).to_vec();
        }
        let state = self.states.get(index);
        let mut actions = Vec::new();
        model.actions(&state, &mut actions);
        actions
            .into_iter()
            .filter(owed)
            .flat_map(|action| {
                model
                    .successors_without_renaming(&state, &action)
                    .into_iter()
                    .filter_map(|after| {
                        let to = self.states.index_of(&after);
                        // Under the gap abstraction with sleep sets the search visits
                        // every abstracted real state but not every abstract one
                        // ([`super::explore`]); a move to a state it never visited is
                        // no real move's image, and leaving it out keeps every real
                        // execution. A search cut by its budget, or with persistent
                        // sets, also leaves states out: a cycle found without them is
                        // still a real one. Otherwise the graph is closed.
                        assert!(to.is_some() || !self.closed, "the graph is closed");
                        Some((action.clone(), to?))
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }
}

/// How a report states a liveness violation whose stem has `stem` steps and whose
/// cycle has `cycle` (0 for a stuck state), ending with the judgement `detail`.
pub fn lasso_detail(stem: usize, cycle: usize, detail: &str) -> String {
    if cycle == 0 {
        format!("after {stem} steps nothing owed is left to happen: {detail}")
    } else {
        format!(
            "after {stem} steps, the last {cycle} repeat for ever (a fair cycle: every message \
             in flight on it is delivered or, somewhere on it, not pending): {detail}"
        )
    }
}

/// A liveness violation: the execution and what is wrong along it.
pub struct Lasso {
    /// The stem and then the cycle (empty for a stuck state).
    pub path: Vec<Step>,
    /// Steps of `path` before the cycle.
    pub stem: usize,
    /// The judgement in the state where the cycle starts (or the stuck state).
    pub detail: String,
}

/// Judges property `index` (a [`When::Eventually`] one) over every fair execution of
/// `graph`: `None` if it holds, else the violation with the shortest stem.
pub fn check<P: Protocol>(
    model: &ProtocolModel<P>,
    graph: &StateGraph<P>,
    index: usize,
) -> Option<Lasso> {
    debug_assert_eq!(model.properties[index].when, When::Eventually);
    let judge = model.properties[index].judge;
    let n = graph.len();
    let bad: Vec<bool> = (0..n)
        .map(|i| judge(model, &graph.state(i as u32)).is_err())
        .collect();
    let mut best: Option<(u32, Lasso)> = None;
    let mut consider = |entry: u32, cycle: Vec<Step>| {
        if best.as_ref().is_some_and(|(b, _)| *b <= entry) {
            return;
        }
        let mut path = graph.stem(entry);
        let stem = path.len();
        path.extend(cycle);
        let detail = judge(model, &graph.state(entry)).err().unwrap_or_default();
        best = Some((entry, Lasso { path, stem, detail }));
    };
    // Stuck states.
    for i in (0..n as u32).filter(|&i| bad[i as usize]) {
        let mut actions = Vec::new();
        model.actions(&graph.state(i), &mut actions);
        if !actions.iter().any(owed) {
            consider(i, Vec::new());
            break;
        }
    }
    // Fair cycles through bad states.
    for component in components(n, |i| bad[i as usize], |i| graph.moves(model, i)) {
        if let Some((entry, cycle)) = fair_cycle(model, graph, &component) {
            consider(entry, cycle);
        }
    }
    best.map(|(_, lasso)| lasso)
}

/// Whether `lasso`, found in a search with the gap abstraction ([`super::gaps`]), is a
/// violation of property `index` in the real system: replayed concretely, its stem ends
/// in a bad state that owes nothing (a stuck lasso), or its cycle runs through bad
/// states only, comes back to where it started (up to the exact quotients, which keep
/// every future), and takes every owed action that is enabled all along it. The
/// abstraction may shorten or invent a cycle; this keeps only real ones.
pub fn replays<P: Protocol>(model: &ProtocolModel<P>, lasso: &Lasso, index: usize) -> bool {
    let judge = model.properties[index].judge;
    let Some(start) = model.replay_exactly(&lasso.path[..lasso.stem]) else {
        return false;
    };
    if judge(model, &start).is_ok() {
        return false;
    }
    let mut actions = Vec::new();
    let cycle = &lasso.path[lasso.stem..];
    if cycle.is_empty() {
        model.actions(&start, &mut actions);
        return !actions.iter().any(owed);
    }
    let mut on_cycle = vec![start.clone()];
    for step in cycle {
        let last = on_cycle.last().expect("the start");
        let Some(mut next) = model.step(last, step.clone()) else {
            return false;
        };
        model.exact_quotients(&mut next);
        if judge(model, &next).is_err() {
            on_cycle.push(next);
        } else {
            return false;
        }
    }
    let end = on_cycle.pop().expect("the start");
    end == start && fair(model, &on_cycle, cycle)
}

/// Whether the cycle `steps`, through `states` (each step taken from the state at its
/// index), is fair: every owed action enabled in all of them is taken on it.
pub(super) fn fair<P: Protocol>(
    model: &ProtocolModel<P>,
    states: &[CheckState<P>],
    steps: &[Step],
) -> bool {
    let mut always: Option<Vec<Step>> = None;
    let mut actions = Vec::new();
    for state in states {
        actions.clear();
        model.actions(state, &mut actions);
        actions.retain(owed);
        always = Some(match always {
            None => actions.clone(),
            Some(before) => before.into_iter().filter(|a| actions.contains(a)).collect(),
        });
    }
    always.unwrap_or_default().iter().all(|a| steps.contains(a))
}

/// The strongly connected components of the subgraph of states where `keep` holds
/// (Tarjan's algorithm, iterative), each with at least one edge inside it.
fn components(
    n: usize,
    keep: impl Fn(u32) -> bool,
    moves: impl Fn(u32) -> Vec<(Step, u32)>,
) -> Vec<Vec<u32>> {
    const UNSEEN: u32 = u32::MAX;
    let mut order = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut counter = 0u32;
    let mut out = Vec::new();
    for root in (0..n as u32).filter(|&i| keep(i)) {
        if order[root as usize] != UNSEEN {
            continue;
        }
        // Each frame: a state and its remaining successors.
        let mut frames: Vec<(u32, Vec<u32>)> = Vec::new();
        let enter = |v: u32,
                     order: &mut Vec<u32>,
                     low: &mut Vec<u32>,
                     on_stack: &mut Vec<bool>,
                     stack: &mut Vec<u32>,
                     counter: &mut u32| {
            order[v as usize] = *counter;
            low[v as usize] = *counter;
            *counter += 1;
            stack.push(v);
            on_stack[v as usize] = true;
            let next: Vec<u32> = moves(v)
                .into_iter()
                .map(|(_, to)| to)
                .filter(|&to| keep(to))
                .collect();
            (v, next)
        };
        frames.push(enter(
            root,
            &mut order,
            &mut low,
            &mut on_stack,
            &mut stack,
            &mut counter,
        ));
        while let Some((v, next)) = frames.last_mut() {
            let v = *v;
            if let Some(w) = next.pop() {
                if order[w as usize] == UNSEEN {
                    frames.push(enter(
                        w,
                        &mut order,
                        &mut low,
                        &mut on_stack,
                        &mut stack,
                        &mut counter,
                    ));
                } else if on_stack[w as usize] {
                    low[v as usize] = low[v as usize].min(order[w as usize]);
                }
                continue;
            }
            frames.pop();
            if let Some((parent, _)) = frames.last() {
                low[*parent as usize] = low[*parent as usize].min(low[v as usize]);
            }
            if low[v as usize] == order[v as usize] {
                let mut component = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w as usize] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                let has_edge = component.len() > 1 || moves(v).iter().any(|&(_, to)| to == v);
                if has_edge {
                    out.push(component);
                }
            }
        }
    }
    out
}

/// A fair cycle through `component` (module docs), if it has one: its first state (the
/// one closest to the start) and its steps.
fn fair_cycle<P: Protocol>(
    model: &ProtocolModel<P>,
    graph: &StateGraph<P>,
    component: &[u32],
) -> Option<(u32, Vec<Step>)> {
    use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
    let inside: HashSet<u32> = component.iter().copied().collect();
    let edges: HashMap<u32, Vec<(Step, u32)>> = component
        .iter()
        .map(|&v| {
            let moves = graph
                .moves(model, v)
                .into_iter()
                .filter(|(_, to)| inside.contains(to))
                .collect();
            (v, moves)
        })
        .collect();
    // Per owed action: an edge of the component taking it, or a state not enabling it.
    // In the component's order, not the map's (which changes from run to run): the
    // same cycle on every run.
    let mut taken: BTreeMap<String, (u32, Step, u32)> = BTreeMap::new();
    for v in component {
        for (step, to) in &edges[v] {
            taken
                .entry(format!("{step:?}"))
                .or_insert((*v, step.clone(), *to));
        }
    }
    let mut enabled_somewhere: BTreeMap<String, Step> = BTreeMap::new();
    let mut enabled_in: HashMap<u32, HashSet<String>> = HashMap::new();
    for &v in component {
        let mut actions = Vec::new();
        model.actions(&graph.state(v), &mut actions);
        let owed_here: HashSet<String> = actions
            .into_iter()
            .filter(owed)
            .map(|a| {
                let key = format!("{a:?}");
                enabled_somewhere.entry(key.clone()).or_insert(a);
                key
            })
            .collect();
        enabled_in.insert(v, owed_here);
    }
    // Waypoints: an edge to take, or a state to pass through.
    let mut waypoints: Vec<Result<(u32, Step, u32), u32>> = Vec::new();
    for key in enabled_somewhere.keys() {
        if let Some(edge) = taken.get(key) {
            waypoints.push(Ok(edge.clone()));
        } else {
            let disabled = component
                .iter()
                .copied()
                .find(|v| !enabled_in[v].contains(key))?;
            waypoints.push(Err(disabled));
        }
    }
    let entry = *component.iter().min().expect("not empty");
    if let Some(cycle) = short_fair_cycle(entry, &edges, &enabled_in) {
        return Some((entry, cycle));
    }
    // Shortest paths inside the component.
    let path = |from: u32, to: u32| -> Vec<Step> {
        let mut back: HashMap<u32, (u32, Step)> = HashMap::new();
        let mut queue = VecDeque::from([from]);
        let mut seen = HashSet::from([from]);
        while let Some(v) = queue.pop_front() {
            if v == to {
                break;
            }
            for (step, w) in &edges[&v] {
                if seen.insert(*w) {
                    back.insert(*w, (v, step.clone()));
                    queue.push_back(*w);
                }
            }
        }
        let mut steps = Vec::new();
        let mut at = to;
        while at != from {
            let (v, step) = back[&at].clone();
            steps.push(step);
            at = v;
        }
        steps.reverse();
        steps
    };
    let mut cycle = Vec::new();
    let mut at = entry;
    for waypoint in waypoints {
        match waypoint {
            Ok((from, step, to)) => {
                cycle.extend(path(at, from));
                cycle.push(step);
                at = to;
            }
            Err(state) => {
                cycle.extend(path(at, state));
                at = state;
            }
        }
    }
    cycle.extend(path(at, entry));
    if cycle.is_empty() {
        // The component is one state with a self-loop, and no owed action is enabled
        // anywhere but on that loop: take it once.
        let (step, _) = edges[&entry].first()?.clone();
        cycle.push(step);
    }
    Some((entry, cycle))
}

/// The shortest fair cycle through `entry` that closes with one edge back to it, if one
/// of the first few is fair (a reader follows a short cycle more easily than one
/// through every waypoint of the component). `edges` are the component's moves inside
/// it; `enabled_in`, the owed actions each of its states enables (keys as in
/// [`fair_cycle`]). Fair: every owed action enabled in all its states is taken on it.
fn short_fair_cycle(
    entry: u32,
    edges: &std::collections::HashMap<u32, Vec<(Step, u32)>>,
    enabled_in: &std::collections::HashMap<u32, std::collections::HashSet<String>>,
) -> Option<Vec<Step>> {
    use std::collections::{HashMap, VecDeque};
    /// Cycles tried before the waypoint construction takes over.
    const TRIED: usize = 64;
    let mut back: HashMap<u32, (u32, Step)> = HashMap::new();
    let mut order = vec![entry];
    let mut queue = VecDeque::from([entry]);
    while let Some(v) = queue.pop_front() {
        for (step, w) in &edges[&v] {
            if *w != entry && !back.contains_key(w) {
                back.insert(*w, (v, step.clone()));
                order.push(*w);
                queue.push_back(*w);
            }
        }
    }
    let mut tried = 0;
    for &v in &order {
        for (step, w) in &edges[&v] {
            if *w != entry {
                continue;
            }
            tried += 1;
            if tried > TRIED {
                return None;
            }
            let mut states = vec![v];
            let mut cycle = vec![step.clone()];
            let mut at = v;
            while at != entry {
                let (from, step) = back[&at].clone();
                cycle.push(step);
                states.push(from);
                at = from;
            }
            cycle.reverse();
            let taken: std::collections::HashSet<String> =
                cycle.iter().map(|s| format!("{s:?}")).collect();
            let fair = enabled_in[&entry]
                .iter()
                .filter(|key| states.iter().all(|s| enabled_in[s].contains(*key)))
                .all(|key| taken.contains(key));
            if fair {
                return Some(cycle);
            }
        }
    }
    None
}
