//! BonnMotion native traces: `X.movements` (or `X.movements.gz`) plus `X.params`.
//!
//! BonnMotion is the other generator MANET studies commonly publish with; its native
//! format is waypoints rather than commands, which maps directly onto our legs.
//!
//! # Format and rules
//!
//! - `X.movements` has one line per node (line `i + 1` is node `i`), each a list of
//!   `t x y` waypoints: the node is at `(x, y)` at time `t` and moves in a straight line
//!   at constant speed to the next waypoint; two equal consecutive positions are a pause.
//!   Consecutive pauses are merged, as in the ns-2 reader, so both readers produce the
//!   same normal form.
//! - `X.params` holds `key=value` lines. We read `x` (width), `y` (height), `duration`
//!   (all required) and `nn` (node count, checked against the movements when present).
//!   Blank lines and `#` comments are skipped; other keys (`model`, `randomSeed`, …) are
//!   ignored. The params file is found by stripping `.gz` and then `.movements` from the
//!   movements path and adding `.params`, which is how BonnMotion names its output.
//! - 3-D: a scenario is 3-D when its params have a `z` key greater than 0; then every
//!   waypoint is `t x y z`. We decide only by `z` because `dim=3` does *not* mean 3-D:
//!   in BonnMotion's RandomWaypoint it selects movement along both x and y, and ordinary
//!   2-D scenarios carry it. A 3-D scenario is accepted only if every `z` is 0, since
//!   links are solved in the plane.
//! - The first waypoint must be at t = 0, because a trajectory has to say where the node
//!   is from the start. Times must not decrease. A repeated waypoint (same time, same
//!   place) is skipped, as BonnMotion sometimes writes one at the end; the same time at a
//!   different place would be a jump, which links cannot be solved across, so it is an
//!   error.
//! - A node whose last waypoint is before `duration` stays there until the end; waypoints
//!   after `duration` are cut off with a warning (the params define the trace's length).
//! - Waypoints outside the area by more than [`AREA_SLACK`] m are warned about.
//!
//! Errors name the file, the line (node index + 1) and the field (`waypoint 3 time`,
//! waypoints counted from 1); params errors name the params file, line and key.
//!
//! # Writer
//!
//! [`write()`] writes the params (`x`, `y`, `duration`, `nn`: what a reader needs) and the
//! movements, each atomically, gzipped when the path ends in `.gz` (with a fixed gzip
//! header, so equal traces give equal bytes). Waypoints are each leg's start and origin
//! plus the last position at the duration, printed in Rust's shortest exact form, so
//! reading back gives the same legs within float rounding of the recomputed velocities.

use crate::input::{InputError, InputWarning, Location};
use crate::mobility::ns2::{AREA_SLACK, read_text};
use crate::mobility::{Area, Leg, Point, Trace};
use crate::output::write_atomically;
use flate2::Compression;
use flate2::write::GzEncoder;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A parsed BonnMotion scenario.
#[derive(Clone, Debug)]
pub struct BonnMotionFile {
    /// The scenario as legs, cut at the params' `duration`, pauses merged.
    pub trace: Trace,
    /// Usable but suspicious input (waypoints cut off or outside the area).
    pub warnings: Vec<InputWarning>,
}

/// `X.params` for `X.movements` or `X.movements.gz`.
pub fn params_path(movements: &Path) -> PathBuf {
    match movements.to_str() {
        Some(s) => {
            let base = s.strip_suffix(".gz").unwrap_or(s);
            let base = base.strip_suffix(".movements").unwrap_or(base);
            PathBuf::from(format!("{base}.params"))
        }
        None => {
            let mut name = movements.as_os_str().to_owned();
            name.push(".params");
            PathBuf::from(name)
        }
    }
}

fn is_gzip(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "gz")
}

/// Reads `X.movements` or `X.movements.gz` together with `X.params`.
pub fn read(path: &Path) -> Result<BonnMotionFile, InputError> {
    read_with(path, None)
}

