//! ns-2 `setdest` movement files: a tolerant reader with located errors, and a writer.
//!
//! Most published MANET studies ship their mobility as ns-2 Tcl produced by CMU's
//! `setdest` (v1 or v2) or by tools that imitate it (BonnMotion, ns-3 helpers, scripts),
//! so the reader accepts what those tools write and turns everything else into an error
//! that names the file, line and field. It is not a Tcl interpreter: it understands the
//! handful of commands movement files use and refuses anything else rather than guess.
//!
//! # What is accepted, and why
//!
//! - `$node_(i) set X_ v`, `Y_`, `Z_`: the t = 0 position, wherever it appears. ns-3's
//!   `Ns2MobilityHelper` reads files with the positions at the end, and in ns-2 itself
//!   the position is set before the simulator starts, so the line's place does not matter.
//! - `$ns_ at T "$node_(i) setdest X Y V"`: from its position at `T` the node heads
//!   straight for `(X, Y)` at speed `V`, arrives after `distance / V` and stays there.
//!   A later `setdest` interrupts the trip wherever the node is (ns-2 recomputes the
//!   velocity from the current position). `V = 0` is a pause: the node stays where it is
//!   and the printed `X Y` are ignored (setdest prints the destination rounded to 12
//!   decimals, which may differ from the true position in the last digit).
//! - `$god_ set-dist i j d`, at top level or scheduled: setdest's hop-count oracle for
//!   routing. Links come from exact geometry, so these lines are only counted
//!   ([`Ns2File::god_lines`]) and checked to be three non-negative integers.
//! - Spelling variants other tools write: any whitespace, any number of decimals,
//!   `$ns`/`$ns_`, `$node`/`$node_`, `$god`/`$god_`, spaces inside `$node_( 3 )` (ns-3
//!   accepts them), blank lines, `#` comments, a trailing `;`, several commands joined
//!   by `;`, and a `;# comment` after a command.
//! - Comments are also read for metadata, as `key: value` pairs separated by commas:
//!   `max x`/`max y` give the area and `duration` the length (setdest does not record
//!   its `-t`, our writer does), `nodes` is cross-checked, and setdest's footer
//!   (`Destination Unreachables`, `Route Changes`, `Link Changes`, and the per-node table
//!   rows `node | route changes | link changes`) becomes [`SetdestFooter`], which the
//!   link-event replay is validated against.
//!
//! # How legs are built
//!
//! Each node starts paused at its initial position; its events are applied in time order
//! (ties in file order, as ns-2's scheduler does). Moving legs get the velocity
//! `(dest − pos) / |dest − pos| · V`, pauses are zero-velocity legs, consecutive pauses
//! are merged and zero-length legs are dropped, so that every leg is a real change of
//! motion. A trip shorter than [`SNAP_SECONDS`] is treated as a pause.
//!
//! Snap rule: setdest prints the time a node arrives as the time of its next event, but
//! from the printed (rounded) position and speed the arrival recomputes a little off,
//! and for slow nodes the error exceeds 1e-9 s (a 500 m trip at 0.15 m/s takes 3333 s and
//! a speed rounded at 1e-12 m/s shifts that by ~1e-8 s). So an arrival within
//! `SNAP_SECONDS + SNAP_RELATIVE · trip time` of the node's next event (or of the end of
//! the trace) counts as arriving exactly at that event: no sliver of pause or of motion
//! is created, the node is at the destination at the event, and the leg's velocity is
//! `(dest − pos) / (event − start)` so the trajectory stays continuous (the speed changes
//! by at most the relative tolerance, 1e-8). A genuine pause shorter than the tolerance
//! is lost; the position error that causes is below 1e-8 of the trip length.
//!
//! The trace lasts until the duration the caller gives ([`parse_with`], `--duration`),
//! else the `duration:` header value when there is one (either takes priority: events
//! after it are ignored with a warning), else until the last `$ns_ at` time, god lines included, as that is the latest time the file speaks about. Every
//! trajectory is closed there: a trip still under way is cut, a node that arrived earlier
//! pauses until the end. The area is the header's `max x` × `max y`; without them it is
//! the bounding box of all positions and destinations, with a warning, because links near
//! the border may then differ from the original study.
//!
//! # Errors (the file cannot be used)
//!
//! An unknown command, a malformed number, NaN or infinity, a negative time or speed, a
//! node without `X_` or `Y_`, a gap in the node numbering (nodes are `0..n`; the missing
//! index is named), a `setdest` for a node with no initial position, a nonzero `Z_` (3-D
//! is not supported), a scheduled `set X_` (teleporting mid-run is not supported: links
//! could not be solved in closed form across the jump), an unterminated quote, an empty
//! file or one with no nodes, a bad `max x`/`max y`/`duration` header value, and a
//! trace that would last 0 s.
//!
//! # Warnings (the file is used, but may not mean what its author thought)
//!
//! - A node's own events out of time order: ns-2 runs events by time, so we sort them
//!   stably by time and warn at each line where a node's event goes back in time. Events
//!   of different nodes may come in any order (BonnMotion's ns-2 export writes the file
//!   node by node, SUMO's within a step in its own order): no warning.
//! - A position or destination outside the area by more than [`AREA_SLACK`] m, when the
//!   header gives the area (an inferred area is the file's bounding box, which may start
//!   below 0, so nothing lies outside it).
//! - A node's initial `X_`/`Y_`/`Z_` given twice: the later value wins, as in Tcl.
//! - Events after a header `duration`: ignored.
//! - The header's `nodes:` disagrees with the file, or a footer count is unreadable
//!   (those only serve as cross-checks).
//! - No `max x`/`max y` header: the bounding box is used.
//!
//! # Writer
//!
//! [`write()`] prints setdest's layout with 12 decimals: a header carrying `nodes`, the
//! area and the duration, the initial positions, then one `setdest` per leg sorted by
//! (start time, node): a moving leg is a `setdest` to its end position at its speed,
//! a pause is a `setdest` to its position with speed 0 (a pause at t = 0 is implied by
//! the initial position and skipped). The output depends only on the trace, so the same
//! trace gives the same bytes. Reading it back gives the trace again within 1e-9 with the
//! same legs, for traces in the reader's normal form (continuous, no two consecutive
//! pauses, no leg shorter than the snap tolerance); traces from this reader and from the
//! random-waypoint generator are.

