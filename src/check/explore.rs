//! The checker's own breadth-first search, with partial-order reduction by sleep sets.
//!
//! Most of a checked system's executions differ only in the order of events at
//! different nodes: a delivery at node 1 and a delivery at node 3 lead to the same state
//! in either order. A plain search tries both orders from every state where both are
//! enabled. Sleep sets (Godefroid, *Partial-Order Methods for the Verification of
//! Concurrent Systems*, LNCS 1032, 1996, ch. 5) skip the second: after exploring `a`
//! from a state `s`, each later sibling `b` independent of `a` carries `a` in its *sleep
//! set*, and `a` is not tried from `s·b`, whose `a`-successor `s·b·a = s·a·b` is
//! reached through `s·a`. A state reached again with a smaller sleep set is expanded
//! again with the intersection, so every reachable state is still visited: sleep sets
//! prune transitions, never states. That is why every verdict is kept — each state is
//! judged, so the properties judged in every state (at most k in the CS, the token
//! count) see exactly what the full search sees — and why the state counts of the two
//! searches are equal (a test compares them, with the verdicts and the length of each
//! shortest violation). The saving is in transitions generated, which is what the
//! state budget (`--max-states`) counts and what the time goes to.
//!
//! **Independence**, argued from what a step reads and writes ([`super::model`]):
//!
//! - A delivery at node `n` (from a link's head, or routed) reads and writes `n`'s
//!   protocol state and the head of one incoming queue, appends to `n`'s outgoing
//!   queues (reading whether each link is up), and adds to commutative counters (served,
//!   tokens lost) and to the waiting and in-CS sets at `n` only. A request or a release
//!   at `n` does the same, without a queue head. So two such steps at *different* nodes
//!   commute: their node states are disjoint, a head taken from a queue and a message
//!   appended to the same queue commute (the queue is not empty, or the taking step
//!   would not be enabled), and neither can disable the other.
//! - Routed messages are kept in a canonical order (by origin and destination, FIFO
//!   within a pair, which is all the semantics promise), so appending two of them in
//!   either order gives one state.
//! - Two requests compete for the request budget: independent only while at least two
//!   remain.
//! - A topology change at `u – v` writes `u`'s and `v`'s states, the link set and the
//!   change budget: it is dependent on every other change, on every step at `u` or `v`,
//!   on routed deliveries (which need a path), and, under `serialize`, on every step
//!   (a change waits until nothing is in flight, which any step may end or begin).
//! - The last change is dependent on every delivery: it makes the messages on failed
//!   links dead, and dropping them ([`super::dead_messages`]) may take the head of the
//!   queue another delivery would take.
//! - With parts cut off for good ([`super::cut_off`], mutual exclusion), the last
//!   change records the components that hold no token then. A request or release at
//!   another node moves a token, if at all, to a neighbour over a link the change
//!   leaves up, so it changes no component's holding one, unless it loses, makes or
//!   destroys a token: that is checked by taking it, and such a step is dependent on
//!   the last change (deliveries are already, above). After it the record is fixed, and
//!   freezing what it names commutes with every step (nothing outside a recorded part
//!   reaches it, and a request inside one marks its node waiting in either order).
//! - A protocol whose handlers read the event time ([`Protocol::READS_TIME`], leader
//!   election, which stamps new levels with it) gets nothing independent: the order of
//!   two steps changes the stamps they make.
//!
//! The quotients ([`super::shift`], [`super::stamps`]) commute with every step, so the
//! diamonds above hold between quotient states too; [`super::dead_messages`] acts only
//! at the last change (dependent on every delivery, above), and
//! [`super::dead_changes`] only with `serialize`, where a change is dependent on every
//! step and each answer it gives is fixed at its first asking. Symmetry reduction
//! renames nodes, which would rename the steps in a sleep set; the two are not combined
//! (sleep sets are off under symmetry).
//!
//! **With the gap abstraction** ([`super::gaps`]) a step may lead from one stored state
//! to several, and two independent steps need not commute between abstract states; the
//! argument goes through the real system instead. In the real system (exact quotients,
//! one successor per step, the diamonds above) every reachable state `c` is reached by a
//! path on which no step is asleep: take, among the shortest paths to `c`, the least in
//! the order in which steps are tried (a fixed order of step kinds and nodes); if a step
//! on it were asleep, it was an earlier sibling independent of everything since, and
//! moving it back there gives a path to `c` as short and earlier in that order. Follow
//! such a path in the abstract search: which steps are enabled and which are independent
//! depend on the queues, links, budgets and sets, never on levels (the one test that
//! runs a handler, whether a request or release keeps the tokens, takes the same
//! branches on `α(c)` as on `c`, as every step does, [`super::gaps`]), so the stored state
//! `α(c)` has the same ones as `c`, and, by induction, its sleep set (the intersection of
//! all it was reached with) is contained in the path's. So the next step is tried from
//! it, `α` of the next real state is among that step's abstract successors
//! ([`super::gaps`]), and it gets a sleep set contained in the path's. Hence **every
//! abstracted reachable real state is visited and judged**, which is all a proof of
//! *holds* needs; abstract states that stand for no reachable real state may be skipped,
//! so the state counts can differ from the search without sleep sets, and the liveness
//! pass leaves out moves to states the search did not visit (no real move leads there).
//!
//! **Persistent sets** ([`super::persistent`], when asked for and where they apply)
//! take over in the states where every change and request is spent: from those, only a
//! persistent set of steps is taken, without sleep sets, and each is expanded once. A
//! step that spends the last of the budgets is then never left asleep, so every state
//! where they take over is reached; the graph is no longer closed under every move, and
//! the liveness pass keeps to the states visited.

