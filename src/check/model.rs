//! The checked system as a stateright [`Model`]: every node's protocol state (the very
//! code the simulator runs), a FIFO queue per directed link, the current graph, and what
//! remains of the topology-change and request budgets.
//!
//! Each action is one event of the simulator: deliver the head message of a directed
//! link, flip a link (both endpoints told, as the simulator tells them), issue a CS
//! request at a node, or release a node's CS. Every interleaving of these is explored,
//! which is what the simulator's random delays only sample. The network semantics are
//! the simulator's defaults:
//!
//! - **drain**: messages in flight on a link that breaks are still delivered; a message
//!   sent over a link that is down is lost (a lost token is counted, as the simulator's
//!   `tokens_lost`);
//! - detection delay 0: both endpoints learn of a change at once;
//! - **routed** messages (Raymond) travel by the oracle, collapsed to one step: a routed
//!   message is delivered in one action while a path to its destination exists, and
//!   waits while there is none. Messages with the same origin and destination arrive in
//!   the order sent; any others may overtake one another. Per-hop interleavings are not
//!   explored (the replay carries a routed message along a shortest path within its
//!   step, [`super::scenario`]).
//!
//! Timers are not modelled (no registered algorithm sets one).

use crate::NodeId;
use crate::protocol::{AppEvent, Ctx, Effect, Message, Protocol};
use crate::sim::ChangeMode;

use super::sets::{InFlight, NodeSet};
use stateright::{Model, Property};
use std::cell::OnceCell;

pub use super::state::{CheckState, Step};

/// A family's judgement of a state, shared by the checker's properties: `Err` names
/// what is wrong. Built from the family's monitor definitions ([`crate::observe`]).
pub type Judge<P> = fn(&ProtocolModel<P>, &CheckState<P>) -> Result<(), String>;

/// One property: its name, when it is judged, and the judgement.
#[derive(Clone, Copy, Debug)]
pub struct CheckProperty<P: Protocol> {
    /// Its name in reports (`at_most_k_in_cs`).
    pub name: &'static str,
    /// In words, for the report.
    pub description: &'static str,
    /// Whether it is judged in every state, or only in states where nothing is in
    /// flight and no change remains (quiescent), or only in terminal states (nothing
    /// left to do: the bounded form of "eventually").
    pub when: When,
    /// The judgement.
    pub judge: Judge<P>,
}

/// In which states a property is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Every reachable state (safety).
    Always,
    /// States with no message in flight and no topology change left.
    Quiescent,
    /// States where no action is enabled: every budget spent, nothing in flight, nobody
    /// in the CS (outside parts cut off for good, which are frozen: [`super::cut_off`]);
    /// "every request is eventually served", bounded by the budgets.
    Terminal,
    /// Every fair execution, infinite ones included: from some point on, no change
    /// happens and the judgement fails in every state ([`super::liveness`]). Judged in
    /// terminal states during the search, and over cycles once it has closed.
    Eventually,
}

/// The system to check: one algorithm on one starting graph with budgets.
pub struct ProtocolModel<P: Protocol> {
    /// The algorithm's configuration (its parameters).
    pub config: P::Config,
    /// Nodes of the graph.
    pub nodes: usize,
    /// The starting graph's links, `a < b`.
    pub initial_links: Vec<(NodeId, NodeId)>,
    /// Links a change may flip: every pair.
    pub pairs: Vec<(NodeId, NodeId)>,
    /// Topology changes allowed (a pair may flip more than once).
    pub changes: u8,
    /// Whether a change may happen while messages are in flight (`Overlap`), or only
    /// when none is (`Serialize`: the leader-election paper's one change at a time, the
    /// simulator's `--changes serialize`).
    pub change_mode: ChangeMode,
    /// Whether a link may go down only when the graph stays connected.
    pub connected: bool,
    /// CS requests to issue (mutual exclusion; 0 otherwise).
    pub requests: u8,
    /// Tokens of the algorithm (mutual exclusion's k).
    pub tokens: u32,
    /// The route family's destination.
    pub destination: Option<NodeId>,
    /// The family's properties.
    pub properties: Vec<CheckProperty<P>>,
    /// Per property, whether a violation has been found (see `holds`).
    pub found: [std::sync::atomic::AtomicBool; MAX_PROPERTIES],
    /// Whether states are replaced by the representative of their node renamings
    /// ([`super::symmetry`]); only set for protocols that declare the symmetry.
    pub symmetry: bool,
    /// Whether states are replaced by their renormalized form ([`super::shift`],
    /// [`super::stamps`]); only set for protocols whose rules commute with one of them.
    pub renormalize: bool,
    /// Whether wide gaps between levels are abstracted ([`super::gaps`]): states then
    /// stand for many, an action may lead to several, and a violation counts only once
    /// it replays on the real system ([`Self::replay_exactly`]).
    pub gaps: bool,
    /// The resident-memory bound of the search (`--max-memory`).
    pub memory: MemoryBound,
    /// Which components were found never quiet again ([`super::dead_changes`]).
    pub dead_changes: super::dead_changes::Answers<P>,
    /// The family's parts cut off for good once changes stop ([`super::cut_off`]).
    pub cut_off: super::cut_off::CutOff<P>,
}