use crate::input::{InputError, InputWarning, Location};
use crate::mobility::{Area, Leg, Point, Trace};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::path::Path;

/// Trips shorter than this are pauses, and arrivals this close to the next event snap to it.
pub const SNAP_SECONDS: f64 = 1e-9;
/// Arrival-time tolerance per second of trip, covering the rounding of printed speeds.
pub const SNAP_RELATIVE: f64 = 1e-8;
/// Metres a position may lie outside the area before we warn (printed rounding).
pub const AREA_SLACK: f64 = 1e-6;

/// The counts setdest prints at the end of a file, kept to cross-check our replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SetdestFooter {
    /// The footer's `Destination Unreachables`; `None` if absent or unreadable.
    pub destination_unreachables: Option<u64>,
    /// The footer's `Route Changes` total; `None` if absent or unreadable.
    pub route_changes: Option<u64>,
    /// The footer's `Link Changes` total, which the link-event replay is checked
    /// against; `None` if absent or unreadable.
    pub link_changes: Option<u64>,
    /// The per-node table, indexed by node.
    pub per_node: Vec<NodeFooter>,
}

/// One row of the footer's per-node table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeFooter {
    /// The node the row is about (expected to equal the row's position).
    pub node: u32,
    /// Route changes setdest counted for this node.
    pub route_changes: u64,
    /// Link changes setdest counted for this node, checked against the replay.
    pub link_changes: u64,
}

/// A parsed ns-2 file: the trace plus what else the file said.
#[derive(Clone, Debug)]
pub struct Ns2File {
    /// The movement as legs, in the reader's normal form (see the module docs).
    pub trace: Trace,
    /// Present when the file ends with setdest's footer.
    pub footer: Option<SetdestFooter>,
    /// Number of `$god_ set-dist` lines (setdest's route oracle; not used for links).
    pub god_lines: usize,
    /// Usable but suspicious input, located (see "Warnings" in the module docs).
    pub warnings: Vec<InputWarning>,
}

/// Reads an ns-2 movement file.
pub fn read(path: &Path) -> Result<Ns2File, InputError> {
    let text = read_text(path)?;
    parse(&text, &path.display().to_string())
}

/// A megabyte.
const MB: u64 = 1 << 20;

/// The most bytes of text a trace may hold (after decompression): 256 MB unless the
/// environment variable `LINKREV_MAX_TRACE_MB` says otherwise.
pub const DEFAULT_MAX_TRACE_MB: u64 = 256;

/// [`DEFAULT_MAX_TRACE_MB`] or `LINKREV_MAX_TRACE_MB`, in bytes.
fn max_trace_bytes() -> Result<u64, InputError> {
    match std::env::var("LINKREV_MAX_TRACE_MB") {
        Err(_) => Ok(DEFAULT_MAX_TRACE_MB * MB),
        Ok(text) => text
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|&mb| (1..=1 << 20).contains(&mb))
            .map(|mb| mb * MB)
            .ok_or_else(|| {
                InputError::parameter(
                    "LINKREV_MAX_TRACE_MB",
                    format!("expected megabytes from 1 to 1048576, got `{text}`"),
                )
            }),
    }
}

/// Reads a whole trace file as UTF-8 text, locating a bad byte by line so the user can
/// find it. Gzip is recognised by its magic bytes whatever the name (`.tcl.gz`, or a
/// compressed file without the suffix), and a file named `.gz` must be gzip; a UTF-8
/// byte-order mark (which Windows editors write) is skipped.
pub(crate) fn read_text(path: &Path) -> Result<String, InputError> {
    use std::io::Read;
    let limit = max_trace_bytes()?;
    let too_large = |what: &str| {
        InputError::file(
            path,
            format!(
                "{what} is larger than the limit of {} MB for a trace (about 4 million \
                 setdest lines); set LINKREV_MAX_TRACE_MB to read it",
                limit / MB
            ),
        )
    };
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    if size > limit {
        return Err(too_large("the file"));
    }
    let bytes = std::fs::read(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => InputError::file(path, "no such file"),
        _ => InputError::file(path, format!("cannot read the file: {e}")),
    })?;
    let gzip_magic = bytes.starts_with(&[0x1f, 0x8b]);
    let named_gzip = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"));
    let bytes = if gzip_magic {
        // Read one byte past the limit: a small file that inflates to gigabytes stops
        // there instead of filling memory.
        let mut text = Vec::new();
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .take(limit + 1)
            .read_to_end(&mut text)
            .map_err(|e| {
                InputError::file(
                    path,
                    format!("corrupt gzip: {e} (truncated or damaged; try `gzip -t` on it)"),
                )
            })?;
        if text.len() as u64 > limit {
            return Err(too_large("its decompressed text"));
        }
        text
    } else if named_gzip {
        return Err(InputError::file(
            path,
            "not a gzip file, though its name ends in `.gz`: rename it or compress it",
        ));
    } else {
        bytes
    };
    const BOM: &[u8] = b"\xEF\xBB\xBF";
    let body = bytes
        .strip_prefix(BOM)
        .map_or(bytes.clone(), <[u8]>::to_vec);
    String::from_utf8(body).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        InputError::new(
            Location::line(path.display().to_string(), line),
            format!(
                "the file is not UTF-8 text{}",
                if gzip_magic {
                    " (after gzip decompression)"
                } else {
                    ""
                }
            ),
        )
    })
}