use super::CheckSetup;
use super::liveness::{RecordedMoves, StateGraph};
use super::model::{ProtocolModel, Step};
use super::state::CheckState;
use super::store::StateStore;
use crate::NodeId;
use crate::protocol::Protocol;
use crate::sim::ChangeMode;
use stateright::Model as _;
use std::collections::VecDeque;

/// What a search found.
pub struct Exploration<P: Protocol> {
    /// Every state visited, with how each was first reached.
    pub graph: StateGraph<P>,
    /// Transitions generated (successor states computed, repeats included).
    pub generated: usize,
    /// The most actions from the start to a visited state.
    pub depth_reached: usize,
    /// What cut the search, if anything.
    pub cut_by: Option<&'static str>,
    /// Per property, the first state found violating it (a shortest execution).
    pub violations: Vec<Option<u32>>,
    /// States expanded again with a smaller sleep set.
    pub reexpanded: usize,
    /// States from which only a persistent set of steps was taken
    /// ([`super::persistent`]); 0 when none was, and the search is then the one
    /// without persistent sets.
    pub reduced_states: usize,
}

/// The nodes whose state `step` writes.
fn nodes_of(step: &Step) -> [Option<NodeId>; 2] {
    match *step {
        Step::Deliver { to, .. } => [Some(to), None],
        Step::DeliverRouted { dest, .. } => [Some(dest), None],
        Step::Request { node } | Step::Release { node } => [Some(node), None],
        Step::Link { a, b, .. } => [Some(a), Some(b)],
    }
}

/// Whether `x` and `y`, both enabled in `state`, commute there (module docs).
fn independent<P: Protocol>(
    model: &ProtocolModel<P>,
    state: &CheckState<P>,
    x: &Step,
    y: &Step,
) -> bool {
    if P::READS_TIME {
        return false;
    }
    let (nx, ny) = (nodes_of(x), nodes_of(y));
    if nx.iter().flatten().any(|n| ny.contains(&Some(*n))) {
        return false;
    }
    let link = |s: &Step| matches!(s, Step::Link { .. });
    let routed = |s: &Step| matches!(s, Step::DeliverRouted { .. });
    let delivery = |s: &Step| matches!(s, Step::Deliver { .. });
    match (x, y) {
        (Step::Request { .. }, Step::Request { .. }) => state.requests_left >= 2,
        _ if link(x) && link(y) => false,
        _ if (link(x) || link(y)) && model.change_mode == ChangeMode::Serialize => false,
        _ if (link(x) || link(y)) && (routed(x) || routed(y)) => false,
        // The last change makes messages on failed links dead, and dropping them
        // ([`super::dead_messages`]) may take the head of any queue.
        _ if (link(x) || link(y)) && (delivery(x) || delivery(y)) && state.changes_left <= 1 => {
            false
        }
        // The last change records the parts cut off for good ([`super::cut_off`]):
        // which they are depends on where the tokens are. A request or release elsewhere
        // (deliveries are dependent above) commutes with it if it loses, makes and
        // destroys no token, which is checked by taking it.
        _ if (link(x) || link(y)) && state.changes_left <= 1 && model.cuts_off() => {
            let other = if link(x) { y } else { x };
            model
                .step(state, other.clone())
                .is_some_and(|after| model.cut_off.keeps_tokens(state, &after))
        }
        _ => true,
    }
}