/// A bound on the process's resident memory during a search. Once it is passed, no new
/// state is admitted (stateright's `within_boundary`), so the search drains what it
/// holds and ends, cut, with its verdicts unknown: a search that would not fit ends with
/// a report, not with the kernel's out-of-memory kill.
///
/// Resident memory is read from the kernel every [`MemoryBound::EVERY`] states (a read
/// costs microseconds; a state, about one), so the bound may be passed by the memory
/// those states take: a few megabytes.
#[derive(Debug, Default)]
pub struct MemoryBound {
    /// Bytes; `None`: no bound.
    limit: Option<u64>,
    /// States judged against the bound so far.
    seen: std::sync::atomic::AtomicU64,
    /// Whether the bound was passed.
    passed: std::sync::atomic::AtomicBool,
}

impl MemoryBound {
    /// States between two readings of resident memory.
    pub const EVERY: u64 = 4096;

    /// A bound of `limit` bytes of resident memory (`None`: unbounded).
    pub fn new(limit: Option<u64>) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// Whether another state may be admitted.
    pub fn admits(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let Some(limit) = self.limit else {
            return true;
        };
        if self.passed.load(Relaxed) {
            return false;
        }
        if self.seen.fetch_add(1, Relaxed).is_multiple_of(Self::EVERY)
            && crate::memory::resident().is_some_and(|(now, _)| now > limit)
        {
            self.passed.store(true, Relaxed);
            return false;
        }
        true
    }