/// Parses ns-2 text; `source` names it in errors.
pub fn parse(text: &str, source: &str) -> Result<Ns2File, InputError> {
    parse_with(text, source, None)
}

/// Reads an ns-2 movement file lasting `duration` seconds when given (see
/// [`parse_with`]).
pub fn read_with(path: &Path, duration: Option<f64>) -> Result<Ns2File, InputError> {
    let text = read_text(path)?;
    parse_with(&text, &path.display().to_string(), duration)
}

/// Parses ns-2 text as a trace lasting `duration` seconds when given, whatever the file
/// says: shorter cuts it (later events are ignored), longer extends it (a trip under way
/// at the last event goes on to its destination, as in ns-2, and every node then rests
/// there). An ns-2 file ends at its last event, so a scenario exported by BonnMotion or
/// SUMO reads shorter than it was made; this restores its length.
pub fn parse_with(text: &str, source: &str, duration: Option<f64>) -> Result<Ns2File, InputError> {
    if text.trim().is_empty() {
        return Err(InputError::new(
            Location::file(source),
            "the file is empty: expected ns-2 movement commands \
             (`$node_(i) set X_ x`, `$ns_ at T \"$node_(i) setdest x y v\"`)",
        ));
    }
    let mut reader = Reader::new(source);
    reader.duration_override = duration;
    for (index, line) in text.lines().enumerate() {
        reader.line(index + 1, line)?;
    }
    reader.finish()
}

// ---------------------------------------------------------------------------------------
// Lines and tokens
// ---------------------------------------------------------------------------------------

/// A token of one line. Quotes, parentheses and `;` are tokens of their own so that
/// `$node_(3)`, `$node_( 3 )` and `"$node_(3) setdest …"` all split the same way.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tok<'a> {
    Word(&'a str),
    Quote,
    Open,
    Close,
    Semi,
}

impl Tok<'_> {
    fn describe(self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Quote => "`\"`".to_string(),
            Tok::Open => "`(`".to_string(),
            Tok::Close => "`)`".to_string(),
            Tok::Semi => "`;`".to_string(),
        }
    }
}

/// Splits a line into tokens, dropping a `#` comment that starts where a command could.
fn tokenize(line: &str) -> Vec<Tok<'_>> {
    let mut toks = Vec::new();
    let mut word_start: Option<usize> = None;
    let mut in_quote = false;
    for (i, c) in line.char_indices() {
        let special = matches!(c, '"' | '(' | ')' | ';');
        if c.is_whitespace() || special {
            if let Some(s) = word_start.take() {
                toks.push(Tok::Word(&line[s..i]));
            }
            match c {
                '"' => {
                    in_quote = !in_quote;
                    toks.push(Tok::Quote);
                }
                '(' => toks.push(Tok::Open),
                ')' => toks.push(Tok::Close),
                ';' => toks.push(Tok::Semi),
                _ => {}
            }
        } else if word_start.is_none() {
            let command_start = matches!(toks.last(), None | Some(Tok::Semi));
            if c == '#' && command_start && !in_quote {
                return toks;
            }
            word_start = Some(i);
        }
    }
    if let Some(s) = word_start {
        toks.push(Tok::Word(&line[s..]));
    }
    toks
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    fn name(self) -> &'static str {
        match self {
            Axis::X => "X_",
            Axis::Y => "Y_",
            Axis::Z => "Z_",
        }
    }
}

/// One command of a line, already checked for syntax and value ranges.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Command {
    Init { node: u32, axis: Axis, value: f64 },
    God,
    At { time: f64, what: Scheduled },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Scheduled {
    Setdest { node: u32, dest: Point, speed: f64 },
    God,
}

const EXPECTED_COMMAND: &str = "expected `$node_(i) set X_|Y_|Z_ v`, \
     `$ns_ at T \"$node_(i) setdest x y v\"` or `$god_ set-dist i j d`";

/// A recursive-descent parser over one line's tokens.
struct LineParser<'a, 's> {
    toks: Vec<Tok<'a>>,
    pos: usize,
    source: &'s str,
    line: usize,
}

