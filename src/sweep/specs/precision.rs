//! The keys of a sequential sweep: `replications = { min, max, batch }` and the
//! `[precision]` target, checked and located like every other key.
//!
//! ```toml
//! replications = { min = 5, max = 200, batch = 5 }
//! [precision]
//! metrics = ["wait_mean", "msgs_per_cs"]   # every named metric must meet it
//! relative_half_width = 0.05                # or half_width = 0.002, in the metric's unit
//! # or a target per metric, relative for means away from zero, absolute for
//! # proportions and means near zero (then `metrics` may be left out):
//! # relative_half_width = { wait_mean = 0.05, msgs_per_cs = 0.05 }
//! # half_width = { leaderless_fraction = 0.02 }
//! # a metric in both meets whichever allows more (a relative target with an
//! # absolute floor, for a mean near zero for some algorithms only)
//! confidence = 0.95                         # default 0.95
//! paired = "me-raymond"                     # optional: target the paired difference
//! rule = "guarded"                          # default; "first-look" is Law & Kelton's
//! ```
//!
//! The rule itself (Law & Kelton's sequential procedure) is in
//! [`crate::stats::sequential`]; how a sweep applies it, in
//! [`crate::sweep::sequential`].

use super::schema::describe;
use crate::input::{InputError, Location, closest};
use crate::registry::Algorithm;
use crate::stats::{MetricTarget, Precision, Replications, StoppingRule, Target};
use toml::{Table, Value};

/// The keys of `[precision]`.
const PRECISION_KEYS: &[&str] = &[
    "metrics",
    "relative_half_width",
    "half_width",
    "confidence",
    "paired",
    "rule",
];

/// What each of [`PRECISION_KEYS`] takes and means: (key, values, default, meaning).
const PRECISION_KEY_DOCS: &[(&str, &str, &str, &str)] = &[
    (
        "metrics",
        "a metric name, or a list of them (columns of the runs table)",
        "required unless the targets name their metrics",
        "The metrics every point must bring to the one target `relative_half_width` or \
         `half_width` gives as a number; each uses its own interval method.",
    ),
    (
        "relative_half_width",
        "number > 0, or a table metric = number > 0",
        "a target is required",
        "Stop a point when each metric's half-width is at most this fraction of its \
         mean's magnitude (0.05: ±5%), Law and Kelton's relative rule. A number applies \
         to every metric of `metrics`; a table (`{ wait_mean = 0.05 }`) gives each \
         metric it names its own target. For means away from zero; a metric that also \
         has a `half_width` meets whichever of the two allows more.",
    ),
    (
        "half_width",
        "number > 0 in the metric's unit, or a table metric = number > 0",
        "a target is required",
        "Stop a point when each metric's half-width is at most this, in the metric's \
         unit. A number applies to every metric of `metrics`; a table \
         (`{ leaderless_fraction = 0.02 }`) gives each metric it names its own target. \
         For proportions and means near zero, whose relative half-width grows without \
         bound; with a `relative_half_width` for the same metric, an absolute floor \
         under the relative target.",
    ),
    (
        "confidence",
        "number between 0 and 1",
        "`0.95`",
        "The intervals' confidence level.",
    ),
    (
        "paired",
        "one of the spec's algorithms (at least two)",
        "none",
        "Judge each other algorithm's paired difference from this one, run by run, \
         instead of each algorithm's own mean.",
    ),
    (
        "rule",
        "`guarded` or `first-look`",
        "`guarded`",
        "When a point that meets the target stops. `guarded`: the target met at two \
         looks in a row, on at least the runs each metric's family asks for, with no \
         single run holding the spread (the statistics page's \"The stopping rule\"). \
         `first-look`: Law and Kelton's rule as published, which stops early on \
         heavy-tailed metrics.",
    ),
];

/// The reference entries of `[precision]`'s keys.
pub(super) fn key_docs() -> Vec<super::schema::KeyDoc> {
    PRECISION_KEYS
        .iter()
        .map(|key| {
            let (_, values, default, doc) = PRECISION_KEY_DOCS
                .iter()
                .find(|(k, ..)| k == key)
                .expect("every [precision] key is documented");
            super::schema::KeyDoc {
                path: format!("precision.{key}"),
                values: values.to_string(),
                default: default.to_string(),
                doc: doc.to_string(),
            }
        })
        .collect()
}

/// The reference entries of `replications = { min, max, batch }`.
pub(super) fn replication_key_docs() -> Vec<super::schema::KeyDoc> {
    [
        (
            "min",
            "integer ≥ 2",
            "Replications every point starts with.",
        ),
        (
            "max",
            "integer ≥ `min`",
            "The most replications a point gets: the plan is made for `max`, so \
             replication r of a point is the same run as in a fixed sweep of `max`.",
        ),
        (
            "batch",
            "integer ≥ 1",
            "Replications added to a point that has not met its target, per wave.",
        ),
    ]
    .into_iter()
    .map(|(key, values, doc)| super::schema::KeyDoc {
        path: format!("replications.{key}"),
        values: values.to_string(),
        default: "required".to_string(),
        doc: doc.to_string(),
    })
    .collect()
}