    /// Whether the bound was passed, cutting the search.
    pub fn passed(&self) -> bool {
        self.passed.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl<P: Protocol> ProtocolModel<P> {
    /// Runs one handler at `node` and carries out its effects.
    fn invoke(
        &self,
        state: &mut CheckState<P>,
        node: NodeId,
        handler: impl FnOnce(&mut P, &mut Ctx<P::Msg>),
    ) {
        // One microsecond per action: a time stamp, not a duration.
        let mut ctx = Ctx::new(node, state.clock * 1_000);
        handler(&mut state.nodes[node as usize], &mut ctx);
        for effect in ctx.drain() {
            match effect {
                Effect::Send { to, msg } => {
                    let key = (node.min(to), node.max(to));
                    if state.links.contains(key) {
                        state.queues.push(node, to, msg);
                    } else if msg.carries_token() {
                        state.tokens_lost += 1;
                    }
                }
                Effect::SendRouted { to, msg } => {
                    // The persistent sets of [`super::explore`] rely on the declaration.
                    assert!(
                        P::SENDS_ROUTED,
                        "a protocol declaring SENDS_ROUTED = false routed"
                    );
                    state.push_routed(node, to, msg);
                }
                Effect::EnterCs => {
                    state.waiting.remove(node);
                    state.in_cs.insert(node);
                    state.served += 1;
                }
                // Not modelled (module docs); no registered algorithm sets a timer.
                Effect::SetTimer { .. } => {}
            }
        }
    }

    /// Whether a routed message from `origin` can reach `dest` now.
    fn routable(state: &CheckState<P>, origin: NodeId, dest: NodeId) -> bool {
        origin == dest || state.graph().connected(origin, dest)
    }

    /// Whether parts cut off for good are frozen ([`super::cut_off`]): the family names
    /// them and the exact quotients are on.
    pub fn cuts_off(&self) -> bool {
        self.renormalize && self.cut_off.applies()
    }

    /// Whether `state` is quiescent: nothing in flight and no change left.
    pub fn quiescent(&self, state: &CheckState<P>) -> bool {
        state.quiet() && state.changes_left == 0
    }

    /// Whether every node reaches every other over `state`'s links without `cut`.
    fn connected_without(&self, state: &CheckState<P>, cut: (NodeId, NodeId)) -> bool {
        let mut seen = vec![false; self.nodes];
        let mut stack = vec![0 as NodeId];
        seen[0] = true;
        while let Some(n) = stack.pop() {
            for (a, b) in state.links.iter().filter(|&l| l != cut) {
                let other = match (a == n, b == n) {
                    (true, _) => b,
                    (_, true) => a,
                    _ => continue,
                };
                if !seen[other as usize] {
                    seen[other as usize] = true;
                    stack.push(other);
                }
            }
        }
        seen.iter().all(|&s| s)
    }

    /// Whether no action is enabled in `state`.
    pub fn terminal(&self, state: &CheckState<P>) -> bool {
        let mut steps = Vec::new();
        self.actions(state, &mut steps);
        steps.is_empty()
    }

    /// Whether a property judged in `when` applies to `state`; whether `state` is
    /// terminal is worked out at most once per `terminal` cell.
    fn applies(&self, when: When, state: &CheckState<P>, terminal: &OnceCell<bool>) -> bool {
        match when {
            When::Always => true,
            When::Quiescent => self.quiescent(state),
            When::Terminal | When::Eventually => *terminal.get_or_init(|| self.terminal(state)),
        }
    }

    /// The properties (by index) that `state` violates, among those `open` accepts.
    pub fn violated_by(&self, state: &CheckState<P>, open: impl Fn(usize) -> bool) -> Vec<usize> {
        let terminal = OnceCell::new();
        (0..self.properties.len())
            .filter(|&index| open(index))
            .filter(|&index| {
                let property = &self.properties[index];
                self.applies(property.when, state, &terminal)
                    && (property.judge)(self, state).is_err()
            })
            .collect()
    }

    /// The judgement of property `index` on `state`, where it applies.
    pub fn judge(&self, index: usize, state: &CheckState<P>) -> Result<(), String> {
        let property = &self.properties[index];
        if self.applies(property.when, state, &OnceCell::new()) {
            (property.judge)(self, state)
        } else {
            Ok(())
        }
    }
}

/// The condition stateright evaluates for property `I`: a `fn` pointer per index, since
/// a property's condition cannot capture anything.
///
/// stateright records a discovery each time a condition fails, the later replacing the
/// earlier, and keeps searching while other properties await theirs; so once property
/// `I` has failed, it reports success from then on, and the discovery kept is the
/// first found: with one thread, breadth-first, a shortest one.
fn holds<P: Protocol, const I: usize>(model: &ProtocolModel<P>, state: &CheckState<P>) -> bool {
    use std::sync::atomic::Ordering;
    if model.found[I].load(Ordering::Relaxed) {
        return true;
    }
    let ok = model.judge(I, state).is_ok();
    if !ok {
        model.found[I].store(true, Ordering::Relaxed);
    }
    ok
}

/// The most properties a family may declare (one condition function per index).
pub const MAX_PROPERTIES: usize = 6;

impl<P: Protocol> ProtocolModel<P> {
    /// The initial state, without symmetry reduction.
    pub fn initial(&self) -> CheckState<P> {
        let mut neighbours = vec![Vec::new(); self.nodes];
        for &(a, b) in &self.initial_links {
            neighbours[a as usize].push(b);
            neighbours[b as usize].push(a);
        }
        for list in &mut neighbours {
            list.sort_unstable();
        }
        let mut state = CheckState {
            nodes: P::initial_states(&self.config, &neighbours),
            queues: InFlight::default(),
            routed: Vec::new(),
            links: self.initial_links.iter().copied().collect(),
            changes_left: self.changes,
            requests_left: self.requests,
            waiting: NodeSet::default(),
            in_cs: NodeSet::default(),
            served: 0,
            tokens_lost: 0,
            cut_off: None,
            clock: 1,
        };
        if P::STARTS {
            for node in 0..self.nodes as NodeId {
                self.invoke(&mut state, node, |p, ctx| p.on_start(ctx));
            }
        }
        state
    }

    /// The state after `action`, without symmetry reduction; `None` if it is not
    /// enabled.
    pub fn step(&self, last: &CheckState<P>, action: Step) -> Option<CheckState<P>> {
        let mut state = last.clone();
        state.clock += 1;
        match action {
            Step::Deliver { from, to } => {
                let msg = state.queues.pop(from, to)?;
                self.invoke(&mut state, to, |p, ctx| p.on_message(from, msg, ctx));
            }
            Step::DeliverRouted { origin, dest } => {
                let index = state
                    .routed
                    .iter()
                    .position(|&(o, d, _)| (o, d) == (origin, dest))?;
                if !Self::routable(&state, origin, dest) {
                    return None;
                }
                let (origin, dest, msg) = state.routed.remove(index);
                self.invoke(&mut state, dest, |p, ctx| p.on_message(origin, msg, ctx));
            }
            Step::Link { a, b, up } => {
                if state.changes_left == 0 || state.links.contains((a, b)) == up {
                    return None;
                }
                state.changes_left -= 1;
                if up {
                    state.links.insert((a, b));
                } else {
                    state.links.remove((a, b));
                }
                for (node, peer) in [(a, b), (b, a)] {
                    self.invoke(&mut state, node, |p, ctx| {
                        if up {
                            p.on_link_up(peer, ctx)
                        } else {
                            p.on_link_down(peer, ctx)
                        }
                    });
                }
            }
            Step::Request { node } => {
                if state.requests_left == 0 {
                    return None;
                }
                state.requests_left -= 1;
                state.waiting.insert(node);
                self.invoke(&mut state, node, |p, ctx| {
                    p.on_app(AppEvent::RequestCs, ctx)
                });
            }
            Step::Release { node } => {
                if !state.in_cs.remove(node) {
                    return None;
                }
                self.invoke(&mut state, node, |p, ctx| {
                    p.on_app(AppEvent::ReleaseCs, ctx)
                });
            }
        }
        Some(state)
    }

    /// Applies the quotients that rename no node ([`super::dead_changes`],
    /// [`super::dead_messages`], [`super::shift`], [`super::stamps`], [`super::cut_off`])
    /// and the gap abstraction ([`super::gaps`]), where they are on.
    pub fn quotient_without_renaming(&self, state: &mut CheckState<P>) {
        self.exact_quotients(state);
        if self.gaps {
            super::gaps::abstract_gaps(state);
        }
    }

    /// Applies the exact quotients that rename no node: [`Self::quotient_without_renaming`]
    /// without the gap abstraction.
    pub fn exact_quotients(&self, state: &mut CheckState<P>) {
        self.exact_quotients_of_every_part(state);
        if self.renormalize {
            self.cut_off.freeze(state);
        }
    }

    /// [`Self::exact_quotients`] but for freezing the parts cut off for good
    /// ([`super::cut_off`]): what [`super::dead_changes`] asks its questions with, since
    /// they are about whether such a part can ever be quiet.
    fn exact_quotients_of_every_part(&self, state: &mut CheckState<P>) {
        if self.renormalize {
            if super::dead_changes::applies::<P>(self.change_mode) && state.changes_left > 0 {
                super::dead_changes::forget_dead_changes(self, state);
                if state.changes_left == 0 && self.cut_off.applies() {
                    // Parts are recorded only at the last change (a change with
                    // `serialize` is dependent on every step, the record's moment
                    // with it); a budget dropped here records none.
                    state.cut_off = Some(super::sets::NodeSet::default());
                }
            }
            super::dead_messages::drop_dead_messages(state);
            Self::rename_levels(state);
        }
    }

    /// The exact quotients that only rename levels and need nothing but the state: the
    /// shift of heights ([`super::shift`]) and the ranking of time stamps
    /// ([`super::stamps`]), where the protocol declares them.
    pub fn rename_levels(state: &mut CheckState<P>) {
        if super::shift::applies::<P>() {
            super::shift::renormalize(state);
        }
        if super::stamps::applies::<P>() {
            super::stamps::rank(state);
        }
    }

    /// The states `action` leads to from a stored `state`, reduced ([`Self::reduced`]):
    /// one, or none if `action` is not enabled; with the gap abstraction, the
    /// successors of each state `state` stands for ([`super::gaps::representatives`]).
    pub fn successors(&self, state: &CheckState<P>, action: &Step) -> Vec<CheckState<P>> {
        self.successors_by(state, action, |after| self.reduced(after))
    }

    /// [`Self::successors`] without symmetry reduction (the liveness pass names links
    /// by node ids).
    pub fn successors_without_renaming(
        &self,
        state: &CheckState<P>,
        action: &Step,
    ) -> Vec<CheckState<P>> {
        self.successors_by(state, action, |mut after| {
            self.quotient_without_renaming(&mut after);
            after
        })
    }

    fn successors_by(
        &self,
        state: &CheckState<P>,
        action: &Step,
        reduce: impl Fn(CheckState<P>) -> CheckState<P>,
    ) -> Vec<CheckState<P>> {
        if !self.gaps {
            return self
                .step(state, action.clone())
                .map(reduce)
                .into_iter()
                .collect();
        }
        let mut next: Vec<CheckState<P>> = Vec::new();
        // A link change runs both ends' handlers; every other step, one node's.
        let handlers = if matches!(action, Step::Link { .. }) {
            2
        } else {
            1
        };
        for rep in super::gaps::representatives(state, handlers) {
            if let Some(after) = self.step(&rep, action.clone()) {
                let after = reduce(after);
                if !next.contains(&after) {
                    next.push(after);
                }
            }
        }
        next
    }

    /// The state `path` leads to from the start in the real system: every step taken
    /// concretely, with only the exact quotients; `None` if a step is not enabled there.
    /// A violation the gap abstraction found counts only if this replays it.
    pub fn replay_exactly(&self, path: &[Step]) -> Option<CheckState<P>> {
        let mut state = self.initial();
        self.exact_quotients(&mut state);
        for step in path {
            state = self.step(&state, step.clone())?;
            self.exact_quotients(&mut state);
        }
        Some(state)
    }

    /// `state`, renormalized ([`super::shift`]), its stamps ranked ([`super::stamps`]),
    /// its wide level gaps abstracted ([`super::gaps`]), and replaced by its
    /// representative under symmetry reduction, as far as each applies.
    pub fn reduced(&self, mut state: CheckState<P>) -> CheckState<P> {
        self.quotient_without_renaming(&mut state);
        if self.symmetry {
            super::symmetry::representative(&state).0
        } else {
            state
        }
    }
}

impl<P: Protocol> super::dead_changes::Steps<P> for ProtocolModel<P> {
    fn enabled(&self, state: &CheckState<P>, steps: &mut Vec<Step>) {
        self.actions(state, steps);
    }

    fn after(&self, state: &CheckState<P>, step: Step) -> Option<CheckState<P>> {
        self.step(state, step)
    }

    fn reduce(&self, state: &mut CheckState<P>) {
        self.exact_quotients_of_every_part(state);
    }

    fn answers(&self) -> &super::dead_changes::Answers<P> {
        &self.dead_changes
    }
}

impl<P: Protocol> Model for ProtocolModel<P> {
    type State = CheckState<P>;
    type Action = Step;

    fn init_states(&self) -> Vec<CheckState<P>> {
        vec![self.reduced(self.initial())]
    }

    fn actions(&self, state: &CheckState<P>, actions: &mut Vec<Step>) {
        for ((from, to), _) in state.queues.links() {
            actions.push(Step::Deliver { from, to });
        }
        for (index, &(origin, dest, _)) in state.routed.iter().enumerate() {
            let oldest = !state.routed[..index]
                .iter()
                .any(|&(o, d, _)| (o, d) == (origin, dest));
            if oldest && Self::routable(state, origin, dest) {
                actions.push(Step::DeliverRouted { origin, dest });
            }
        }
        let may_change = match self.change_mode {
            ChangeMode::Overlap => true,
            ChangeMode::Serialize => state.quiet(),
        };
        if state.changes_left > 0 && may_change {
            for &(a, b) in &self.pairs {
                let up = !state.links.contains((a, b));
                if !up && self.connected && !self.connected_without(state, (a, b)) {
                    continue;
                }
                actions.push(Step::Link { a, b, up });
            }
        }
        if state.requests_left > 0 {
            for node in 0..self.nodes as NodeId {
                if !state.waiting.contains(node) && !state.in_cs.contains(node) {
                    actions.push(Step::Request { node });
                }
            }
        }
        for node in state.in_cs.iter() {
            actions.push(Step::Release { node });
        }
    }

    fn within_boundary(&self, _: &CheckState<P>) -> bool {
        self.memory.admits()
    }

    fn next_state(&self, last: &CheckState<P>, action: Step) -> Option<CheckState<P>> {
        self.step(last, action).map(|state| self.reduced(state))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        const CONDITIONS: usize = MAX_PROPERTIES;
        let conditions: [fn(&Self, &CheckState<P>) -> bool; CONDITIONS] = [
            holds::<P, 0>,
            holds::<P, 1>,
            holds::<P, 2>,
            holds::<P, 3>,
            holds::<P, 4>,
            holds::<P, 5>,
        ];
        self.properties
            .iter()
            .zip(conditions)
            .map(|(p, condition)| Property::<Self>::always(p.name, condition))
            .collect()
    }
}