/// The states a search has visited, with what it keeps per state (by index).
struct Visited<P: Protocol> {
    states: StateStore<P>,
    /// How each state was first reached.
    parent: Vec<Option<(u32, Step)>>,
    /// Actions from the start on that first path.
    depth: Vec<u32>,
    /// Its sleep set: the intersection of all it was reached with.
    sleep: Vec<Vec<Step>>,
    /// Whether it was expanded.
    expanded: Vec<bool>,
    /// States to expand, in breadth-first order.
    queue: VecDeque<u32>,
    /// The owed moves taken, `(from, step, to)`: a cut search's graph for the liveness
    /// pass ([`super::liveness`]).
    moves: Vec<(u32, Step, u32)>,
}

impl<P: Protocol> Visited<P> {
    /// Stores `next`, reached from state `from` by `step`, and queues it with the sleep
    /// set `sleep` makes if it is new: its index and whether it is new, or `None` if it
    /// is new and the memory bound admits no new state.
    fn admit(
        &mut self,
        model: &ProtocolModel<P>,
        next: CheckState<P>,
        (from, step): (u32, &Step),
        sleep: impl FnOnce() -> Vec<Step>,
    ) -> Option<(u32, bool)> {
        let (j, new) = self.states.insert(next);
        if new && !model.memory.admits() {
            self.states.pop();
            return None;
        }
        if super::liveness::owed(step) {
            self.moves.push((from, step.clone(), j));
        }
        if new {
            self.parent.push(Some((from, step.clone())));
            self.depth.push(self.depth[from as usize] + 1);
            self.sleep.push(sleep());
            self.expanded.push(false);
            self.queue.push_back(j);
        }
        Some((j, new))
    }
}