/// Located errors for `file`.
struct Errors<'a> {
    file: &'a str,
}

impl Errors<'_> {
    fn at(&self, key: &str, message: impl Into<String>) -> InputError {
        InputError::new(Location::file(self.file).with_field(key), message)
    }
}

/// A positive integer (replication counts).
fn count(e: &Errors<'_>, key: &str, value: &Value) -> Result<u32, InputError> {
    match value {
        Value::Integer(i) if (1..=i64::from(u32::MAX)).contains(i) => Ok(*i as u32),
        Value::Integer(i) => Err(e.at(
            key,
            format!("must be a whole number from 1 to {}, got {i}", u32::MAX),
        )),
        other => Err(e.at(
            key,
            format!("wrong type: expected an integer, got {}", describe(other)),
        )),
    }
}

/// `replications`: an integer (fixed) or `{ min, max, batch }`.
pub(super) fn replications(file: &str, value: &Value) -> Result<Replications, InputError> {
    let e = Errors { file };
    let table = match value {
        Value::Table(t) => t,
        other => return count(&e, "replications", other).map(Replications::fixed),
    };
    for key in table.keys() {
        if !["min", "max", "batch"].contains(&key.as_str()) {
            let hint = closest(key, &["min", "max", "batch"])
                .map(|k| format!("; did you mean `{k}`?"))
                .unwrap_or_else(|| " (known: min, max, batch)".into());
            return Err(e.at(&format!("replications.{key}"), format!("unknown key{hint}")));
        }
    }
    let get = |key: &str| -> Result<u32, InputError> {
        let path = format!("replications.{key}");
        let value = table
            .get(key)
            .ok_or_else(|| e.at(&path, "missing required key"))?;
        count(&e, &path, value)
    };
    let (min, max, batch) = (get("min")?, get("max")?, get("batch")?);
    if min < 2 {
        return Err(e.at(
            "replications.min",
            format!("{min} run cannot give an interval: the least is 2"),
        ));
    }
    if min > max {
        return Err(e.at(
            "replications.min",
            format!("min ({min}) is greater than max ({max})"),
        ));
    }
    Ok(Replications { min, max, batch })
}

