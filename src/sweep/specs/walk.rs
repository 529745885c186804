//! Reading a spec: the TOML is walked key by key into a [`Spec`], so that every error
//! names the file, the line, the key path (with the list index, `mobility.speed_max[1]`)
//! and the problem, with a "did you mean" for a misspelt key or word.

use super::precision;
use super::schema::{
    Field, Kind, MobilityKind, NETWORK_FIELDS, RWP_FIELDS, Scope, Spec, SpecParam, SpecValue,
    TOP_KEYS, TRACE_FIELDS, WORKLOAD_FIELDS, default_value,
};
use super::schema::{Sequential, describe};
pub(crate) use crate::input::closest;
use crate::input::{InputError, Location};
use crate::params;
use crate::protocol::ParamValue;
use crate::registry::Algorithm;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Reads and validates a spec file. Cross-key checks that need every combination of
/// axes are done by [`expand`](super::expand()).
pub fn load(path: &Path) -> Result<Spec, InputError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| InputError::file(path, format!("cannot read the spec: {e}")))?;
    // A byte-order mark (Windows editors write one) is not TOML.
    parse(text.strip_prefix('\u{feff}').unwrap_or(&text), path)
}

/// Validates spec text; `path` names the file in errors and anchors relative trace paths.
pub fn parse(text: &str, path: &Path) -> Result<Spec, InputError> {
    parse_with(text, path, false)
}

/// Validates the spec copy of a results directory (`merge`, `report`): as [`parse`],
/// but trace files need not exist any more. Their paths are kept, and the checks that
/// read them passed when the sweep ran; a stored run needs no trace to be merged or
/// drawn.
pub fn parse_stored(text: &str, path: &Path) -> Result<Spec, InputError> {
    parse_with(text, path, true)
}

fn parse_with(text: &str, path: &Path, stored: bool) -> Result<Spec, InputError> {
    let file = path.display().to_string();
    let table: Table = toml::from_str(text).map_err(|e| {
        let location = match e.span() {
            Some(span) => Location::line(&file, 1 + text[..span.start].matches('\n').count()),
            None => Location::file(&file),
        };
        let mut message = format!("not valid TOML: {}", e.message().trim());
        if message.contains("too large") {
            message.push_str(&format!(
                " (TOML integers go up to {}, the largest master_seed)",
                i64::MAX
            ));
        }
        InputError::new(location, message)
    })?;
    Parser { file, path, stored }
        .spec(&table, text)
        .map_err(|e| with_toml_line(e, text))
}

/// Gives an error that names a key path (`mobility.speed_max`, `algorithms[2]`) but no
/// line the line of that value in the TOML `text`, so every spec error reads
/// `file:line: key.path: problem`. A key that is missing has no line; the error stays
/// `file: key.path: problem`.
pub(super) fn with_toml_line(mut error: InputError, text: &str) -> InputError {
    if error.location.line.is_none() {
        error.location.line = error
            .location
            .field
            .as_deref()
            .and_then(|f| toml_line(text, f));
    }
    error
}

/// The line (from 1) where the value at `key_path` starts in the TOML `text`. Segments
/// are `.`-separated table keys, each optionally indexed into an array (`nodes[2]`).
fn toml_line(text: &str, key_path: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let root = DeTable::parse(text).ok()?;
    let mut table = root.get_ref();
    let segments: Vec<&str> = key_path.split('.').collect();
    let mut start = None;
    for (n, segment) in segments.iter().enumerate() {
        let (name, index) = match segment.split_once('[') {
            Some((name, rest)) => (
                name,
                Some(rest.trim_end_matches(']').parse::<usize>().ok()?),
            ),
            None => (*segment, None),
        };
        let (_, mut value) = table.iter().find(|(k, _)| k.get_ref().as_ref() == name)?;
        if let Some(i) = index {
            match value.get_ref() {
                DeValue::Array(items) => value = items.get(i)?,
                _ => return None,
            }
        }
        start = Some(value.span().start);
        if n + 1 < segments.len() {
            match value.get_ref() {
                DeValue::Table(inner) => table = inner,
                _ => return None,
            }
        }
    }
    Some(1 + text[..start?].matches('\n').count())
}

struct Parser<'a> {
    file: String,
    path: &'a Path,
    /// A results directory's spec copy: trace files need not exist.
    stored: bool,
}

