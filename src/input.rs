//! Errors and warnings about user input (trace files, parameters), with their location.
//!
//! Every bad input a researcher can hand us must be reported as `file:line: field: what
//! was expected`, so they can fix the file without reading our code. The CLI maps
//! [`InputError`] to exit code 2.

use std::fmt;
use std::path::Path;

/// The longest span of time any input may give (a trace time, a run's duration, a
/// delay), seconds (about 32 years): mobility studies span hours, and a longer time is
/// a unit mistake (milliseconds or nanoseconds written as seconds) that would make a run
/// simulate for ages.
pub const MAX_SECONDS: f64 = 1e9;

/// Why `seconds` cannot be a span of time (a run's duration, a delay, a CS
/// time), if it cannot: not a finite number, negative, longer than [`MAX_SECONDS`], or,
/// when it must be `positive`, shorter than the clock's nanosecond, which would round
/// it to nothing. Nothing is clamped.
pub fn span_problem(seconds: f64, positive: bool) -> Option<String> {
    // 1e-300 and 1e20 in scientific notation, not three hundred digits.
    let shown = if seconds == 0.0 || (1e-3..1e12).contains(&seconds.abs()) {
        format!("{seconds}")
    } else {
        format!("{seconds:e}")
    };
    if !seconds.is_finite() || seconds < 0.0 {
        return Some(format!(
            "must be a finite number of seconds >= 0, got {shown}"
        ));
    }
    if seconds > MAX_SECONDS {
        return Some(format!(
            "{shown} s is longer than the limit of {MAX_SECONDS:.0e} s (about 32 years); is it \
             in milliseconds or nanoseconds?"
        ));
    }
    if positive && seconds < 0.5e-9 {
        return Some(format!(
            "must be at least 1 ns (the simulator's clock counts nanoseconds), got {shown} s"
        ));
    }
    None
}

/// Where in the input something was found. `line` is 1-based; `field` names the column,
/// key or token (for example `X_`, `speed`, `params:x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file as named to the user, or `--name` for a command-line parameter.
    pub file: String,
    /// 1-based line number; `None` when the whole file (or parameter) is meant.
    pub line: Option<usize>,
    /// Column, key or token at fault, when narrower than the line.
    pub field: Option<String>,
}

impl Location {
    /// The whole of `file`: no line, no field.
    pub fn file(file: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            line: None,
            field: None,
        }
    }

    /// Line `line` (1-based) of `file`.
    pub fn line(file: impl Into<String>, line: usize) -> Self {
        Self {
            file: file.into(),
            line: Some(line),
            field: None,
        }
    }

    /// Narrows the location to one column, key or token.
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
    /// Where the bad input is.
    pub location: Location,
    /// What was expected instead, worded for the person fixing the file.
    pub message: String,
}

impl InputError {
    /// An error at `location`; `message` says what was expected.
    /// Control characters from the input (a NUL byte in a value) are shown escaped,
    /// never echoed raw to the terminal.
    pub fn new(location: Location, message: impl Into<String>) -> Self {
        Self {
            location,
            message: printable(message.into()),
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

/// `text` with every control character but a newline or tab escaped (`\u{0}`).
fn printable(text: String) -> String {
    if !text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return text;
    }
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// Input that is usable but suspicious; readers collect these, `trace lint` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputWarning {
    /// Where the suspicious input is.
    pub location: Location,
    /// Why it looks wrong, worded for the person who wrote the file.
    pub message: String,
}

impl fmt::Display for InputWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: warning: {}",
            self.location,
            printable(self.message.clone())
        )
    }
}

/// The known key closest to `key` in edit distance, if close enough to be a likely typo.
pub fn closest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|k| (edit_distance(key, k), *k))
        .min()
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .map(|(_, k)| k)
}

/// Levenshtein distance (insertions, deletions, substitutions), by characters.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}