/// `[precision]`, checked against the spec's algorithms: every metric must be one of
/// some algorithm's family, and `paired` one of the algorithms.
pub(super) fn precision(
    file: &str,
    table: &Table,
    algorithms: &[Algorithm],
) -> Result<Precision, InputError> {
    let e = Errors { file };
    for key in table.keys() {
        if !PRECISION_KEYS.contains(&key.as_str()) {
            let hint = closest(key, PRECISION_KEYS)
                .map(|k| format!("; did you mean `{k}`?"))
                .unwrap_or_else(|| format!(" (known: {})", PRECISION_KEYS.join(", ")));
            return Err(e.at(&format!("precision.{key}"), format!("unknown key{hint}")));
        }
    }
    let known: Vec<&str> = algorithms
        .iter()
        .flat_map(|a| a.family().metrics().iter().map(|m| m.column))
        .fold(Vec::new(), |mut all, m| {
            if !all.contains(&m) {
                all.push(m);
            }
            all
        });
    // A metric name at `path`, checked against the spec's algorithms.
    let metric_name = |path: &str, name: &str| -> Result<String, InputError> {
        if known.contains(&name) {
            return Ok(name.to_string());
        }
        let hint = closest(name, &known)
            .map(|k| format!("did you mean `{k}`? "))
            .unwrap_or_default();
        Err(e.at(
            path,
            format!(
                "`{name}` is not a metric of this spec's algorithms; {hint}(known: {})",
                known.join(", ")
            ),
        ))
    };
    let items: Vec<(String, &Value)> = match table.get("metrics") {
        None => Vec::new(),
        Some(Value::Array(a)) if a.is_empty() => {
            return Err(e.at("precision.metrics", "an empty list targets nothing"));
        }
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("precision.metrics[{i}]"), v))
            .collect(),
        Some(v) => vec![("precision.metrics".to_string(), v)],
    };
    let mut metrics: Vec<(String, String)> = Vec::new();
    for (path, v) in items {
        let Value::String(name) = v else {
            return Err(e.at(
                &path,
                format!("wrong type: expected a metric name, got {}", describe(v)),
            ));
        };
        let name = metric_name(&path, name)?;
        if metrics.iter().any(|(m, _)| *m == name) {
            return Err(e.at(&path, format!("`{name}` is listed twice")));
        }
        metrics.push((name, path));
    }
    let positive = |path: &str, value: &Value| -> Result<f64, InputError> {
        match value {
            Value::Float(x) if x.is_finite() && *x > 0.0 => Ok(*x),
            Value::Integer(i) if *i > 0 => Ok(*i as f64),
            Value::Float(x) => Err(e.at(path, format!("must be above 0, got {x}"))),
            Value::Integer(i) => Err(e.at(path, format!("must be above 0, got {i}"))),
            other => Err(e.at(
                path,
                format!(
                    "wrong type: expected a number, or a table of metric = number, got {}",
                    describe(other)
                ),
            )),
        }
    };
    // Each (metric, target) the keys give: a number gives its target to every metric of
    // `metrics`, a table to each metric it names. A key is a number or a table, never
    // both, so each key gives a metric at most one target.
    let mut given: Vec<(String, Target)> = Vec::new();
    let mut numbers: Vec<&str> = Vec::new();
    for (key, make) in [
        ("relative_half_width", Target::Relative as fn(f64) -> Target),
        ("half_width", Target::Absolute),
    ] {
        let path = format!("precision.{key}");
        match table.get(key) {
            None => {}
            Some(Value::Table(per_metric)) => {
                if per_metric.is_empty() {
                    return Err(e.at(&path, "an empty table targets nothing"));
                }
                for (name, value) in per_metric {
                    let path = format!("{path}.{name}");
                    let metric = metric_name(&path, name)?;
                    let target = make(positive(&path, value)?);
                    given.push((metric, target));
                }
            }
            Some(value) => {
                let target = make(positive(&path, value)?);
                if metrics.is_empty() {
                    return Err(e.at(
                        &path,
                        "a number targets the metrics of `metrics`, which is missing; name \
                         them there, or write this as a table of metric = number",
                    ));
                }
                numbers.push(key);
                given.extend(metrics.iter().map(|(metric, _)| (metric.clone(), target)));
            }
        }
    }
    if given.is_empty() {
        return Err(e.at(
            "precision",
            "missing the target: relative_half_width (0.05 for ±5% of the mean) or \
             half_width (in the metric's unit), a number with `metrics` or a table of \
             metric = number",
        ));
    }
    if numbers.is_empty()
        && let Some((_, path)) = metrics.first()
    {
        return Err(e.at(
            path,
            "the metrics of `metrics` have no target: give relative_half_width (0.05 for \
             ±5% of the mean) or half_width (in the metric's unit) as a number",
        ));
    }
    // A metric with a relative and an absolute target meets whichever allows more.
    let mut targets: Vec<MetricTarget> = Vec::new();
    for (metric, target) in given {
        match targets.iter_mut().find(|t| t.metric == metric) {
            // `relative_half_width` is read first: the second target is the absolute one.
            Some(have) => {
                if let (Target::Relative(relative), Target::Absolute(absolute)) =
                    (have.target, target)
                {
                    have.target = Target::Either { relative, absolute };
                }
            }
            None => targets.push(MetricTarget { metric, target }),
        }
    }
    let confidence = match table.get("confidence") {
        None => 0.95,
        Some(Value::Float(c)) if *c > 0.0 && *c < 1.0 => *c,
        Some(Value::Float(c)) => {
            return Err(e.at(
                "precision.confidence",
                format!("{c} is not a level between 0 and 1 (0.95 for 95%)"),
            ));
        }
        Some(other) => {
            return Err(e.at(
                "precision.confidence",
                format!(
                    "wrong type: expected a number between 0 and 1, got {}",
                    describe(other)
                ),
            ));
        }
    };
    let paired = match table.get("paired") {
        None => None,
        Some(Value::String(name)) => {
            let names: Vec<&str> = algorithms.iter().map(|a| a.name()).collect();
            if !names.contains(&name.as_str()) {
                return Err(e.at(
                    "precision.paired",
                    format!(
                        "`{name}` is not an algorithm of this spec (its algorithms: {})",
                        names.join(", ")
                    ),
                ));
            }
            if algorithms.len() < 2 {
                return Err(e.at(
                    "precision.paired",
                    "a paired target needs a second algorithm to difference against",
                ));
            }
            Some(name.clone())
        }
        Some(other) => {
            return Err(e.at(
                "precision.paired",
                format!(
                    "wrong type: expected an algorithm name, got {}",
                    describe(other)
                ),
            ));
        }
    };
    let rule = match table.get("rule") {
        None => StoppingRule::default(),
        Some(Value::String(name)) => StoppingRule::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = StoppingRule::ALL.iter().map(|r| r.name()).collect();
            e.at(
                "precision.rule",
                format!(
                    "`{name}` is not a stopping rule (one of: {})",
                    names.join(", ")
                ),
            )
        })?,
        Some(other) => {
            return Err(e.at(
                "precision.rule",
                format!("wrong type: expected a rule name, got {}", describe(other)),
            ));
        }
    };
    Ok(Precision {
        targets,
        confidence,
        paired,
        rule,
    })
}
