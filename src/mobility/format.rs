//! Chooses a trace reader or writer from the file name, so the CLI and the sweep code can
//! take any supported trace without caring which tool produced it.
//!
//! Detection is by name only: `.movements` and `.movements.gz` are BonnMotion, everything
//! else (`.tcl`, `.ns2`, `.ns_movements`, `.txt`, no extension, …) is ns-2, because ns-2
//! movement files carry no fixed extension and are by far the common case; a file that is
//! not ns-2 then fails with a located error on its first line rather than being guessed at.

use crate::input::{InputError, InputWarning};
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
    let format = TraceFormat::from_path(path);
    match format {
        TraceFormat::Ns2 => {
            let file = ns2::read(path)?;
            Ok(LoadedTrace {
                trace: file.trace,
                footer: file.footer,
                warnings: file.warnings,
                format,
            })
        }
        TraceFormat::BonnMotion => {
            let file = bonnmotion::read(path)?;
            Ok(LoadedTrace {
                trace: file.trace,
                footer: None,
                warnings: file.warnings,
                format,
            })
        }
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