/// [`read`], as a trace lasting `duration` seconds when given instead of the params'
/// `duration` (see [`parse_with`]).
pub fn read_with(path: &Path, duration: Option<f64>) -> Result<BonnMotionFile, InputError> {
    let params = params_path(path);
    let params_text = match read_text(&params) {
        Ok(text) => text,
        Err(e) if !params.exists() => {
            return Err(InputError::file(
                &params,
                format!(
                    "missing BonnMotion params file (needed for the area and duration of {}): {}",
                    path.display(),
                    e.message
                ),
            ));
        }
        Err(e) => return Err(e),
    };
    let movements = read_text(path)?;
    parse_with(
        &movements,
        &path.display().to_string(),
        &params_text,
        &params.display().to_string(),
        duration,
    )
}

/// The params we use, with the lines they came from.
struct Params {
    area: Area,
    duration: f64,
    nodes: Option<(u64, usize)>,
    three_d: bool,
}

fn parse_params(text: &str, source: &str) -> Result<Params, InputError> {
    let mut values: BTreeMap<&str, (&str, usize)> = BTreeMap::new();
    for (index, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            return Err(InputError::new(
                Location::line(source, index + 1),
                format!("expected `key=value`, found `{line}`"),
            ));
        };
        values.insert(key.trim(), (value.trim(), index + 1));
    }
    let number = |key: &str, what: &str, positive: bool| -> Result<Option<f64>, InputError> {
        let Some(&(value, line)) = values.get(key) else {
            return Ok(None);
        };
        let error = || {
            InputError::new(
                Location::line(source, line).with_field(key),
                format!("expected {what}, found `{value}`"),
            )
        };
        let v: f64 = value.parse().map_err(|_| error())?;
        if !v.is_finite() || v < 0.0 || (positive && v == 0.0) {
            return Err(error());
        }
        if let Some(problem) = (key == "duration")
            .then(|| crate::mobility::trace::time_beyond_limit(v))
            .flatten()
        {
            return Err(InputError::new(
                Location::line(source, line).with_field(key),
                problem,
            ));
        }
        Ok(Some(v))
    };
    let required = |key: &str, what: &str, positive: bool| -> Result<f64, InputError> {
        number(key, what, positive)?.ok_or_else(|| {
            InputError::new(
                Location::file(source).with_field(key),
                format!("missing `{key}=`: expected {what}"),
            )
        })
    };
    let width = required(
        "x",
        "the area's width in metres (a non-negative number)",
        false,
    )?;
    let height = required(
        "y",
        "the area's height in metres (a non-negative number)",
        false,
    )?;
    let duration = required(
        "duration",
        "the duration in seconds (a positive number)",
        true,
    )?;
    let three_d = number(
        "z",
        "the area's depth in metres (a non-negative number)",
        false,
    )?
    .is_some_and(|z| z > 0.0);
    let nodes = match values.get("nn") {
        None => None,
        Some(&(value, line)) => Some((
            value.parse::<u64>().map_err(|_| {
                InputError::new(
                    Location::line(source, line).with_field("nn"),
                    format!("expected a node count (a non-negative integer), found `{value}`"),
                )
            })?,
            line,
        )),
    };
    Ok(Params {
        area: Area { width, height },
        duration,
        nodes,
        three_d,
    })
}

/// Parses movements and params text; the sources name them in errors.
pub fn parse(
    movements: &str,
    movements_source: &str,
    params: &str,
    params_source: &str,
) -> Result<BonnMotionFile, InputError> {
    parse_with(movements, movements_source, params, params_source, None)
}

