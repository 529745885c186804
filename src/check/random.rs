//! Random executions, for configurations too large to explore exhaustively.
//!
//! A graph of 6 to 10 nodes has far more states than a breadth-first search can visit,
//! but a violation is often reached by many executions. This strategy runs `N`
//! executions from the initial state, each choosing uniformly among the enabled actions
//! (deliveries, changes, requests, releases) with a seeded generator, up to the depth
//! bound or a terminal state, and judges every state it passes as the exhaustive search
//! does. The *eventually* properties are judged where an execution ends stuck and on
//! the cycles it runs ([`Cycles`]): a real cycle, fair and bad all along, is a
//! violation however the rest of the state space looks. A violation comes with its
//! execution (replayable like any other, though not a shortest one). No violation is
//! reported as "no violation in N executions", never as "holds": random executions
//! prove nothing about the ones they did not take.

use super::model::{CheckState, ProtocolModel, Step, When};
use super::{CheckReport, CheckSetup, Explored, PropertyOutcome, Verdict, describe, when_text};
use crate::protocol::Protocol;
use rand::{RngExt as _, SeedableRng as _};
use stateright::Model as _;
use std::collections::HashMap;
use std::time::Instant;

/// Runs `executions` random executions of `model` (generator seeded with `seed`).
pub fn run<P: Protocol>(
    algorithm: &str,
    model: ProtocolModel<P>,
    setup: &CheckSetup,
    (executions, seed): (u64, u64),
) -> CheckReport {
    let started = Instant::now();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut found: Vec<Option<(String, Vec<Step>)>> = vec![None; model.properties.len()];
    let (mut states, mut deepest, mut cut) = (0usize, 0usize, false);
    let mut enabled = Vec::new();
    let mut run = 0u64;
    let mut cycles = Cycles::new(&model, setup);
    for execution in 1..=executions {
        run = execution;
        let mut state = model.initial();
        let mut path: Vec<Step> = Vec::new();
        cycles.clear();
        loop {
            states += 1;
            for (index, slot) in found.iter_mut().enumerate() {
                if slot.is_none()
                    && let Err(detail) = model.judge(index, &state)
                {
                    *slot = Some((detail, path.clone()));
                }
            }
            cycles.visit(&model, &state, &path, &mut found);
            if path.len() >= setup.max_depth {
                cut = true;
                break;
            }
            enabled.clear();
            model.actions(&state, &mut enabled);
            if enabled.is_empty() {
                break;
            }
            let action = enabled.swap_remove(rng.random_range(0..enabled.len()));
            match model.step(&state, action.clone()) {
                Some(next) => {
                    state = next;
                    path.push(action);
                }
                None => break,
            }
        }
        deepest = deepest.max(path.len());
        if found.iter().all(Option::is_some) {
            break;
        }
        if setup.reports_at(execution) {
            setup.tell(super::SearchProgress::Random {
                executions: execution,
                of: executions,
            });
        }
    }
    let properties = model
        .properties
        .iter()
        .zip(found)
        .map(|(property, found)| PropertyOutcome {
            name: property.name,
            description: property.description,
            // A random execution shows a stuck state, or a cycle when it comes back
            // to a state it passed ([`Cycles`]).
            judged_in: match property.when {
                When::Eventually => "terminal states and cycles of random executions",
                when => when_text(when),
            },
            verdict: match found {
                Some((detail, path)) => Verdict::Violated {
                    detail,
                    steps: path.iter().map(describe).collect(),
                    path,
                },
                None => Verdict::NoViolationFound { executions },
            },
        })
        .collect();
    setup.report(
        algorithm,
        Explored {
            states,
            states_generated: states,
            depth_reached: deepest,
            symmetry: false,
            renormalized: None,
            partial_order: false,
            persistent_sets: false,
            persistent_after: None,
            gaps_abstracted: false,
            cut_off: model.cuts_off(),
            cut_by: cut.then_some("depth bound"),
            strategy: format!("random: {run} of {executions} executions, seed {seed}"),
            seconds: started.elapsed().as_secs_f64(),
        },
        properties,
    )
}

/// Cycles on one random execution, for the [`When::Eventually`] properties: an
/// execution that comes back to a state it passed, up to the exact quotients that
/// rename no node and need no search ([`super::shift`], [`super::stamps`], when
/// `--renormalize` is on and the protocol declares them), has run a cycle the system
/// can repeat for ever. If every state on it fails a property's judgement and every
/// owed action enabled all along it is taken on it (weak fairness, as in
/// [`super::liveness`]), that is a real violation, found without closing anything. (No
/// change or request is on a cycle: each spends a budget.)
struct Cycles<P: Protocol> {
    /// The eventually properties (their indices).
    properties: Vec<usize>,
    /// Whether the shift and stamp quotients are taken.
    renormalize: bool,
    /// The states passed on this execution, quotiented, with where each last was.
    seen: HashMap<CheckState<P>, usize>,
    /// The real states passed on this execution, in order.
    states: Vec<CheckState<P>>,
}

impl<P: Protocol> Cycles<P> {
    fn new(model: &ProtocolModel<P>, setup: &CheckSetup) -> Self {
        Self {
            properties: (model.properties.iter().enumerate())
                .filter(|(_, p)| p.when == When::Eventually)
                .map(|(index, _)| index)
                .collect(),
            renormalize: setup.renormalize,
            seen: HashMap::new(),
            states: Vec::new(),
        }
    }

    /// Forgets the last execution.
    fn clear(&mut self) {
        self.seen.clear();
        self.states.clear();
    }

    /// Takes `state`, reached by `path`, and records a lasso in `found` for every open
    /// eventually property a cycle ending here violates.
    fn visit(
        &mut self,
        model: &ProtocolModel<P>,
        state: &CheckState<P>,
        path: &[Step],
        found: &mut [Option<(String, Vec<Step>)>],
    ) {
        if self.properties.iter().all(|&p| found[p].is_some()) {
            return;
        }
        self.states.push(state.clone());
        let mut key = state.clone();
        if self.renormalize {
            ProtocolModel::rename_levels(&mut key);
        }
        let here = path.len();
        let Some(start) = self.seen.insert(key, here) else {
            return;
        };
        let cycle = &path[start..];
        let on_cycle = &self.states[start..here];
        if !super::liveness::fair(model, on_cycle, cycle) {
            return;
        }
        for &index in &self.properties {
            let judge = model.properties[index].judge;
            if found[index].is_some() || on_cycle.iter().any(|s| judge(model, s).is_ok()) {
                continue;
            }
            let detail = judge(model, &on_cycle[0]).err().unwrap_or_default();
            found[index] = Some((
                super::liveness::lasso_detail(start, cycle.len(), &detail),
                path.to_vec(),
            ));
        }
    }
}
