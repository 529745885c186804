//! Cross-checks that need more than one key or value: the random-waypoint constraints
//! over every combination of the mobility axes, node-id parameters against every run's
//! node count, and the traces a spec names, read once before a sweep starts.

use super::point::Point;
use super::schema::{Choice, MobilityKind, Scope, Spec, SpecParam, SpecValue};
use super::walk::with_toml_line;
use crate::input::{InputError, Location};
use crate::protocol::{ParamKind, ParamValue};

/// Checks node-id algorithm parameters (`holder`) against every run's node count, so a
/// sweep never fails half-way on a node that does not exist: every value of `nodes`
/// with random waypoint, every trace (read once, only if some id is above 0) with
/// trace files.
pub(super) fn check_node_ids(spec: &Spec) -> Result<(), InputError> {
    if spec.stored {
        return Ok(());
    }
    let node_params: Vec<&SpecParam> = spec
        .params
        .iter()
        .filter(|p| match p.scope {
            Scope::Algorithm(a) => a
                .params()
                .iter()
                .any(|d| d.name == p.name && d.kind == ParamKind::Node),
            _ => false,
        })
        .collect();
    // Node 0 exists in every run: no trace needs reading for defaults.
    let above_zero = node_params
        .iter()
        .flat_map(|p| p.values.iter())
        .any(|v| matches!(v, ParamValue::Int(id) if *id > 0));
    if !above_zero {
        return Ok(());
    }
    // (node count, what has it) of every run.
    let counts: Vec<(i64, String)> = match (spec.param("nodes"), spec.param("trace")) {
        (Some(nodes), _) => nodes
            .typed
            .iter()
            .filter_map(|v| match v {
                SpecValue::Count(n) => Some((*n, format!("nodes = {n}"))),
                _ => None,
            })
            .collect(),
        (None, Some(traces)) => {
            let mut counts = Vec::new();
            for (i, v) in traces.typed.iter().enumerate() {
                let SpecValue::Trace(path) = v else { continue };
                let trace = crate::mobility::format::read_trace(&spec.base_dir().join(path))
                    .map_err(|e| {
                        InputError::new(
                            Location::file(spec.path.display().to_string())
                                .with_field(traces.element_path(i)),
                            format!("cannot read the trace to check node ids: {e}"),
                        )
                    })?;
                let n = trace.trace.node_count() as i64;
                counts.push((n, format!("trace `{path}` ({n} nodes)")));
            }
            counts
        }
        (None, None) => return Ok(()),
    };
    for p in node_params {
        for (i, value) in p.values.iter().enumerate() {
            let ParamValue::Int(id) = *value else {
                continue;
            };
            if let Some((count, what)) = counts.iter().find(|(n, _)| id >= *n) {
                return Err(InputError::new(
                    Location::file(spec.path.display().to_string()).with_field(p.element_path(i)),
                    format!(
                        "node {id} does not exist with {what}: node ids run from 0 to {}",
                        count - 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Every file a spec's runs read their mobility from: each trace, as written in the
/// spec and resolved from its directory, then the side files its reader opens
/// (BonnMotion's `.params`), then (with `activity = "beside"`) its SUMO activity file.
pub fn trace_files(spec: &Spec) -> Vec<(String, std::path::PathBuf)> {
    let Some(traces) = spec.param("trace") else {
        return Vec::new();
    };
    let beside = spec.param("activity").is_some_and(|a| {
        a.typed
            .iter()
            .any(|v| matches!(v, SpecValue::Choice(_, Choice::Activity(true))))
    });
    let mut files = Vec::new();
    for v in &traces.typed {
        let SpecValue::Trace(path) = v else { continue };
        let full = spec.base_dir().join(path);
        let format = crate::mobility::format::TraceFormat::from_path(&full);
        files.push((path.clone(), full.clone()));
        for (what, side) in format.side_files(&full) {
            files.push((format!("{what} of {path}"), side));
        }
        if beside {
            let activity = crate::mobility::format::activity_path(&full);
            files.push((format!("activity file of {path}"), activity));
        }
    }
    files
}

/// Reads every trace a spec names (with its activity file when `activity = "beside"`),
/// so that a bad trace fails `sweep --dry-run` and the start of a sweep, located at its
/// entry in the spec, rather than a run hours in. Not part of [`expand`](super::expand()):
/// merging or reporting stored results must not need the traces again.
pub fn check_traces(spec: &Spec) -> Result<(), InputError> {
    let Some(traces) = spec.param("trace") else {
        return Ok(());
    };
    let beside = spec.param("activity").is_some_and(|a| {
        a.typed
            .iter()
            .any(|v| matches!(v, SpecValue::Choice(_, Choice::Activity(true))))
    });
    for (i, v) in traces.typed.iter().enumerate() {
        let SpecValue::Trace(path) = v else { continue };
        let full = spec.base_dir().join(path);
        let options = crate::mobility::format::ReadOptions {
            duration: None,
            activity: beside.then(|| crate::mobility::format::activity_path(&full)),
        };
        crate::mobility::format::read_trace_with(&full, &options).map_err(|e| {
            with_toml_line(
                InputError::new(
                    Location::file(spec.path.display().to_string())
                        .with_field(traces.element_path(i)),
                    format!("cannot read the trace: {e}"),
                ),
                &spec.text,
            )
        })?;
    }
    Ok(())
}

/// Checks the cross-key constraints of random-waypoint mobility for every combination
/// of the mobility axes, naming the offending value and the combination.
pub(super) fn check_combinations(spec: &Spec) -> Result<(), InputError> {
    if spec.mobility != MobilityKind::RandomWaypoint {
        return Ok(());
    }
    let mobility: Vec<&SpecParam> = spec
        .params
        .iter()
        .filter(|p| p.path.starts_with("mobility."))
        .collect();
    let combinations: u64 = mobility.iter().map(|p| p.values.len() as u64).product();
    let file = spec.path.display().to_string();
    for c in 0..combinations {
        let mut index = vec![0usize; mobility.len()];
        let mut rest = c;
        for (i, p) in mobility.iter().enumerate().rev() {
            let n = p.values.len() as u64;
            index[i] = (rest % n) as usize;
            rest /= n;
        }
        let values = Point(
            mobility
                .iter()
                .zip(&index)
                .map(|(p, &i)| (p.name, &p.typed[i]))
                .collect(),
        );
        let at = |name: &str| {
            let (k, p) = mobility
                .iter()
                .enumerate()
                .find(|(_, p)| p.name == name)
                .expect("every mobility key has a value");
            p.element_path(index[k])
        };
        let combination: Vec<String> = mobility
            .iter()
            .zip(&index)
            .filter(|(p, _)| p.is_axis)
            .map(|(p, &i)| format!("{} = {}", p.name, p.values[i]))
            .collect();
        let within = if combination.is_empty() {
            String::new()
        } else {
            format!(" (in the combination {})", combination.join(", "))
        };
        let err = |field: String, msg: String| {
            InputError::new(
                Location::file(&file).with_field(field),
                format!("{msg}{within}"),
            )
        };
        let (min, max) = (values.number("speed_min"), values.number("speed_max"));
        if min > max {
            let field = if spec.param("speed_min").is_some_and(|p| p.is_axis)
                && !spec.param("speed_max").is_some_and(|p| p.is_axis)
            {
                at("speed_min")
            } else {
                at("speed_max")
            };
            return Err(err(
                field,
                format!("speed_min {min} is above speed_max {max}: need speed_min <= speed_max"),
            ));
        }
        let rwp = values.rwp(0);
        let rates = spec.param("rate").map(|p| &p.typed[..]).unwrap_or(&[]);
        for rate in rates {
            let SpecValue::Number(rate) = rate else {
                continue;
            };
            let problem = crate::sim::workload::requests_problem(rwp.nodes, *rate, rwp.duration);
            if let Some(problem) = problem {
                return Err(err("mobility".to_string(), problem));
            }
        }
        if let Err(e) = rwp.validate() {
            // The generator names its command-line flags; map them to spec keys.
            let key = match e.location.file.trim_start_matches("--") {
                "speed" => "speed_min",
                other => other,
            }
            .to_string();
            let field = if mobility.iter().any(|p| p.name == key) {
                at(&key)
            } else {
                "mobility".to_string()
            };
            return Err(err(field, e.message.replace("--", "")));
        }
    }
    Ok(())
}