impl<'a> LineParser<'a, '_> {
    fn error(&self, field: &str, message: impl Into<String>) -> InputError {
        InputError::new(
            Location::line(self.source, self.line).with_field(field),
            message,
        )
    }

    fn peek(&self) -> Option<Tok<'a>> {
        self.toks.get(self.pos).copied()
    }

    fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "the end of the line".to_string(), Tok::describe)
    }

    fn next(&mut self) -> Option<Tok<'a>> {
        let tok = self.peek();
        self.pos += 1;
        tok
    }

    fn eat(&mut self, tok: Tok<'_>) -> bool {
        if self.peek() == Some(tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn word(&mut self, field: &str, what: &str) -> Result<&'a str, InputError> {
        match self.peek() {
            Some(Tok::Word(w)) => {
                self.pos += 1;
                Ok(w)
            }
            _ => Err(self.error(field, format!("expected {what}, found {}", self.found()))),
        }
    }

    fn number(&mut self, field: &str) -> Result<f64, InputError> {
        let word = self.word(field, "a number")?;
        let value: f64 = word
            .parse()
            .map_err(|_| self.error(field, format!("expected a number, found `{word}`")))?;
        if !value.is_finite() {
            return Err(self.error(
                field,
                format!(
                    "expected a finite number, found `{word}` (NaN and infinity are not valid)"
                ),
            ));
        }
        // `-0` is zero: normalise so it never prints as `-0.000…`.
        Ok(value + 0.0)
    }

    fn non_negative(&mut self, field: &str, what: &str) -> Result<f64, InputError> {
        let value = self.number(field)?;
        if value < 0.0 {
            return Err(self.error(
                field,
                format!("expected a non-negative {what}, found {value}"),
            ));
        }
        Ok(value)
    }

    fn integer(&mut self, field: &str, what: &str) -> Result<u64, InputError> {
        let word = self.word(field, what)?;
        word.parse()
            .map_err(|_| self.error(field, format!("expected {what}, found `{word}`")))
    }

    /// `( i )` after `$node_`.
    fn node_index(&mut self) -> Result<u32, InputError> {
        if !self.eat(Tok::Open) {
            return Err(self.error(
                "node",
                format!("expected `(` after `$node_`, found {}", self.found()),
            ));
        }
        let word = self.word("node", "a node index")?;
        let node = word.parse::<u32>().map_err(|_| {
            self.error(
                "node",
                format!("expected a node index (a non-negative integer), found `{word}`"),
            )
        })?;
        if node as usize >= crate::mobility::trace::MAX_NODES {
            return Err(self.error(
                "node",
                format!(
                    "node index {node} is beyond the limit of {} nodes (indices 0 to {})",
                    crate::mobility::trace::MAX_NODES,
                    crate::mobility::trace::MAX_NODES - 1
                ),
            ));
        }
        if !self.eat(Tok::Close) {
            return Err(self.error(
                "node",
                format!("expected `)` after the node index, found {}", self.found()),
            ));
        }
        Ok(node)
    }

    /// All commands of the line (usually one; Tcl allows several joined by `;`).
    fn commands(&mut self) -> Result<Vec<Command>, InputError> {
        let quotes = self.toks.iter().filter(|t| **t == Tok::Quote).count();
        if quotes % 2 == 1 {
            return Err(self.error(
                "quote",
                "unterminated quote: expected a closing `\"` on the same line",
            ));
        }
        let mut commands = Vec::new();
        loop {
            while self.eat(Tok::Semi) {}
            if self.peek().is_none() {
                return Ok(commands);
            }
            commands.push(self.command(None)?);
            match self.peek() {
                None | Some(Tok::Semi) => {}
                Some(tok) => {
                    return Err(self.error(
                        "command",
                        format!("unexpected {} after the command", tok.describe()),
                    ));
                }
            }
        }
    }

    /// One command; `scheduled` carries the time when inside `$ns_ at T "…"`.
    fn command(&mut self, scheduled: Option<f64>) -> Result<Command, InputError> {
        let head = match self.next() {
            Some(Tok::Word(w)) => w,
            other => {
                let found = other.map_or_else(|| "nothing".to_string(), Tok::describe);
                return Err(self.error(
                    "command",
                    format!("unknown command: found {found}, {EXPECTED_COMMAND}"),
                ));
            }
        };
        match head {
            "$ns_" | "$ns" => {
                if scheduled.is_some() {
                    return Err(self.error("command", "nested `$ns_ at` is not supported"));
                }
                let at = self.word("command", "`at` after `$ns_`")?;
                if at != "at" {
                    return Err(self.error(
                        "command",
                        format!(
                            "expected `at` after `$ns_`, found `{at}` (only `$ns_ at` is supported)"
                        ),
                    ));
                }
                let time = self.non_negative("time", "time")?;
                if let Some(problem) = crate::mobility::trace::time_beyond_limit(time) {
                    return Err(self.error("time", problem));
                }
                if !self.eat(Tok::Quote) {
                    return Err(self.error(
                        "command",
                        format!(
                            "expected a quoted command after the time, found {}",
                            self.found()
                        ),
                    ));
                }
                let inner = self.command(Some(time))?;
                while self.eat(Tok::Semi) {}
                if !self.eat(Tok::Quote) {
                    return Err(self.error(
                        "command",
                        format!(
                            "expected `\"` to close the scheduled command, found {}",
                            self.found()
                        ),
                    ));
                }
                let what = match inner {
                    Command::At { what, .. } => what,
                    Command::God => Scheduled::God,
                    // `command` refuses `set` inside `$ns_ at`; kept total for safety.
                    Command::Init { .. } => {
                        return Err(self.error("command", "scheduled `set` is not supported"));
                    }
                };
                Ok(Command::At { time, what })
            }
            "$node_" | "$node" => {
                let node = self.node_index()?;
                let verb = self.word("command", "`set` or `setdest` after the node")?;
                match verb {
                    "set" => {
                        let axis = match self.word("axis", "X_, Y_ or Z_")? {
                            "X_" => Axis::X,
                            "Y_" => Axis::Y,
                            "Z_" => Axis::Z,
                            other => {
                                return Err(self.error(
                                    "axis",
                                    format!("expected X_, Y_ or Z_, found `{other}`"),
                                ));
                            }
                        };
                        if let Some(time) = scheduled {
                            return Err(self.error(
                                axis.name(),
                                format!(
                                    "scheduled `set {}` at {time} s is not supported: a node's \
                                     position can only be set before the run (t = 0); move it \
                                     with `setdest`",
                                    axis.name()
                                ),
                            ));
                        }
                        let value = self.number(axis.name())?;
                        if axis == Axis::Z && value != 0.0 {
                            return Err(self.error(
                                "Z_",
                                format!(
                                    "expected Z_ 0, found {value}: 3-D traces are not supported"
                                ),
                            ));
                        }
                        Ok(Command::Init { node, axis, value })
                    }
                    "setdest" => {
                        let Some(time) = scheduled else {
                            return Err(self.error(
                                "command",
                                "`setdest` must be scheduled: expected `$ns_ at T \"$node_(i) \
                                 setdest x y v\"`",
                            ));
                        };
                        let x = self.number("x")?;
                        let y = self.number("y")?;
                        let speed = self.non_negative("speed", "speed")?;
                        Ok(Command::At {
                            time,
                            what: Scheduled::Setdest {
                                node,
                                dest: Point::new(x, y),
                                speed,
                            },
                        })
                    }
                    other => Err(self.error(
                        "command",
                        format!("expected `set` or `setdest` after the node, found `{other}`"),
                    )),
                }
            }
            "$god_" | "$god" => {
                let verb = self.word("command", "`set-dist` after `$god_`")?;
                if verb != "set-dist" {
                    return Err(self.error(
                        "command",
                        format!("expected `set-dist` after `$god_`, found `{verb}`"),
                    ));
                }
                self.integer("set-dist", "a node index (non-negative integer)")?;
                self.integer("set-dist", "a node index (non-negative integer)")?;
                self.integer("set-dist", "a hop count (non-negative integer)")?;
                Ok(Command::God)
            }
            other => Err(self.error(
                "command",
                format!("unknown command `{other}`: {EXPECTED_COMMAND}"),
            )),
        }
    }
}

