//! Chooses a trace reader or writer from the file name, so the CLI and the sweep code can
//! take any supported trace without caring which tool produced it.
//!
//! Detection is by name only: `.movements` and `.movements.gz` are BonnMotion, everything
//! else (`.tcl`, `.ns2`, `.ns_movements`, `.txt`, no extension, …) is ns-2, because ns-2
//! movement files carry no fixed extension and are by far the common case; a file that is
//! not ns-2 then fails with a located error on its first line rather than being guessed at.

use crate::input::{InputError, InputWarning, Location};
use crate::mobility::Trace;
use crate::mobility::bonnmotion;
use crate::mobility::ns2::{self, SetdestFooter};
use crate::output::write_atomically;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// A trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceFormat {
    /// ns-2 Tcl movement commands (`setdest` and compatible tools).
    Ns2,
    /// BonnMotion's native `X.movements[.gz]` + `X.params`.
    BonnMotion,
}

impl TraceFormat {
    /// The format a file name implies (see the module docs for the rule).
    pub fn from_path(path: &Path) -> Self {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.ends_with(".movements") || name.ends_with(".movements.gz") {
            TraceFormat::BonnMotion
        } else {
            TraceFormat::Ns2
        }
    }

    /// The files besides `path` itself that this format's reader opens, each with what
    /// it is (`params file`): BonnMotion's `X.params`, which sets the area and the
    /// duration. Everything a reader opens shapes the runs, so sweeps fingerprint these
    /// too ([`crate::sweep::fingerprints`]).
    pub fn side_files(self, path: &Path) -> Vec<(&'static str, PathBuf)> {
        match self {
            TraceFormat::Ns2 => Vec::new(),
            TraceFormat::BonnMotion => vec![("params file", bonnmotion::params_path(path))],
        }
    }

    /// Name used in messages: `ns-2` or `BonnMotion`.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Ns2 => "ns-2",
            TraceFormat::BonnMotion => "BonnMotion",
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A trace read from a file, with what else the file said.
#[derive(Clone, Debug)]
pub struct LoadedTrace {
    /// The trace, validated.
    pub trace: Trace,
    /// setdest's footer counts, when the file is an ns-2 file that has them.
    pub footer: Option<SetdestFooter>,
    /// Usable but suspicious input found while reading (`trace lint` prints them).
    pub warnings: Vec<InputWarning>,
    /// The reader used, chosen from the file name.
    pub format: TraceFormat,
}

/// Reads a trace in the format its name implies.
pub fn read_trace(path: &Path) -> Result<LoadedTrace, InputError> {
    read_trace_with(path, &ReadOptions::default())
}

/// How to read a trace beyond what its file says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReadOptions {
    /// The trace's length in seconds, over the file's own: cuts or extends it (see
    /// [`ns2::parse_with`] and [`bonnmotion::parse_with`]).
    pub duration: Option<f64>,
    /// A SUMO activity file giving when each node is present
    /// ([`crate::mobility::activity`]).
    pub activity: Option<PathBuf>,
}

/// Reads a trace in the format its name implies, as `options` say.
pub fn read_trace_with(path: &Path, options: &ReadOptions) -> Result<LoadedTrace, InputError> {
    if let Some(problem) = options
        .duration
        .and_then(|d| crate::input::span_problem(d, true))
    {
        return Err(InputError::parameter("duration", problem));
    }
    let format = TraceFormat::from_path(path);
    let mut loaded = match format {
        TraceFormat::Ns2 => {
            let file = ns2::read_with(path, options.duration)?;
            LoadedTrace {
                trace: file.trace,
                footer: file.footer,
                warnings: file.warnings,
                format,
            }
        }
        TraceFormat::BonnMotion => {
            let file = bonnmotion::read_with(path, options.duration)?;
            LoadedTrace {
                trace: file.trace,
                footer: None,
                warnings: file.warnings,
                format,
            }
        }
    };
    match &options.activity {
        Some(activity) => {
            let read = crate::mobility::activity::read(
                activity,
                loaded.trace.node_count(),
                loaded.trace.duration,
            )?;
            loaded.trace.presence = Some(read.presence);
            loaded.warnings.extend(read.warnings);
        }
        None => {
            if let Some(sibling) = activity_beside(path) {
                loaded.warnings.push(InputWarning {
                    location: Location::file(path.display().to_string()),
                    message: format!(
                        "no activity file given: every node is taken as present for the whole \
                         trace; {} beside it looks like SUMO's activity file (vehicles exist \
                         only between their start and stop): pass it with --activity",
                        sibling.display()
                    ),
                });
            }
        }
    }
    Ok(loaded)
}

/// SUMO's activity file beside a mobility file it exported, if there is one.
fn activity_beside(path: &Path) -> Option<PathBuf> {
    let sibling = activity_path(path);
    (sibling != path && sibling.is_file()).then_some(sibling)
}

/// Where SUMO's exporter puts the activity file of a mobility file: the name with its
/// first `mobility` replaced by `activity` (`x.ns2mobility.tcl` → `x.ns2activity.tcl`);
/// a name without `mobility` gets `.activity` appended.
pub fn activity_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.contains("mobility") {
        path.with_file_name(name.replacen("mobility", "activity", 1))
    } else {
        path.with_file_name(format!("{name}.activity"))
    }
}

/// Writing a trace failed; says which file, since a BonnMotion write touches two.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {format} trace {}: {source}", path.display())]
pub struct WriteTraceError {
    /// The path given to [`write_trace`]; for BonnMotion the movements file (a failure
    /// writing the `.params` file names that file in `source`).
    pub path: PathBuf,
    /// The format chosen from `path`'s name.
    pub format: TraceFormat,
    /// The I/O failure.
    #[source]
    pub source: io::Error,
}

/// Writes `trace` atomically in the format `path`'s name implies.
pub fn write_trace(trace: &Trace, path: &Path) -> Result<(), WriteTraceError> {
    let format = TraceFormat::from_path(path);
    let result = match format {
        TraceFormat::Ns2 => write_atomically(path, |w| ns2::write(trace, w)),
        TraceFormat::BonnMotion => bonnmotion::write(trace, path),
    };
    result.map_err(|source| WriteTraceError {
        path: path.to_path_buf(),
        format,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_follows_the_name() {
        for (name, format) in [
            ("a.movements", TraceFormat::BonnMotion),
            ("dir/a.movements.gz", TraceFormat::BonnMotion),
            ("A.MOVEMENTS", TraceFormat::BonnMotion),
            ("a.tcl", TraceFormat::Ns2),
            ("a.ns2", TraceFormat::Ns2),
            ("a.ns_movements", TraceFormat::Ns2),
            ("a.txt", TraceFormat::Ns2),
            ("scen-50", TraceFormat::Ns2),
        ] {
            assert_eq!(TraceFormat::from_path(Path::new(name)), format, "{name}");
        }
    }
}