/// [`parse`], as a trace lasting `duration` seconds when given: shorter cuts it (later
/// waypoints are ignored, without a warning since that was asked for), longer extends
/// it (every node rests at its last waypoint).
pub fn parse_with(
    movements: &str,
    movements_source: &str,
    params: &str,
    params_source: &str,
    duration: Option<f64>,
) -> Result<BonnMotionFile, InputError> {
    let mut params = parse_params(params, params_source)?;
    let asked = duration.is_some();
    if let Some(duration) = duration {
        params.duration = duration;
    }
    let mut warnings = Vec::new();
    let lines: Vec<&str> = movements.lines().collect();
    // Trailing blank lines are layout, not nodes without waypoints.
    let used = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    if used == 0 {
        return Err(InputError::new(
            Location::file(movements_source),
            "no nodes: expected one line of `t x y` waypoints per node",
        ));
    }
    if let Some((nn, line)) = params.nodes
        && nn != used as u64
    {
        return Err(InputError::new(
            Location::line(params_source, line).with_field("nn"),
            format!("nn={nn} but {movements_source} has {used} node lines"),
        ));
    }
    let legs = lines[..used]
        .iter()
        .enumerate()
        .map(|(node, text)| node_legs(node, text, &params, movements_source, &mut warnings))
        .collect::<Result<Vec<_>, _>>()?;
    if asked {
        warnings.retain(|w| !w.message.contains("after the duration"));
    }
    let trace = Trace::from_legs(params.area, params.duration, legs).map_err(|e| {
        InputError::new(
            Location::file(movements_source),
            format!("the waypoints do not form a valid trace: {e}"),
        )
    })?;
    Ok(BonnMotionFile { trace, warnings })
}

/// One node's line of waypoints, as legs tiling `[0, duration]`.
fn node_legs(
    node: usize,
    text: &str,
    params: &Params,
    source: &str,
    warnings: &mut Vec<InputWarning>,
) -> Result<Vec<Leg>, InputError> {
    let line = node + 1;
    let at = |field: String| Location::line(source, line).with_field(field);
    let arity = if params.three_d { 4 } else { 3 };
    let shape = if params.three_d {
        "`t x y z`"
    } else {
        "`t x y`"
    };
    let tokens: Vec<&str> = text.split_whitespace().collect();
    if tokens.is_empty() {
        return Err(InputError::new(
            at("waypoints".into()),
            format!("node {node} has no waypoints: expected {shape} groups"),
        ));
    }
    if text.contains(',') {
        return Err(InputError::new(
            at("waypoints".into()),
            format!(
                "numbers separated by commas: BonnMotion separates the numbers of {shape} \
                 groups with spaces"
            ),
        ));
    }
    if !tokens.len().is_multiple_of(arity) {
        let numbers = match tokens.len() {
            1 => "1 number is".to_string(),
            n => format!("{n} numbers are"),
        };
        return Err(InputError::new(
            at("waypoints".into()),
            format!("expected {shape} groups, but {numbers} not a multiple of {arity}"),
        ));
    }
    let mut waypoints: Vec<(f64, Point)> = Vec::with_capacity(tokens.len() / arity);
    for (k, group) in tokens.chunks(arity).enumerate() {
        let k = k + 1;
        let mut numbers = [0.0; 4];
        for (slot, (token, name)) in numbers
            .iter_mut()
            .zip(group.iter().zip(["time", "x", "y", "z"]))
        {
            let value: f64 = token.parse().map_err(|_| {
                InputError::new(
                    at(format!("waypoint {k} {name}")),
                    format!("expected a number, found `{token}`"),
                )
            })?;
            if !value.is_finite() {
                return Err(InputError::new(
                    at(format!("waypoint {k} {name}")),
                    format!("expected a finite number, found `{token}`"),
                ));
            }
            *slot = value + 0.0;
        }
        let [t, x, y, z] = numbers;
        if let Some(problem) = crate::mobility::trace::time_beyond_limit(t) {
            return Err(InputError::new(at(format!("waypoint {k} time")), problem));
        }
        let p = Point::new(x, y);
        if z != 0.0 {
            return Err(InputError::new(
                at(format!("waypoint {k} z")),
                format!("expected z 0, found {z}: 3-D movement is not supported"),
            ));
        }
        match waypoints.last() {
            None if t != 0.0 => {
                return Err(InputError::new(
                    at(format!("waypoint {k} time")),
                    format!("expected the first waypoint at time 0, found {t}"),
                ));
            }
            Some(&(prev_t, _)) if t < prev_t => {
                return Err(InputError::new(
                    at(format!("waypoint {k} time")),
                    format!(
                        "times must increase: waypoint {k} at {t} s comes after waypoint {} at \
                         {prev_t} s",
                        k - 1
                    ),
                ));
            }
            Some(&(prev_t, prev_p)) if t == prev_t => {
                if p != prev_p {
                    return Err(InputError::new(
                        at(format!("waypoint {k} time")),
                        format!(
                            "times must increase: waypoint {k} is at {t} s like waypoint {} but \
                             at another place, a jump from {prev_p} to {p}",
                            k - 1
                        ),
                    ));
                }
                continue;
            }
            _ => {}
        }
        if !params.area.contains(p, AREA_SLACK) {
            warnings.push(InputWarning {
                location: at(format!("waypoint {k}")),
                message: format!(
                    "node {node}: {p} lies outside the area {} × {} m",
                    params.area.width, params.area.height
                ),
            });
        }
        waypoints.push((t, p));
    }

    let duration = params.duration;
    let mut legs: Vec<Leg> = Vec::with_capacity(waypoints.len());
    let mut push = |leg: Leg| {
        if let Some(last) = legs.last_mut()
            && last.is_pause()
            && leg.is_pause()
        {
            last.end = leg.end;
        } else {
            legs.push(leg);
        }
    };
    for pair in waypoints.windows(2) {
        let [(t0, p0), (t1, p1)] = [pair[0], pair[1]];
        if t0 >= duration {
            break;
        }
        let dt = t1 - t0;
        let velocity = Point::new((p1.x - p0.x) / dt, (p1.y - p0.y) / dt);
        push(Leg {
            start: t0,
            end: t1.min(duration),
            origin: p0,
            velocity,
        });
    }
    if let Some(&(last_t, last_p)) = waypoints.last() {
        if last_t < duration {
            push(Leg {
                start: last_t,
                end: duration,
                origin: last_p,
                velocity: Point::default(),
            });
        } else if last_t > duration {
            warnings.push(InputWarning {
                location: at("waypoints".into()),
                message: format!(
                    "node {node}: waypoints after the duration {duration} s are ignored"
                ),
            });
        }
    }
    Ok(legs)
}