// ---------------------------------------------------------------------------------------
// The whole file
// ---------------------------------------------------------------------------------------

/// A value and the line it came from.
#[derive(Clone, Copy, Debug)]
struct At<T> {
    value: T,
    line: usize,
}

#[derive(Clone, Debug, Default)]
struct InitPosition {
    x: Option<At<f64>>,
    y: Option<At<f64>>,
    z: Option<At<f64>>,
    /// First line mentioning the node in a `set`, where missing coordinates are reported.
    first_line: usize,
}

#[derive(Clone, Copy, Debug)]
struct Event {
    time: f64,
    line: usize,
    /// `None` for god lines, which only count towards the duration.
    setdest: Option<(u32, Point, f64)>,
}

#[derive(Default)]
struct Header {
    nodes: Option<At<u64>>,
    max_x: Option<At<f64>>,
    max_y: Option<At<f64>>,
    duration: Option<At<f64>>,
}

struct Reader<'s> {
    source: &'s str,
    init: BTreeMap<u32, InitPosition>,
    events: Vec<Event>,
    /// Each node's latest `$ns_ at` time so far and its line: a node's own events going
    /// back in time are suspicious, events of different nodes interleaved are not
    /// (BonnMotion's ns-2 export writes the file node by node).
    latest: BTreeMap<u32, At<f64>>,
    /// The trace's length as the caller asked for it (`--duration`), over the file's.
    duration_override: Option<f64>,
    header: Header,
    footer: SetdestFooter,
    has_footer: bool,
    god_lines: usize,
    warnings: Vec<InputWarning>,
}

impl<'s> Reader<'s> {
    fn new(source: &'s str) -> Self {
        Self {
            source,
            init: BTreeMap::new(),
            events: Vec::new(),
            latest: BTreeMap::new(),
            duration_override: None,
            header: Header::default(),
            footer: SetdestFooter::default(),
            has_footer: false,
            god_lines: 0,
            warnings: Vec::new(),
        }
    }

    fn warn(&mut self, line: Option<usize>, field: Option<&str>, message: impl Into<String>) {
        let mut location = match line {
            Some(line) => Location::line(self.source, line),
            None => Location::file(self.source),
        };
        if let Some(field) = field {
            location = location.with_field(field);
        }
        self.warnings.push(InputWarning {
            location,
            message: message.into(),
        });
    }

    fn error(&self, line: usize, field: &str, message: impl Into<String>) -> InputError {
        InputError::new(Location::line(self.source, line).with_field(field), message)
    }

    fn line(&mut self, number: usize, text: &str) -> Result<(), InputError> {
        let trimmed = text.trim_start();
        if let Some(comment) = trimmed.strip_prefix('#') {
            return self.comment(number, comment);
        }
        let mut parser = LineParser {
            toks: tokenize(text),
            pos: 0,
            source: self.source,
            line: number,
        };
        for command in parser.commands()? {
            self.apply(number, command);
        }
        Ok(())
    }

    fn apply(&mut self, line: usize, command: Command) {
        match command {
            Command::Init { node, axis, value } => {
                let entry = self.init.entry(node).or_insert_with(|| InitPosition {
                    first_line: line,
                    ..InitPosition::default()
                });
                // Z_ is checked to be 0 while parsing and carries nothing else, but a
                // repeated Z_ is as suspicious as a repeated X_.
                let slot = match axis {
                    Axis::X => &mut entry.x,
                    Axis::Y => &mut entry.y,
                    Axis::Z => &mut entry.z,
                };
                let previous = slot.replace(At { value, line }).map(|p| p.line);
                if let Some(previous) = previous {
                    self.warn(
                        Some(line),
                        Some(axis.name()),
                        format!(
                            "node {node}: initial {} set again (first on line {previous}); \
                             the later value wins",
                            axis.name()
                        ),
                    );
                }
            }
            Command::God => self.god_lines += 1,
            Command::At { time, what } => {
                if let Scheduled::Setdest { node, .. } = what {
                    match self.latest.get(&node) {
                        Some(latest) if time < latest.value => {
                            let latest = *latest;
                            self.warn(
                                Some(line),
                                Some("time"),
                                format!(
                                    "node {node}: event at {time} s comes after its event at {} \
                                     s (line {}); ns-2 runs events in time order, so it is \
                                     applied in time order",
                                    latest.value, latest.line
                                ),
                            );
                        }
                        _ => {
                            self.latest.insert(node, At { value: time, line });
                        }
                    }
                }
                let setdest = match what {
                    Scheduled::Setdest { node, dest, speed } => Some((node, dest, speed)),
                    Scheduled::God => {
                        self.god_lines += 1;
                        None
                    }
                };
                self.events.push(Event {
                    time,
                    line,
                    setdest,
                });
            }
        }
    }

