//! BonnMotion native traces. (Being written.)

use crate::input::{InputError, InputWarning};
use crate::mobility::Trace;
use std::path::Path;

/// A parsed BonnMotion scenario.
#[derive(Clone, Debug)]
pub struct BonnMotionFile {
    pub trace: Trace,
    pub warnings: Vec<InputWarning>,
}

/// Reads `X.movements` or `X.movements.gz` together with `X.params`.
pub fn read(path: &Path) -> Result<BonnMotionFile, InputError> {
    let _ = path;
    todo!()
}

/// Writes `X.movements` (gzipped when the path ends in `.gz`) and `X.params`, atomically.
pub fn write(trace: &Trace, movements_path: &Path) -> std::io::Result<()> {
    let _ = (trace, movements_path);
    todo!()
}