impl Parser<'_> {
    fn err(&self, key_path: &str, message: impl Into<String>) -> InputError {
        InputError::new(Location::file(&self.file).with_field(key_path), message)
    }

    fn spec(&self, table: &Table, text: &str) -> Result<Spec, InputError> {
        self.unknown_keys(table, "", TOP_KEYS)?;
        let name = self.required(table, "name")?;
        let name = match name {
            Value::String(s)
                if !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                s.clone()
            }
            Value::String(s) => {
                return Err(self.err(
                    "name",
                    format!(
                        "`{s}` is not a valid experiment name: use letters, digits, `_` and \
                         `-` only (it becomes a directory name)"
                    ),
                ));
            }
            other => return Err(self.wrong_type("name", "a string", other)),
        };
        let master_seed = match self.required(table, "master_seed")? {
            Value::Integer(i) if *i >= 0 => *i as u64,
            Value::Integer(i) => {
                return Err(self.err(
                    "master_seed",
                    format!("must be an integer from 0 to {}, got {i}", i64::MAX),
                ));
            }
            other => return Err(self.wrong_type("master_seed", "an integer", other)),
        };
        let replications =
            precision::replications(&self.file, self.required(table, "replications")?)?;
        let algorithms = self.algorithms(self.required(table, "algorithms")?)?;
        let max_events = match table.get("max_events") {
            None => None,
            Some(Value::Integer(i)) if *i >= 1 => Some(*i as u64),
            Some(Value::Integer(i)) => {
                return Err(self.err(
                    "max_events",
                    format!("must be a positive number of events, got {i}"),
                ));
            }
            Some(other) => return Err(self.wrong_type("max_events", "an integer", other)),
        };
        let sequential = match (table.get("precision"), replications.is_sequential()) {
            (None, false) => None,
            (Some(Value::Table(t)), true) => Some(Sequential {
                replications,
                precision: precision::precision(&self.file, t, &algorithms)?,
            }),
            (None, true) => {
                return Err(self.err(
                    "replications",
                    "replications from min to max need a [precision] section with the \
                     target to stop on",
                ));
            }
            (Some(Value::Table(_)), false) => {
                return Err(self.err(
                    "replications",
                    "a [precision] target needs replications = { min = …, max = …, batch = … } \
                     to grow; with a fixed count it would never be used",
                ));
            }
            (Some(other), _) => {
                return Err(self.wrong_type("precision", "a table [precision]", other));
            }
        };

        let mut params = Vec::new();
        let mobility = match self.required(table, "mobility")? {
            Value::Table(t) => self.mobility(t, &mut params)?,
            other => return Err(self.wrong_type("mobility", "a table [mobility]", other)),
        };
        match table.get("network") {
            None => self.section(&Table::new(), "network", NETWORK_FIELDS, &mut params)?,
            Some(Value::Table(t)) => self.section(t, "network", NETWORK_FIELDS, &mut params)?,
            Some(other) => return Err(self.wrong_type("network", "a table [network]", other)),
        }
        let needs_workload = algorithms.iter().any(|a| a.family().needs_workload());
        match (table.get("workload"), needs_workload) {
            (None, false) => {}
            (None, true) => {
                return Err(self.err(
                    "workload",
                    format!(
                        "missing required section [workload] (with `rate`): {} algorithms \
                         need a request workload",
                        workload_families()
                    ),
                ));
            }
            (Some(Value::Table(_)), false) => {
                return Err(self.err(
                    "workload",
                    format!(
                        "no algorithm of this spec uses a workload (only {} algorithms do); \
                         remove [workload]",
                        workload_families()
                    ),
                ));
            }
            (Some(Value::Table(t)), true) => {
                if !t.contains_key("rate") {
                    return Err(self.err("workload.rate", "missing required key"));
                }
                let start = params.len();
                self.section(t, "workload", WORKLOAD_FIELDS, &mut params)?;
                for p in &mut params[start..] {
                    p.scope = Scope::Workload;
                }
            }
            (Some(other), _) => {
                return Err(self.wrong_type("workload", "a table [workload]", other));
            }
        }
        match table.get("params") {
            None => self.algorithm_params(&Table::new(), &algorithms, &mut params)?,
            Some(Value::Table(t)) => self.algorithm_params(t, &algorithms, &mut params)?,
            Some(other) => return Err(self.wrong_type("params", "a table [params.NAME]", other)),
        }
        params.sort_by_key(|p| p.name);
        Ok(Spec {
            path: self.path.to_path_buf(),
            name,
            master_seed,
            replications: replications.max,
            sequential,
            max_events,
            algorithms,
            mobility,
            params,
            text: text.to_string(),
            stored: self.stored,
        })
    }

    fn required<'t>(&self, table: &'t Table, key: &str) -> Result<&'t Value, InputError> {
        table
            .get(key)
            .ok_or_else(|| self.err(key, "missing required key"))
    }

    fn wrong_type(&self, key_path: &str, expected: &str, got: &Value) -> InputError {
        self.err(
            key_path,
            format!("wrong type: expected {expected}, got {}", describe(got)),
        )
    }

    /// Refuses keys outside `known`: a key that belongs in another table says which
    /// ("`routing` is a parameter of me-raymond: put it under [params.me-raymond]");
    /// otherwise the closest known key is suggested.
    fn unknown_keys(&self, table: &Table, prefix: &str, known: &[&str]) -> Result<(), InputError> {
        for key in table.keys() {
            if !known.contains(&key.as_str()) {
                let hint = match (elsewhere(key, prefix), closest(key, known)) {
                    (Some(place), _) => format!(": {place}"),
                    (None, Some(k)) => format!("; did you mean `{k}`?"),
                    (None, None) => format!(" (known: {})", known.join(", ")),
                };
                return Err(self.err(&format!("{prefix}{key}"), format!("unknown key{hint}")));
            }
        }
        Ok(())
    }

    fn algorithms(&self, value: &Value) -> Result<Vec<Algorithm>, InputError> {
        let names = Algorithm::names();
        let items: Vec<(String, &Value)> = match value {
            Value::Array(a) if a.is_empty() => {
                return Err(self.err("algorithms", "empty list: give at least one algorithm"));
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| (format!("algorithms[{i}]"), v))
                .collect(),
            v => vec![("algorithms".to_string(), v)],
        };
        let mut out: Vec<Algorithm> = Vec::new();
        for (path, v) in items {
            let Value::String(s) = v else {
                return Err(self.wrong_type(&path, "an algorithm name (a string)", v));
            };
            let algo = match Algorithm::parse(s) {
                Some(algo) => algo,
                None => {
                    let other = s.as_str();
                    let hint = closest(other, &names)
                        .map(|k| format!("did you mean `{k}`? "))
                        .unwrap_or_default();
                    return Err(self.err(
                        &path,
                        format!(
                            "unknown algorithm `{other}`; {hint}(known: {})",
                            names.join(", ")
                        ),
                    ));
                }
            };
            if out.contains(&algo) {
                return Err(self.err(&path, format!("duplicate value `{s}` in the list")));
            }
            out.push(algo);
        }
        Ok(out)
    }

    /// `[params.NAME]`: each algorithm's parameters, checked against the registry. An
    /// algorithm of the spec without a section, or a parameter left out, runs at the
    /// defaults (fixed values, kept in the tables like every other parameter).
    fn algorithm_params(
        &self,
        table: &Table,
        algorithms: &[Algorithm],
        params: &mut Vec<SpecParam>,
    ) -> Result<(), InputError> {
        for (name, section) in table {
            let path = format!("params.{name}");
            let Some(algorithm) = Algorithm::parse(name) else {
                let hint = closest(name, &Algorithm::names())
                    .map(|k| format!("; did you mean `{k}`?"))
                    .unwrap_or_default();
                return Err(self.err(&path, format!("unknown algorithm `{name}`{hint}")));
            };
            if !algorithms.contains(&algorithm) {
                return Err(self.err(
                    &path,
                    format!("`{name}` is not in `algorithms`: add it there or remove [{path}]"),
                ));
            }
            let Value::Table(section) = section else {
                return Err(self.wrong_type(&path, &format!("a table [{path}]"), section));
            };
            if algorithm.params().is_empty() && !section.is_empty() {
                let key = section.keys().next().expect("not empty");
                return Err(self.err(
                    &format!("{path}.{key}"),
                    format!("unknown parameter: {name} takes no parameters"),
                ));
            }
            let known: Vec<&str> = algorithm.params().iter().map(|d| d.name).collect();
            self.unknown_keys(section, &format!("{path}."), &known)?;
        }
        for &algorithm in algorithms {
            let section = match table.get(algorithm.name()) {
                Some(Value::Table(t)) => Some(t),
                _ => None,
            };
            for def in algorithm.params() {
                let path = format!("params.{}.{}", algorithm.name(), def.name);
                let check = |at: &str, v: &Value| -> Result<SpecValue, InputError> {
                    let value = match v {
                        Value::Integer(i) => ParamValue::Int(*i),
                        Value::Float(x) => ParamValue::Float(*x),
                        Value::String(s) => ParamValue::Text(s.trim().to_string()),
                        other => return Err(self.wrong_type(at, &def.kind_text(), other)),
                    };
                    let value = def.check(value).map_err(|e| self.err(at, e))?;
                    Ok(SpecValue::Algorithm(value))
                };
                let written = section.and_then(|t| t.get(def.name));
                let default = match def.default_value() {
                    ParamValue::Int(i) => Value::Integer(i),
                    ParamValue::Float(x) => Value::Float(x),
                    ParamValue::Text(s) => Value::String(s),
                };
                let (typed, is_axis) = self
                    .values(&path, written, Some(&default), check)?
                    .expect("a default is given");
                params.push(SpecParam::new(
                    def.name,
                    path,
                    typed,
                    is_axis,
                    Scope::Algorithm(algorithm),
                ));
            }
        }
        Ok(())
    }

    fn mobility(
        &self,
        table: &Table,
        params: &mut Vec<SpecParam>,
    ) -> Result<MobilityKind, InputError> {
        if table.contains_key("traces") {
            for key in table.keys() {
                if RWP_FIELDS.iter().any(|f| f.key == key) && key != "duration" {
                    return Err(self.err(
                        &format!("mobility.{key}"),
                        "a random-waypoint key next to `traces`: mobility is either generated \
                         (random-waypoint keys) or read from trace files (`traces`), not both",
                    ));
                }
            }
            self.section(table, "mobility", TRACE_FIELDS, params)?;
            Ok(MobilityKind::Traces)
        } else {
            let mut known: Vec<&str> = RWP_FIELDS.iter().map(|f| f.key).collect();
            known.push("traces");
            self.unknown_keys(table, "mobility.", &known)?;
            self.section(table, "mobility", RWP_FIELDS, params)?;
            Ok(MobilityKind::RandomWaypoint)
        }
    }

    /// Checks one section's keys and values; omitted keys take their defaults, or are
    /// left out if they have none (`duration` of a trace).
    fn section(
        &self,
        table: &Table,
        section: &str,
        fields: &[Field],
        params: &mut Vec<SpecParam>,
    ) -> Result<(), InputError> {
        let known: Vec<&str> = fields.iter().map(|f| f.key).collect();
        self.unknown_keys(table, &format!("{section}."), &known)?;
        for f in fields {
            let path = format!("{section}.{}", f.key);
            let name = if f.key == "traces" { "trace" } else { f.key };
            let default = default_value(f.key).filter(|_| f.defaulted);
            let written = match table.get(f.key) {
                Some(item) if f.key == "traces" && !item.is_array() => {
                    return Err(self.wrong_type(&path, "a list of trace file paths", item));
                }
                written => written,
            };
            let Some((typed, is_axis)) =
                self.values(&path, written, default.as_ref(), |at, v| {
                    self.value(at, f.kind, v)
                })?
            else {
                continue;
            };
            params.push(SpecParam::new(name, path, typed, is_axis, Scope::All));
        }
        Ok(())
    }

    /// The values of one key: a list is an axis (non-empty, no two values with one
    /// canonical form), a scalar a fixed value, an omitted key its default (`None`
    /// without one). Each value is checked by `check`.
    fn values(
        &self,
        path: &str,
        written: Option<&Value>,
        default: Option<&Value>,
        check: impl Fn(&str, &Value) -> Result<SpecValue, InputError>,
    ) -> Result<Option<(Vec<SpecValue>, bool)>, InputError> {
        match written {
            None => default
                .map(|v| Ok((vec![check(path, v)?], false)))
                .transpose(),
            Some(Value::Array(items)) => {
                if items.is_empty() {
                    return Err(self.err(
                        path,
                        "empty list: give at least one value (a list is a sweep axis)",
                    ));
                }
                let mut values: Vec<SpecValue> = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let at = format!("{path}[{i}]");
                    let v = check(&at, item)?;
                    let canonical = v.canonical();
                    if let Some(j) = values.iter().position(|w| w.canonical() == canonical) {
                        return Err(self.err(
                            &at,
                            format!(
                                "duplicate value {canonical} in the list (same as {path}[{j}]); \
                                 each axis value must be distinct"
                            ),
                        ));
                    }
                    values.push(v);
                }
                Ok(Some((values, true)))
            }
            Some(item) => Ok(Some((vec![check(path, item)?], false))),
        }
    }

    /// Checks one scalar value and types it.
    fn value(&self, path: &str, kind: Kind, v: &Value) -> Result<SpecValue, InputError> {
        let number = |expected: &str| match v {
            Value::Integer(i) => Ok(*i as f64),
            Value::Float(x) => Ok(*x),
            other => Err(self.wrong_type(path, expected, other)),
        };
        let text = |expected: &str| match v {
            Value::String(s) => Ok(s.trim()),
            other => Err(self.wrong_type(path, expected, other)),
        };
        let problem = |msg: String| self.err(path, msg);
        Ok(match kind {
            Kind::Count => match v {
                Value::Integer(i) if *i >= 1 => SpecValue::Count(*i),
                Value::Integer(i) => return Err(problem(format!("must be at least 1, got {i}"))),
                other => return Err(self.wrong_type(path, "a positive integer", other)),
            },
            Kind::NonNegative => {
                let x = number("a number")?;
                if !(x.is_finite() && x >= 0.0) {
                    return Err(problem(format!("must be a finite number >= 0, got {x}")));
                }
                SpecValue::Number(x)
            }
            Kind::Positive => {
                let x = number("a number")?;
                if !(x.is_finite() && x > 0.0) {
                    return Err(problem(format!("must be a finite number > 0, got {x}")));
                }
                SpecValue::Number(x)
            }
            Kind::Choice(choices) => {
                let s = text("a string")?;
                let Some(&(word, choice)) = choices.iter().find(|(w, _)| *w == s) else {
                    let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
                    let hint = closest(s, &words)
                        .map(|k| format!("did you mean `{k}`? "))
                        .unwrap_or_default();
                    return Err(problem(format!(
                        "unknown value `{s}`; {hint}(expected {})",
                        words.join(" or ")
                    )));
                };
                SpecValue::Choice(word, choice)
            }
            Kind::Area => SpecValue::Area(
                params::parse_area(text("a string \"WIDTHxHEIGHT\"")?).map_err(problem)?,
            ),
            Kind::Delay => SpecValue::Delay(
                text("a delay string such as \"uniform:1ms:5ms\"")?
                    .parse()
                    .map_err(problem)?,
            ),
            Kind::Duration => SpecValue::Duration(
                params::parse_detection_delay(text("a duration string such as \"10ms\"")?)
                    .map_err(problem)?,
            ),
            Kind::CsTime => SpecValue::CsTime(match v {
                Value::Integer(_) | Value::Float(_) => {
                    params::parse_cs_time(&number("a number")?.to_string()).map_err(problem)?
                }
                Value::String(s) => params::parse_cs_time(s).map_err(problem)?,
                other => {
                    return Err(self.wrong_type(path, "seconds or a string \"exp:MEAN\"", other));
                }
            }),
            Kind::TracePath => {
                let s = text("a trace file path (a string)")?;
                let resolved = self
                    .path
                    .parent()
                    .map_or_else(|| PathBuf::from(s), |d| d.join(s));
                if resolved.is_dir() {
                    return Err(problem(format!(
                        "`{}` is a directory: name each trace file in it",
                        resolved.display()
                    )));
                }
                if !resolved.is_file() && !self.stored {
                    return Err(problem(format!(
                        "trace file `{}` does not exist (paths are relative to the spec's \
                         directory)",
                        resolved.display()
                    )));
                }
                SpecValue::Trace(s.to_string())
            }
        })
    }
}

