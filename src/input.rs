//! Errors and warnings about user input (trace files, parameters), with their location.
//!
//! Every bad input a researcher can hand us must be reported as `file:line: field: what
//! was expected`, so they can fix the file without reading our code. The CLI maps
//! [`InputError`] to exit code 2.

use std::fmt;
use std::path::Path;

/// Where in the input something was found. `line` is 1-based; `field` names the column,
/// key or token (for example `X_`, `speed`, `params:x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: Option<usize>,
    pub field: Option<String>,
}

impl Location {
    pub fn file(file: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: None,
            field: None,
        }
    }

    pub fn line(file: impl Into<String>, line: usize) -> Self {
        Self {
            file: file.into(),
            line: Some(line),
            field: None,
        }
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(field) = &self.field {
            write!(f, ": {field}")?;
        }
        Ok(())
    }
}

/// Input that cannot be used. Displayed as `file:line: field: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{location}: {message}")]
pub struct InputError {
    pub location: Location,
    pub message: String,
}

impl InputError {
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        Self {
            location,
            message: message.into(),
        }
    }

    /// An error about a whole file (unreadable, missing, empty).
    pub fn file(path: &Path, message: impl Into<String>) -> Self {
        Self::new(Location::file(path.display().to_string()), message)
    }

    /// An error about a named parameter that did not come from a file (a CLI flag).
    pub fn parameter(name: &str, message: impl Into<String>) -> Self {
        Self::new(Location::file(format!("--{name}")), message)
    }
}

/// Input that is usable but suspicious; readers collect these, `trace lint` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputWarning {
    pub location: Location,
    pub message: String,
}

impl fmt::Display for InputWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: warning: {}", self.location, self.message)
    }
}