    /// Reads `key: value` metadata and footer table rows out of a comment.
    fn comment(&mut self, line: usize, text: &str) -> Result<(), InputError> {
        let cells: Vec<&str> = text.split('|').map(str::trim).collect();
        if cells.len() == 3
            && let (Ok(node), Ok(route_changes), Ok(link_changes)) =
                (cells[0].parse::<u32>(), cells[1].parse(), cells[2].parse())
        {
            if node as usize != self.footer.per_node.len() {
                self.warn(
                    Some(line),
                    None,
                    format!(
                        "footer row for node {node} where node {} was expected",
                        self.footer.per_node.len()
                    ),
                );
            }
            self.footer.per_node.push(NodeFooter {
                node,
                route_changes,
                link_changes,
            });
            self.has_footer = true;
            return Ok(());
        }
        for pair in text.split(',') {
            let Some((key, value)) = pair.split_once(':') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            match key.as_str() {
                "max x" | "max y" | "duration" => {
                    let number: f64 = value.parse().map_err(|_| {
                        self.error(line, &key, format!("expected a number, found `{value}`"))
                    })?;
                    let positive = key == "duration";
                    if let Some(problem) =
                        crate::mobility::trace::time_beyond_limit(number).filter(|_| positive)
                    {
                        return Err(self.error(line, &key, problem));
                    }
                    let ok = number.is_finite() && (number > 0.0 || !positive && number == 0.0);
                    if !ok {
                        let what = if positive {
                            "a positive, finite duration in seconds"
                        } else {
                            "a non-negative, finite size in metres"
                        };
                        return Err(self.error(
                            line,
                            &key,
                            format!("expected {what}, found `{value}`"),
                        ));
                    }
                    let slot = match key.as_str() {
                        "max x" => &mut self.header.max_x,
                        "max y" => &mut self.header.max_y,
                        _ => &mut self.header.duration,
                    };
                    *slot = Some(At {
                        value: number,
                        line,
                    });
                }
                "nodes" => match value.parse() {
                    Ok(n) => self.header.nodes = Some(At { value: n, line }),
                    Err(_) => self.warn(
                        Some(line),
                        Some("nodes"),
                        format!("expected a node count, found `{value}`; ignored"),
                    ),
                },
                "destination unreachables" | "route changes" | "link changes" => {
                    self.has_footer = true;
                    match value.parse() {
                        Ok(n) => {
                            let slot = match key.as_str() {
                                "destination unreachables" => {
                                    &mut self.footer.destination_unreachables
                                }
                                "route changes" => &mut self.footer.route_changes,
                                _ => &mut self.footer.link_changes,
                            };
                            *slot = Some(n);
                        }
                        Err(_) => self.warn(
                            Some(line),
                            Some(&key),
                            format!("expected a count, found `{value}`; ignored"),
                        ),
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Ns2File, InputError> {
        // Every node with a `set` needs both coordinates.
        for (&node, init) in &self.init {
            for (missing, axis) in [(init.x.is_none(), "X_"), (init.y.is_none(), "Y_")] {
                if missing {
                    return Err(self.error(
                        init.first_line,
                        axis,
                        format!(
                            "node {node} has no initial `set {axis}`: every node needs X_ and \
                             Y_ at t = 0"
                        ),
                    ));
                }
            }
        }
        // A setdest needs somewhere to start from.
        if let Some((event, node)) = self
            .events
            .iter()
            .filter_map(|e| e.setdest.map(|(node, ..)| (e, node)))
            .find(|(_, node)| !self.init.contains_key(node))
        {
            return Err(self.error(
                event.line,
                "node",
                format!(
                    "setdest for node {node}, which has no initial position: expected \
                     `$node_({node}) set X_ …` and `set Y_ …`"
                ),
            ));
        }
        let count = self.init.len();
        if count == 0 {
            return Err(InputError::new(
                Location::file(self.source),
                "no nodes: expected `$node_(i) set X_ x` and `set Y_ y` lines",
            ));
        }
        // Nodes must be exactly 0..n: a gap usually means a truncated or merged file.
        if let Some((missing, (&after, init))) = self
            .init
            .iter()
            .enumerate()
            .find(|(index, (node, _))| **node as usize != *index)
        {
            return Err(self.error(
                init.first_line,
                "node",
                format!(
                    "node {missing} is missing: nodes must be numbered 0..n without gaps, \
                     but node {after} is defined here"
                ),
            ));
        }
        if let Some(nodes) = self.header.nodes
            && nodes.value != count as u64
        {
            self.warn(
                Some(nodes.line),
                Some("nodes"),
                format!(
                    "the header says {} nodes but the file defines {count}",
                    nodes.value
                ),
            );
        }

        // The trace's length.
        let last_event = self.events.iter().map(|e| e.time).fold(0.0, f64::max);
        let duration = match (self.duration_override, self.header.duration) {
            (Some(d), _) => d,
            (None, Some(d)) => d.value,
            (None, None) if last_event > 0.0 => last_event,
            (None, None) => {
                return Err(InputError::new(
                    Location::file(self.source),
                    "cannot tell how long the trace lasts: expected a `$ns_ at` event after \
                     t = 0 or a `# duration: T` header comment",
                ));
            }
        };
        let late: Vec<usize> = self
            .events
            .iter()
            .filter(|e| e.time > duration)
            .map(|e| e.line)
            .collect();
        let given = match (self.duration_override, self.header.duration) {
            (Some(_), _) => Some("by --duration".to_string()),
            (None, Some(header)) => Some(format!("on line {}", header.line)),
            (None, None) => None,
        };
        if let (Some(&first), Some(given)) = (late.first(), given) {
            self.warn(
                Some(first),
                Some("time"),
                format!(
                    "{} event(s) after the duration {duration} s given {given} are ignored \
                     (this is the first)",
                    late.len(),
                ),
            );
        }

        let (area, inferred) = self.area();
        if !inferred {
            self.check_area(area);
        }

        // Apply the events per node in time order; the stable sort keeps file order for ties.
        let mut events = std::mem::take(&mut self.events);
        events.sort_by(|a, b| a.time.total_cmp(&b.time));
        let mut builders: Vec<LegBuilder> = self
            .init
            .values()
            .map(|init| {
                let x = init.x.map_or(0.0, |a| a.value);
                let y = init.y.map_or(0.0, |a| a.value);
                LegBuilder::new(Point::new(x, y))
            })
            .collect();
        for event in events.iter().filter(|e| e.time <= duration) {
            if let Some((node, dest, speed)) = event.setdest
                && let Some(builder) = builders.get_mut(node as usize)
            {
                builder.setdest(event.time, dest, speed);
            }
        }
        let legs = builders
            .into_iter()
            .map(|b| b.finish(duration))
            .collect::<Vec<_>>();
        let trace = Trace::from_legs(area, duration, legs).map_err(|e| {
            InputError::new(
                Location::file(self.source),
                format!("the movements do not form a valid trace: {e}"),
            )
        })?;
        Ok(Ns2File {
            trace,
            footer: self.has_footer.then_some(self.footer),
            god_lines: self.god_lines,
            warnings: self.warnings,
        })
    }

    /// The header's area, or (`true`) one inferred from every coordinate in the file.
    ///
    /// Inferred, the area is `max x` × `max y` from the origin, as the trace model has it,
    /// and no position is flagged as outside it: coordinates below 0 (SUMO's exports put
    /// the outer lanes' centres at −1.6 m) are the file's own bounding box, which the
    /// warning states. Links depend on distances only, so this is exact either way.
    fn area(&mut self) -> (Area, bool) {
        if let (Some(w), Some(h)) = (self.header.max_x, self.header.max_y) {
            return (
                Area {
                    width: w.value,
                    height: h.value,
                },
                false,
            );
        }
        let init = self
            .init
            .values()
            .filter_map(|i| Some(Point::new(i.x?.value, i.y?.value)));
        let dests = self
            .events
            .iter()
            .filter_map(|e| e.setdest.map(|(_, dest, _)| dest));
        let (mut min_x, mut min_y) = (f64::INFINITY, f64::INFINITY);
        let (mut max_x, mut max_y) = (0.0_f64, 0.0_f64);
        for p in init.chain(dests) {
            (min_x, min_y) = (min_x.min(p.x), min_y.min(p.y));
            (max_x, max_y) = (max_x.max(p.x), max_y.max(p.y));
        }
        let area = Area {
            width: self.header.max_x.map_or(max_x, |w| w.value),
            height: self.header.max_y.map_or(max_y, |h| h.value),
        };
        let (min_x, min_y) = (min_x.min(0.0) + 0.0, min_y.min(0.0) + 0.0);
        self.warn(
            None,
            None,
            format!(
                "no `max x`/`max y` header comment: the area is taken as the bounding box of \
                 all positions, x from {min_x} to {} m and y from {min_y} to {} m",
                area.width, area.height
            ),
        );
        let inferred = self.header.max_x.is_none() && self.header.max_y.is_none();
        (area, inferred)
    }

    fn check_area(&mut self, area: Area) {
        let mut outside = Vec::new();
        for (&node, init) in &self.init {
            for (axis, coordinate, limit) in
                [("X_", init.x, area.width), ("Y_", init.y, area.height)]
            {
                if let Some(c) = coordinate
                    && !(c.value >= -AREA_SLACK && c.value <= limit + AREA_SLACK)
                {
                    outside.push((
                        c.line,
                        axis,
                        format!(
                            "node {node}: initial {axis} {} lies outside the area {} × {} m",
                            c.value, area.width, area.height
                        ),
                    ));
                }
            }
        }
        for event in &self.events {
            if let Some((node, dest, _)) = event.setdest
                && !area.contains(dest, AREA_SLACK)
            {
                outside.push((
                    event.line,
                    "destination",
                    format!(
                        "node {node}: destination {dest} lies outside the area {} × {} m",
                        area.width, area.height
                    ),
                ));
            }
        }
        outside.sort_by_key(|(line, ..)| *line);
        for (line, field, message) in outside {
            self.warn(Some(line), Some(field), message);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Legs
// ---------------------------------------------------------------------------------------

/// What a node is doing since `start`.
#[derive(Clone, Copy, Debug)]
enum Motion {
    Paused,
    Moving {
        velocity: Point,
        dest: Point,
        arrival: f64,
        trip: f64,
    },
}

/// Turns one node's time-ordered setdests into contiguous legs.
struct LegBuilder {
    legs: Vec<Leg>,
    start: f64,
    origin: Point,
    motion: Motion,
}

impl LegBuilder {
    fn new(initial: Point) -> Self {
        Self {
            legs: Vec::new(),
            start: 0.0,
            origin: initial,
            motion: Motion::Paused,
        }
    }

    /// Appends a leg, dropping empty ones and merging a pause into a preceding pause.
    fn push(&mut self, start: f64, end: f64, origin: Point, velocity: Point) {
        if end <= start {
            return;
        }
        let leg = Leg {
            start,
            end,
            origin,
            velocity,
        };
        if let Some(last) = self.legs.last_mut()
            && last.is_pause()
            && leg.is_pause()
            && last.end == start
        {
            last.end = end;
            return;
        }
        self.legs.push(leg);
    }

    /// Records the motion up to `t` and returns the position at `t` (see the snap rule).
    fn advance(&mut self, t: f64) -> Point {
        let (start, origin) = (self.start, self.origin);
        if t <= start {
            return origin;
        }
        match self.motion {
            Motion::Paused => {
                self.push(start, t, origin, Point::default());
                origin
            }
            Motion::Moving {
                velocity,
                dest,
                arrival,
                trip,
            } => {
                let tolerance = SNAP_SECONDS + SNAP_RELATIVE * trip;
                // The second condition only matters for trips of a few nanoseconds, where
                // stretching the leg to the event could multiply the speed.
                if (arrival - t).abs() <= tolerance && t - start >= 0.5 * trip {
                    let dt = t - start;
                    let exact = Point::new((dest.x - origin.x) / dt, (dest.y - origin.y) / dt);
                    self.push(start, t, origin, exact);
                    dest
                } else if arrival < t {
                    self.push(start, arrival, origin, velocity);
                    self.push(arrival, t, dest, Point::default());
                    dest
                } else {
                    let leg = Leg {
                        start,
                        end: t,
                        origin,
                        velocity,
                    };
                    self.push(start, t, origin, velocity);
                    leg.end_position()
                }
            }
        }
    }

    fn setdest(&mut self, t: f64, dest: Point, speed: f64) {
        let position = self.advance(t);
        let distance = position.distance(dest);
        let trip = if speed > 0.0 { distance / speed } else { 0.0 };
        self.start = self.start.max(t);
        self.origin = position;
        self.motion = if trip <= SNAP_SECONDS {
            Motion::Paused
        } else {
            let scale = speed / distance;
            Motion::Moving {
                velocity: Point::new((dest.x - position.x) * scale, (dest.y - position.y) * scale),
                dest,
                arrival: t + trip,
                trip,
            }
        };
    }

    fn finish(mut self, duration: f64) -> Vec<Leg> {
        self.advance(duration);
        self.legs
    }
}

// ---------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------

/// `{:.12}` without a negative zero, so equal traces print equal bytes.
fn fixed(v: f64) -> String {
    format!("{:.12}", v + 0.0)
}

/// Writes `trace` in setdest's layout with 12 decimals.
pub fn write(trace: &Trace, out: &mut dyn Write) -> io::Result<()> {
    // Header values use the shortest exact representation: they are read back as is.
    writeln!(out, "#")?;
    writeln!(
        out,
        "# nodes: {}, max x: {}, max y: {}, duration: {}",
        trace.node_count(),
        trace.area.width,
        trace.area.height,
        trace.duration
    )?;
    writeln!(out, "# generated by linkrev {}", env!("CARGO_PKG_VERSION"))?;
    writeln!(out, "#")?;
    for (node, trajectory) in trace.nodes.iter().enumerate() {
        let p = trajectory.legs()[0].origin;
        writeln!(out, "$node_({node}) set X_ {}", fixed(p.x))?;
        writeln!(out, "$node_({node}) set Y_ {}", fixed(p.y))?;
        writeln!(out, "$node_({node}) set Z_ {}", fixed(0.0))?;
    }
    let mut events: Vec<(f64, usize, Point, f64)> = Vec::with_capacity(trace.total_legs());
    for (node, trajectory) in trace.nodes.iter().enumerate() {
        for leg in trajectory.legs() {
            if leg.is_pause() {
                if leg.start > 0.0 {
                    events.push((leg.start, node, leg.origin, 0.0));
                }
            } else {
                events.push((leg.start, node, leg.end_position(), leg.speed()));
            }
        }
    }
    events.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    for (time, node, dest, speed) in events {
        writeln!(
            out,
            "$ns_ at {} \"$node_({node}) setdest {} {} {}\"",
            fixed(time),
            fixed(dest.x),
            fixed(dest.y),
            fixed(speed)
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizer_splits_node_references_and_drops_comments() {
        let toks = tokenize("$ns at 1 \"$node_( 3 ) setdest 1 2 3\" ;# done");
        assert_eq!(
            toks,
            vec![
                Tok::Word("$ns"),
                Tok::Word("at"),
                Tok::Word("1"),
                Tok::Quote,
                Tok::Word("$node_"),
                Tok::Open,
                Tok::Word("3"),
                Tok::Close,
                Tok::Word("setdest"),
                Tok::Word("1"),
                Tok::Word("2"),
                Tok::Word("3"),
                Tok::Quote,
                Tok::Semi,
            ]
        );
        assert!(tokenize("   # only a comment").is_empty());
    }

    #[test]
    fn leg_builder_snaps_arrivals_to_the_next_event() {
        let mut b = LegBuilder::new(Point::new(0.0, 0.0));
        b.setdest(0.0, Point::new(10.0, 0.0), 1.0);
        // Arrival at 10 s is recomputed a hair late: it must not create a sliver of motion.
        b.setdest(10.0 - 1e-10, Point::new(0.0, 0.0), 0.0);
        let legs = b.finish(20.0);
        assert_eq!(legs.len(), 2);
        assert_eq!(legs[0].end, 10.0 - 1e-10);
        assert_eq!(legs[1].origin, Point::new(10.0, 0.0));
        assert!(legs[1].is_pause());
    }

    #[test]
    fn fixed_never_prints_negative_zero() {
        assert_eq!(fixed(-0.0), "0.000000000000");
        assert_eq!(fixed(1.5), "1.500000000000");
    }
}
