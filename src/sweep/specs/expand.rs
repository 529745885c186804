//! Expansion of a spec into its plan: the combinations of the axes, times the
//! replications, times the algorithms, held as compact slots ([`Expansion`]) from which
//! the plan builds each run when it is asked for.

use super::checks::{check_combinations, check_node_ids};
use super::point::point_index;
use super::schema::{MAX_RUNS, Spec, SpecParam};
use super::walk::{load, with_toml_line};
use crate::input::{InputError, Location};
use crate::protocol::ParamValue;
use crate::registry::Algorithm;
use crate::sweep::plan::{Expansion, Plan, RunList, Slot};
use std::path::Path;

/// Reads, parses and validates a spec file, then expands it.
pub fn plan_from_file(path: &Path) -> Result<Plan, InputError> {
    expand(&load(path)?)
}

/// Expands a spec into its plan, after checking every combination of the mobility axes.
///
/// Order: replication (outermost), then the parameter point (the axes in name order, the
/// last one fastest, each in the order written), then the algorithms as written. An
/// interrupted sweep thus holds whole replications of every point, and the algorithms
/// of one point and replication, which share a trace, are adjacent.
///
/// Key: `<experiment>/algo=<a>/<axis>=<value>/…/rep=<r>` with the run's axes in name
/// order (`r` from 0): unique within the experiment and short. Seed: derived from the
/// master seed and the *seed text*, `<experiment>/<param>=<value>/…/rep=<r>` over every
/// parameter of the run, fixed or swept, but not the algorithm (common random numbers).
/// Hence adding a value to an axis, or turning a fixed value into a list holding it,
/// changes no existing run's seed; changing a fixed value changes every seed, so stored
/// results of the old spec are never mistaken for the new one's.
pub fn expand(spec: &Spec) -> Result<Plan, InputError> {
    expand_checked(spec).map_err(|e| with_toml_line(e, &spec.text))
}

fn expand_checked(spec: &Spec) -> Result<Plan, InputError> {
    // The sizes first, in saturating arithmetic: checking every combination of three
    // axes of 400 values took 29 s before the run count refused them.
    let axes: Vec<&SpecParam> = spec.params.iter().filter(|p| p.is_axis).collect();
    let points: u64 = axes
        .iter()
        .map(|a| a.values.len() as u64)
        .fold(1, u64::saturating_mul);
    let total = estimated_runs(spec);
    let too_many = |what: String| {
        InputError::new(
            Location::file(spec.path.display().to_string()).with_field("replications"),
            format!("{what}; use fewer axis values or replications"),
        )
    };
    if total > MAX_RUNS {
        return Err(too_many(format!(
            "the plan would have {total} runs (the limit is {MAX_RUNS})"
        )));
    }
    // Axes of different algorithms multiply into points that no run uses all of; the
    // expansion still visits each.
    if points > MAX_RUNS {
        return Err(too_many(format!(
            "the axes make {points} parameter points (the limit is {MAX_RUNS})"
        )));
    }
    check_combinations(spec)?;
    check_node_ids(spec)?;
    // Runs are kept as (replication, point, algorithm) slots, 16 bytes each, and built
    // when asked for ([`Plan::run`]): a plan of two million runs takes 32 MB, not the
    // gigabytes its keys, seed texts and parameters would.
    let mut slots = Vec::with_capacity(total as usize);
    for rep in 0..spec.replications {
        for point in 0..points {
            let index = point_index(spec, point);
            for (a, &algorithm) in spec.algorithms.iter().enumerate() {
                // A run not using an axis is made once, at that axis's first value.
                let skip = spec
                    .params
                    .iter()
                    .zip(&index)
                    .any(|(p, &i)| !p.scope.applies_to(algorithm) && i != 0);
                if !skip {
                    slots.push(Slot {
                        replication: rep,
                        algorithm: a as u32,
                        point,
                    });
                }
            }
        }
    }
    // Algorithms sharing a parameter name share its axis (one column, one key part).
    let mut merged_axes: Vec<(String, Vec<ParamValue>)> = Vec::new();
    for a in &axes {
        match merged_axes.iter_mut().find(|(n, _)| n == a.name) {
            Some((_, values)) => {
                for v in &a.values {
                    if !values.contains(v) {
                        values.push(v.clone());
                    }
                }
            }
            None => merged_axes.push((a.name.to_string(), a.values.clone())),
        }
    }
    Ok(Plan {
        experiment: spec.name.clone(),
        spec_path: spec.path.clone(),
        axes: merged_axes,
        replications: spec.replications,
        algorithms: spec.algorithms.clone(),
        runs: RunList::Expanded(std::sync::Arc::new(Expansion {
            spec: spec.clone(),
            base_dir: spec.base_dir(),
            slots,
        })),
    })
}

/// The number of runs [`expand`] makes, without making them.
pub fn estimated_runs(spec: &Spec) -> u64 {
    let product = |algorithm: Algorithm| -> u64 {
        spec.params
            .iter()
            .filter(|p| p.is_axis && p.scope.applies_to(algorithm))
            .map(|p| p.values.len() as u64)
            .fold(1u64, u64::saturating_mul)
    };
    spec.algorithms
        .iter()
        .map(|&a| product(a))
        .fold(0u64, u64::saturating_add)
        .saturating_mul(u64::from(spec.replications))
}