/// Explores `model` breadth-first within `setup`'s bounds, with sleep sets when
/// `partial_order` (and symmetry is off) and persistent sets after the environment when
/// `persistent` ([`super::persistent`], where it applies), judging every state visited.
pub fn explore<P: Protocol>(
    model: &ProtocolModel<P>,
    setup: &CheckSetup,
    partial_order: bool,
    persistent: bool,
) -> Exploration<P> {
    // With the gap abstraction too (module docs: every abstracted real state is still
    // visited, though not every abstract one).
    let sleeping = partial_order && !model.symmetry;
    let persistent = persistent && super::persistent::applies(model);
    let mut reduced_states = 0usize;
    let properties = model.properties.len();
    let mut violations: Vec<Option<u32>> = vec![None; properties];
    let judge = |index: u32, state: &CheckState<P>, violations: &mut Vec<Option<u32>>| {
        for p in model.violated_by(state, |p| violations[p].is_none()) {
            violations[p] = Some(index);
        }
    };
    let start = model.init_states().pop().expect("one initial state");
    judge(0, &start, &mut violations);
    let mut visited = Visited {
        states: StateStore::default(),
        parent: vec![None],
        depth: vec![0],
        sleep: vec![Vec::new()],
        expanded: vec![false],
        queue: VecDeque::from([0]),
        moves: Vec::new(),
    };
    visited.states.insert(start);
    let (mut generated, mut reexpanded) = (0usize, 0usize);
    let (mut cut_depth, mut cut_states, mut cut_memory) = (false, false, false);
    let mut actions = Vec::new();
    let mut all_violated = false;
    let progress = |generated: usize, states: usize, depth: u32| {
        if setup.reports_at(generated as u64) {
            setup.tell(super::SearchProgress::Search {
                persistent,
                states,
                generated,
                max_states: setup.max_states,
                depth: depth as usize,
            });
        }
    };
    'search: while let Some(i) = visited.queue.pop_front() {
        if violations.iter().all(Option::is_some) {
            // Nothing left to learn: every verdict is a violation, each a shortest one.
            all_violated = true;
            break;
        }
        let state = visited.states.get(i);
        actions.clear();
        model.actions(&state, &mut actions);
        if visited.depth[i as usize] as usize >= setup.max_depth {
            cut_depth |= !actions.is_empty();
            continue;
        }
        if visited.expanded[i as usize] {
            reexpanded += 1;
        }
        visited.expanded[i as usize] = true;
        if persistent && super::persistent::after_environment(&state) {
            // Persistent sets, without sleep sets ([`super::persistent`]); such a state
            // is expanded once.
            let chosen = super::persistent::choose(model, &state, &actions, |after| {
                visited
                    .states
                    .index_of(after)
                    .is_some_and(|j| visited.expanded[j as usize])
            });
            reduced_states += usize::from(chosen.is_some());
            let steps: Vec<(Step, Vec<CheckState<P>>)> = match chosen {
                Some(steps) => steps,
                None => actions
                    .drain(..)
                    .map(|a| {
                        let after = model.successors(&state, &a);
                        (a, after)
                    })
                    .collect(),
            };
            for (action, after) in steps {
                if generated >= setup.max_states {
                    cut_states = true;
                    break 'search;
                }
                generated += 1;
                progress(generated, visited.states.len(), visited.depth[i as usize]);
                for next in after {
                    match visited.admit(model, next, (i, &action), Vec::new) {
                        None => {
                            cut_memory = true;
                            break 'search;
                        }
                        Some((j, true)) => judge(j, &visited.states.get(j), &mut violations),
                        Some(_) => {}
                    }
                }
            }
            continue;
        }
        let asleep = visited.sleep[i as usize].clone();
        let mut done_here: Vec<Step> = Vec::new();
        for action in actions.drain(..) {
            if asleep.contains(&action) {
                continue;
            }
            if generated >= setup.max_states {
                cut_states = true;
                break 'search;
            }
            generated += 1;
            progress(generated, visited.states.len(), visited.depth[i as usize]);
            let next_sleep: Vec<Step> = if sleeping {
                asleep
                    .iter()
                    .chain(&done_here)
                    .filter(|b| independent(model, &state, b, &action))
                    .cloned()
                    .collect()
            } else {
                Vec::new()
            };
            done_here.push(action.clone());
            for next in model.successors(&state, &action) {
                // A step that ends the environment's budgets is never asleep, so every
                // state where persistent sets begin is reached ([`super::persistent`]).
                let awake: Vec<Step>;
                let next_sleep: &Vec<Step> = if persistent {
                    awake = next_sleep
                        .iter()
                        .filter(|b| !super::persistent::ends_environment(&next, b))
                        .cloned()
                        .collect();
                    &awake
                } else {
                    &next_sleep
                };
                // Persistent sets take over there, without sleep sets.
                let next_tail = persistent && super::persistent::after_environment(&next);
                let Some((j, new)) =
                    visited.admit(model, next, (i, &action), || next_sleep.clone())
                else {
                    cut_memory = true;
                    break 'search;
                };
                if new {
                    judge(j, &visited.states.get(j), &mut violations);
                } else if sleeping && !next_tail {
                    let old = &visited.sleep[j as usize];
                    if old.iter().any(|b| !next_sleep.contains(b)) {
                        let kept: Vec<Step> = old
                            .iter()
                            .filter(|b| next_sleep.contains(b))
                            .cloned()
                            .collect();
                        visited.sleep[j as usize] = kept;
                        if visited.expanded[j as usize]
                            && (visited.depth[j as usize] as usize) < setup.max_depth
                        {
                            // Steps it slept through must now be taken from it.
                            visited.queue.push_back(j);
                        }
                    }
                }
            }
        }
    }
    let depth_reached = visited.depth.iter().copied().max().unwrap_or(0) as usize;
    let cut_by = match (cut_memory, cut_depth, cut_states) {
        _ if all_violated => Some(super::EVERY_PROPERTY_VIOLATED),
        (true, ..) => Some("memory bound"),
        (false, false, false) => None,
        (false, true, false) => Some("depth bound"),
        (false, false, true) => Some("state bound"),
        (false, true, true) => Some("depth and state bounds"),
    };
    // A closed search's liveness pass recomputes every move (sleep sets skip some, and a
    // proof needs them all); a cut one's can only find a cycle, and uses those taken.
    let recorded = cut_by
        .is_some()
        .then(|| RecordedMoves::new(visited.states.len(), std::mem::take(&mut visited.moves)));
    drop(visited.moves);
    Exploration {
        graph: StateGraph::from_parts(
            visited.states,
            visited.parent,
            cut_by.is_none() && !(sleeping && model.gaps) && reduced_states == 0,
            recorded,
        ),
        generated,
        depth_reached,
        cut_by,
        violations,
        reexpanded,
        reduced_states,
    }
}