/// Shortest decimal that reads back as exactly `v` (and never `-0`).
fn exact(v: f64) -> String {
    format!("{}", v + 0.0)
}

/// Writes `X.movements` (gzipped when the path ends in `.gz`) and `X.params`, atomically.
pub fn write(trace: &Trace, movements_path: &Path) -> std::io::Result<()> {
    let params = params_path(movements_path);
    write_atomically(&params, |w| {
        writeln!(w, "x={}", exact(trace.area.width))?;
        writeln!(w, "y={}", exact(trace.area.height))?;
        writeln!(w, "duration={}", exact(trace.duration))?;
        writeln!(w, "nn={}", trace.node_count())
    })
    // Callers report the movements path; name the params file when it is the culprit.
    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", params.display())))?;
    let fill = |w: &mut dyn Write| -> io::Result<()> {
        for trajectory in &trace.nodes {
            let mut fields = Vec::with_capacity(3 * (trajectory.legs().len() + 1));
            for leg in trajectory.legs() {
                fields.extend([exact(leg.start), exact(leg.origin.x), exact(leg.origin.y)]);
            }
            let end = trajectory.position(trace.duration);
            fields.extend([exact(trace.duration), exact(end.x), exact(end.y)]);
            writeln!(w, "{}", fields.join(" "))?;
        }
        Ok(())
    };
    if is_gzip(movements_path) {
        write_atomically(movements_path, |w| {
            let mut encoder = GzEncoder::new(w, Compression::default());
            fill(&mut encoder)?;
            encoder.finish()?;
            Ok(())
        })
    } else {
        write_atomically(movements_path, fill)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn params_path_strips_gz_and_movements() {
        assert_eq!(
            params_path(Path::new("a/b.movements.gz")),
            PathBuf::from("a/b.params")
        );
        assert_eq!(
            params_path(Path::new("b.movements")),
            PathBuf::from("b.params")
        );
        assert_eq!(
            params_path(Path::new("b.txt")),
            PathBuf::from("b.txt.params")
        );
    }
}