/// The families whose algorithms need a workload, for errors (`mutual-exclusion`).
fn workload_families() -> String {
    crate::family::ALL
        .iter()
        .filter(|f| f.needs_workload())
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where a key refused in the table at `prefix` (`mobility.`, `network.`, …) belongs,
/// if it is a key of another table or an algorithm's parameter.
fn elsewhere(key: &str, prefix: &str) -> Option<String> {
    let tables: [(&str, &[super::schema::Field]); 3] = [
        ("mobility", super::schema::RWP_FIELDS),
        ("network", super::schema::NETWORK_FIELDS),
        ("workload", super::schema::WORKLOAD_FIELDS),
    ];
    let here = prefix.trim_end_matches('.');
    if let Some((table, _)) = tables
        .iter()
        .find(|(t, fields)| *t != here && fields.iter().any(|f| f.key == key))
    {
        return Some(format!("`{key}` is a key of [{table}]: put it there"));
    }
    let owners: Vec<&str> = Algorithm::all()
        .filter(|a| a.params().iter().any(|p| p.name == key))
        .map(Algorithm::name)
        .collect();
    if !owners.is_empty() && !here.starts_with("params.") {
        let tables: Vec<String> = owners.iter().map(|a| format!("[params.{a}]")).collect();
        return Some(format!(
            "`{key}` is a parameter of {}: put it under {}",
            owners.join(" and "),
            tables.join(" or ")
        ));
    }
    if super::schema::TOP_KEYS.contains(&key) && !here.is_empty() {
        return Some(format!(
            "`{key}` is a top-level key: put it above the first table"
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::edit_distance;

    #[test]
    fn suggestions_need_a_close_key() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            closest("sped_max", &["speed_min", "speed_max"]),
            Some("speed_max")
        );
        assert_eq!(closest("colour", &["nodes", "area"]), None);
    }
}
