//! ns-2 `setdest` traces. (Being written: see the module docs once done.)

use crate::input::{InputError, InputWarning};
use crate::mobility::Trace;
use std::io::{self, Write};
use std::path::Path;

/// The counts setdest prints at the end of a file, kept to cross-check our replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetdestFooter {
    pub destination_unreachables: Option<u64>,
    pub route_changes: Option<u64>,
    pub link_changes: Option<u64>,
    /// The per-node table, indexed by node.
    pub per_node: Vec<NodeFooter>,
}

/// One row of the footer's per-node table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeFooter {
    pub node: u32,
    pub route_changes: u64,
    pub link_changes: u64,
}

/// A parsed ns-2 file: the trace plus what else the file said.
#[derive(Clone, Debug)]
pub struct Ns2File {
    pub trace: Trace,
    /// Present when the file ends with setdest's footer.
    pub footer: Option<SetdestFooter>,
    /// Number of `$god_ set-dist` lines (setdest's route oracle; not used for links).
    pub god_lines: usize,
    pub warnings: Vec<InputWarning>,
}

/// Reads an ns-2 movement file.
pub fn read(path: &Path) -> Result<Ns2File, InputError> {
    let _ = path;
    todo!()
}

/// Parses ns-2 text; `source` names it in errors.
pub fn parse(text: &str, source: &str) -> Result<Ns2File, InputError> {
    let _ = (text, source);
    todo!()
}

/// Writes `trace` in setdest's layout with 12 decimals.
pub fn write(trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
    let _ = (trace, out);
    todo!()
}
