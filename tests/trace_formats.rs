//! Trace formats: the shipped setdest traces, malformed and tolerant ns-2 input, setdest
//! semantics, writer round trips, and BonnMotion.

use linkrev::input::InputError;
use linkrev::mobility::format::{TraceFormat, read_trace, write_trace};
use linkrev::mobility::ns2::{self, Ns2File};
use linkrev::mobility::{Point, Trace, bonnmotion};
use std::io::Write;
use std::path::{Path, PathBuf};

const SHIPPED: [(&str, usize, f64, f64, u64); 3] = [
    (
        "setdest_v1_n20_p10_M10_t200_800x400.tcl",
        20,
        800.0,
        400.0,
        384,
    ),
    (
        "setdest_v2_n30_s1_m1_M15_P2_p5_t300_1000x500.tcl",
        30,
        1000.0,
        500.0,
        1470,
    ),
    (
        "setdest_v2_n50_s2_m2_M10_P1_p0_t300_1500x300.tcl",
        50,
        1500.0,
        300.0,
        3354,
    ),
];

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
}

fn parse(text: &str) -> Ns2File {
    match ns2::parse(text, "test.tcl") {
        Ok(file) => file,
        Err(e) => panic!("{e}"),
    }
}

fn parse_err(text: &str) -> InputError {
    match ns2::parse(text, "test.tcl") {
        Ok(_) => panic!("expected an error for:\n{text}"),
        Err(e) => e,
    }
}

/// Asserts an error's line, field and a phrase of its message.
#[track_caller]
fn assert_error(text: &str, line: Option<usize>, field: Option<&str>, phrase: &str) {
    let e = parse_err(text);
    assert_eq!(e.location.file, "test.tcl", "{e}");
    assert_eq!(e.location.line, line, "{e}");
    assert_eq!(e.location.field.as_deref(), field, "{e}");
    assert!(e.message.contains(phrase), "`{phrase}` not in: {e}");
}

fn near(a: Point, b: Point) -> bool {
    a.distance(b) < 1e-9
}

fn written(trace: &Trace) -> String {
    let mut out = Vec::new();
    ns2::write(trace, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

// ---------------------------------------------------------------------------------------
// The shipped setdest traces
// ---------------------------------------------------------------------------------------

#[test]
fn shipped_traces_parse_with_their_footers() {
    for (name, nodes, width, height, links) in SHIPPED {
        let file = ns2::read(&shipped(name)).unwrap();
        let trace = &file.trace;
        assert_eq!(trace.node_count(), nodes, "{name}");
        assert_eq!(trace.area.width, width, "{name}");
        assert_eq!(trace.area.height, height, "{name}");
        assert!(file.warnings.is_empty(), "{name}: {:?}", file.warnings);
        assert!(file.god_lines > nodes * (nodes - 1) / 2, "{name}");
        let footer = file.footer.expect("setdest footer");
        assert_eq!(footer.link_changes, Some(links), "{name}");
        assert!(footer.destination_unreachables.is_some(), "{name}");
        assert!(footer.route_changes.is_some(), "{name}");
        assert_eq!(footer.per_node.len(), nodes, "{name}");
        for (i, row) in footer.per_node.iter().enumerate() {
            assert_eq!(row.node as usize, i, "{name}");
        }
        // Each link change has two endpoints, and the table counts it at both.
        let sum: u64 = footer.per_node.iter().map(|r| r.link_changes).sum();
        assert_eq!(sum, 2 * links, "{name}");
        // setdest leaves the duration out of its header: the last event time stands in.
        assert!(
            trace.duration > 0.9 * 200.0 && trace.duration < 300.0,
            "{name}"
        );
    }
}

#[test]
fn shipped_v1_trace_starts_with_a_pause_and_ends_at_the_last_event() {
    let file = ns2::read(&shipped(SHIPPED[0].0)).unwrap();
    let trace = &file.trace;
    assert_eq!(trace.duration, 199.233555445137);
    // v1: every node pauses `-p 10` seconds first, at its initial position.
    let first = trace.nodes[0].legs()[0];
    assert!(first.is_pause());
    assert_eq!(first.end, 10.0);
    assert_eq!(first.origin, Point::new(738.463152758855, 22.003734711738));
    // Node 0's first trip: towards (569.07, 250.08) at 3.50 m/s from t = 10.
    let second = trace.nodes[0].legs()[1];
    assert!((second.speed() - 3.500245089655).abs() < 1e-12);
}

#[test]
fn read_trace_reports_format_and_footer() {
    let loaded = read_trace(&shipped(SHIPPED[2].0)).unwrap();
    assert_eq!(loaded.format, TraceFormat::Ns2);
    assert_eq!(loaded.trace.node_count(), 50);
    assert_eq!(loaded.footer.unwrap().link_changes, Some(3354));
}

#[test]
fn missing_file_is_a_file_error() {
    let e = ns2::read(Path::new("/nonexistent/trace.tcl")).unwrap_err();
    assert_eq!(e.location.line, None);
    assert!(e.message.contains("no such file"), "{e}");
    let e = read_trace(Path::new("/nonexistent/x.movements")).unwrap_err();
    assert!(e.message.contains("params"), "{e}");
}

// ---------------------------------------------------------------------------------------
// Malformed ns-2 input: every error names its line, field and what was expected
// ---------------------------------------------------------------------------------------

const TWO_NODES: &str = "\
# nodes: 2, max x: 100.00, max y: 100.00
$node_(0) set X_ 10.0
$node_(0) set Y_ 10.0
$node_(0) set Z_ 0.0
$node_(1) set X_ 20.0
$node_(1) set Y_ 20.0
$node_(1) set Z_ 0.0
";

/// TWO_NODES followed by `tail` (whose first line is line 8).
fn with_tail(tail: &str) -> String {
    format!("{TWO_NODES}{tail}")
}

#[test]
fn error_bad_number() {
    assert_error(
        "$node_(0) set X_ 1.2.3\n$node_(0) set Y_ 1\n",
        Some(1),
        Some("X_"),
        "expected a number, found `1.2.3`",
    );
    assert_error(
        &with_tail("$ns_ at 1.0 \"$node_(0) setdest 5 abc 1\"\n"),
        Some(8),
        Some("y"),
        "expected a number",
    );
}

#[test]
fn error_nan_and_infinity() {
    assert_error(
        &with_tail("$ns_ at 1.0 \"$node_(0) setdest nan 5 1\"\n"),
        Some(8),
        Some("x"),
        "finite",
    );
    assert_error(
        &with_tail("$ns_ at inf \"$node_(0) setdest 5 5 1\"\n"),
        Some(8),
        Some("time"),
        "finite",
    );
}

#[test]
fn error_negative_time() {
    assert_error(
        &with_tail("$ns_ at -1.5 \"$node_(0) setdest 5 5 1\"\n"),
        Some(8),
        Some("time"),
        "non-negative time",
    );
}

#[test]
fn error_negative_speed() {
    assert_error(
        &with_tail("$ns_ at 1.0 \"$node_(1) setdest 5 5 -2\"\n"),
        Some(8),
        Some("speed"),
        "non-negative speed",
    );
}

#[test]
fn error_missing_y() {
    let text = TWO_NODES.replace("$node_(1) set Y_ 20.0\n", "");
    // Reported where node 1 is first set.
    assert_error(&text, Some(5), Some("Y_"), "node 1 has no initial `set Y_`");
    let text = TWO_NODES.replace("$node_(0) set X_ 10.0\n", "");
    assert_error(&text, Some(2), Some("X_"), "node 0 has no initial `set X_`");
}

#[test]
fn error_node_gap_names_the_missing_index() {
    let text = with_tail("$node_(3) set X_ 1\n$node_(3) set Y_ 1\n");
    assert_error(&text, Some(8), Some("node"), "node 2 is missing");
}

#[test]
fn error_setdest_for_unknown_node() {
    assert_error(
        &with_tail(
            "$ns_ at 1.0 \"$node_(0) setdest 5 5 1\"\n$ns_ at 2.0 \"$node_(2) setdest 5 5 1\"\n",
        ),
        Some(9),
        Some("node"),
        "setdest for node 2, which has no initial position",
    );
}

#[test]
fn error_nonzero_z() {
    let text = TWO_NODES.replace("$node_(1) set Z_ 0.0", "$node_(1) set Z_ 3.5");
    assert_error(&text, Some(7), Some("Z_"), "3-D traces are not supported");
}

#[test]
fn error_unterminated_quote() {
    assert_error(
        &with_tail("$ns_ at 1.0 \"$node_(0) setdest 5 5 1\n"),
        Some(8),
        Some("quote"),
        "unterminated quote",
    );
}

#[test]
fn error_unknown_command() {
    assert_error(
        &with_tail("set opt(x) 100\n"),
        Some(8),
        Some("command"),
        "unknown command `set`",
    );
    assert_error(
        &with_tail("$node_(0) move 1 2\n"),
        Some(8),
        Some("command"),
        "expected `set` or `setdest`",
    );
    assert_error(
        &with_tail("$ns_ run\n"),
        Some(8),
        Some("command"),
        "expected `at`",
    );
}

#[test]
fn error_empty_file_and_no_nodes() {
    assert_error("", None, None, "empty");
    assert_error("  \n\n\t\n", None, None, "empty");
    assert_error("# nodes: 0\n#\n", None, None, "no nodes");
    assert_error("$god_ set-dist 0 1 2\n", None, None, "no nodes");
}

#[test]
fn error_scheduled_set_is_unsupported() {
    assert_error(
        &with_tail("$ns_ at 5.0 \"$node_(0) set X_ 50.0\"\n"),
        Some(8),
        Some("X_"),
        "scheduled `set X_` at 5 s is not supported",
    );
}

#[test]
fn error_bad_node_index() {
    assert_error(
        "$node_(a) set X_ 1\n",
        Some(1),
        Some("node"),
        "expected a node index",
    );
    assert_error(
        "$node_(-1) set X_ 1\n",
        Some(1),
        Some("node"),
        "expected a node index",
    );
    assert_error("$node_(1 set X_ 1\n", Some(1), Some("node"), "expected `)`");
}

#[test]
fn error_unscheduled_setdest_and_trailing_tokens() {
    assert_error(
        &with_tail("$node_(0) setdest 5 5 1\n"),
        Some(8),
        Some("command"),
        "must be scheduled",
    );
    assert_error(
        &with_tail("$ns_ at 1.0 \"$node_(0) setdest 5 5 1 7\"\n"),
        Some(8),
        Some("command"),
        "expected `\"` to close",
    );
    assert_error(
        &with_tail("$ns_ at 1.0 \"$node_(0) setdest 5 5 1\" extra\n"),
        Some(8),
        Some("command"),
        "unexpected `extra`",
    );
    assert_error(
        &with_tail("$ns_ at 1.0 \"$node_(0) setdest 5 5\"\n"),
        Some(8),
        Some("speed"),
        "expected a number, found `\"`",
    );
}

#[test]
fn error_bad_god_line() {
    assert_error(
        &with_tail("$god_ set-dist 0 1 x\n"),
        Some(8),
        Some("set-dist"),
        "hop count",
    );
    assert_error(
        &with_tail("$god_ set-dist 0 -1 1\n"),
        Some(8),
        Some("set-dist"),
        "node index",
    );
}

#[test]
fn error_bad_header_values() {
    assert_error(
        "# max x: wide, max y: 10\n$node_(0) set X_ 1\n",
        Some(1),
        Some("max x"),
        "expected a number",
    );
    assert_error(
        &format!("# duration: 0\n{TWO_NODES}"),
        Some(1),
        Some("duration"),
        "positive",
    );
}

#[test]
fn error_no_duration() {
    // Only t = 0 events and no header duration: the trace would last 0 s.
    assert_error(
        &with_tail("$ns_ at 0.0 \"$node_(0) setdest 5 5 1\"\n"),
        None,
        None,
        "how long the trace lasts",
    );
}

#[test]
fn error_display_is_file_line_field_message() {
    let e = parse_err(&with_tail("$ns_ at 1.0 \"$node_(1) setdest 5 5 -2\"\n"));
    assert_eq!(
        e.to_string(),
        "test.tcl:8: speed: expected a non-negative speed, found -2"
    );
}

// ---------------------------------------------------------------------------------------
// Warnings
// ---------------------------------------------------------------------------------------

#[test]
fn warning_events_out_of_order_are_sorted() {
    let file = parse(&with_tail(
        "$ns_ at 5.0 \"$node_(0) setdest 60 13 1\"\n\
         $ns_ at 2.0 \"$node_(0) setdest 10 60 1\"\n\
         $ns_ at 10.0 \"$node_(1) setdest 20 20 0\"\n",
    ));
    assert_eq!(file.warnings.len(), 1, "{:?}", file.warnings);
    let w = &file.warnings[0];
    assert_eq!(w.location.line, Some(9));
    assert_eq!(w.location.field.as_deref(), Some("time"));
    assert!(w.message.contains("line 8"), "{w}");
    // Applied in time order: north from t = 2, then east from t = 5.
    let trace = &file.trace;
    assert!(near(trace.position(0, 5.0), Point::new(10.0, 13.0)));
    assert!(near(trace.position(0, 10.0), Point::new(15.0, 13.0)));
}

#[test]
fn warning_positions_and_destinations_outside_the_area() {
    let text = TWO_NODES.replace("$node_(1) set X_ 20.0", "$node_(1) set X_ 150.0");
    let file = parse(&format!(
        "{text}$ns_ at 1.0 \"$node_(0) setdest 50 -3 1\"\n\
         $ns_ at 2.0 \"$node_(0) setdest 100.0000000001 100 1\"\n"
    ));
    let lines: Vec<_> = file
        .warnings
        .iter()
        .map(|w| (w.location.line, w.location.field.clone()))
        .collect();
    assert_eq!(
        lines,
        vec![
            (Some(5), Some("X_".to_string())),
            (Some(8), Some("destination".to_string())),
        ],
        "{:?}",
        file.warnings
    );
    assert!(file.warnings[0].message.contains("outside the area"));
}

#[test]
fn warning_duplicate_initial_position_later_wins() {
    let file = parse(&with_tail(
        "$node_(0) set X_ 42.0\n$ns_ at 1.0 \"$node_(0) setdest 42 10 0\"\n",
    ));
    assert_eq!(file.warnings.len(), 1, "{:?}", file.warnings);
    let w = &file.warnings[0];
    assert_eq!(w.location.line, Some(8));
    assert_eq!(w.location.field.as_deref(), Some("X_"));
    assert!(w.message.contains("line 2"), "{w}");
    assert_eq!(file.trace.position(0, 0.0), Point::new(42.0, 10.0));
}

#[test]
fn warning_no_area_header_uses_the_bounding_box() {
    let text = with_tail("$ns_ at 1.0 \"$node_(0) setdest 70 30 1\"\n")
        .replace("# nodes: 2, max x: 100.00, max y: 100.00", "# nodes: 2");
    let file = parse(&text);
    assert_eq!(file.trace.area.width, 70.0);
    assert_eq!(file.trace.area.height, 30.0);
    assert_eq!(file.warnings.len(), 1);
    assert_eq!(file.warnings[0].location.line, None);
    assert!(file.warnings[0].message.contains("bounding box"));
}

#[test]
fn warning_header_node_count_and_late_events() {
    let text = with_tail(
        "$ns_ at 1.0 \"$node_(0) setdest 70 30 1\"\n$ns_ at 9.0 \"$node_(0) setdest 0 0 1\"\n",
    )
    .replace("# nodes: 2,", "# nodes: 3, duration: 5,");
    let file = parse(&text);
    assert_eq!(file.trace.duration, 5.0);
    let lines: Vec<_> = file.warnings.iter().map(|w| w.location.line).collect();
    assert_eq!(lines, vec![Some(1), Some(9)], "{:?}", file.warnings);
    assert!(file.warnings[1].message.contains("ignored"));
}

// ---------------------------------------------------------------------------------------
// Tolerant spellings
// ---------------------------------------------------------------------------------------

const CANONICAL: &str = "\
#
# nodes: 3, max x: 300.00, max y: 200.00
#
$node_(0) set X_ 10.25
$node_(0) set Y_ 20.50
$node_(0) set Z_ 0.00
$node_(1) set X_ 100.00
$node_(1) set Y_ 100.00
$node_(1) set Z_ 0.00
$node_(2) set X_ 250.75
$node_(2) set Y_ 150.00
$node_(2) set Z_ 0.00
$god_ set-dist 0 1 1
$ns_ at 0.00 \"$node_(1) setdest 150.00 100.00 5.00\"
$ns_ at 3.50 \"$node_(0) setdest 200.00 20.50 2.50\"
$ns_ at 10.00 \"$node_(1) setdest 150.00 100.00 0.00\"
$ns_ at 12.00 \"$god_ set-dist 0 1 2\"
$ns_ at 20.00 \"$node_(2) setdest 0.00 0.00 10.00\"
$ns_ at 40.00 \"$node_(1) setdest 100.00 180.00 4.00\"
";

const VARIANT: &str = "\
# a hand-edited copy: ns-3 style spellings
#   nodes: 3, max x: 300, max y: 200

$ns   at 0  \"$node( 1 ) setdest 150 100 5\" ;
$ns_ at 3.5 \"$node_(0)   setdest 200.0 20.5 2.5\"  ;# heading east
  $ns_ at 10 \"$node_(1) setdest 150.000000000000 100 0\"
$ns_ at 12 \"$god set-dist 0 1 2\";
$god_ set-dist 0 1 1
\t$ns_ at 20.000 \"$node_( 2) setdest 0 0 10.0\"
$ns_ at 40 \"$node_(1 ) setdest 100 180 4\"
# initial positions at the end, as ns-3 accepts
$node_(2) set X_ 250.75; $node_(2) set Y_ 150
$node_( 0 ) set X_ 10.25
$node_(0) set Y_   20.5
$node(1) set X_ 100
$node_(1) set Y_ 100 ;
$node_(1) set Z_ 0
";

#[test]
fn tolerant_spellings_parse_to_the_canonical_trace() {
    let canonical = parse(CANONICAL);
    let variant = parse(VARIANT);
    assert!(canonical.warnings.is_empty(), "{:?}", canonical.warnings);
    assert!(variant.warnings.is_empty(), "{:?}", variant.warnings);
    assert_eq!(variant.trace, canonical.trace);
    assert_eq!(canonical.god_lines, 2);
    assert_eq!(variant.god_lines, 2);
    assert_eq!(canonical.trace.duration, 40.0);
    // CRLF line endings too.
    let crlf = parse(&CANONICAL.replace('\n', "\r\n"));
    assert_eq!(crlf.trace, canonical.trace);
}

// ---------------------------------------------------------------------------------------
// setdest semantics
// ---------------------------------------------------------------------------------------

fn one_node(events: &str, duration: f64) -> Trace {
    parse(&format!(
        "# max x: 1000, max y: 1000, duration: {duration}\n\
         $node_(0) set X_ 0\n$node_(0) set Y_ 0\n{events}"
    ))
    .trace
}

#[test]
fn interrupted_trip_turns_where_the_node_is() {
    let trace = one_node(
        "$ns_ at 0 \"$node_(0) setdest 100 0 10\"\n\
         $ns_ at 5 \"$node_(0) setdest 50 50 5\"\n",
        20.0,
    );
    assert!(near(trace.position(0, 5.0), Point::new(50.0, 0.0)));
    assert!(near(trace.position(0, 10.0), Point::new(50.0, 25.0)));
    assert!(near(trace.position(0, 15.0), Point::new(50.0, 50.0)));
    assert!(near(trace.position(0, 20.0), Point::new(50.0, 50.0)));
    let legs = trace.nodes[0].legs();
    assert_eq!(legs.len(), 3);
    assert_eq!((legs[0].start, legs[0].end), (0.0, 5.0));
    assert_eq!((legs[1].start, legs[1].end), (5.0, 15.0));
    assert!(legs[2].is_pause());
    assert_eq!(legs[2].end, 20.0);
}

#[test]
fn zero_speed_is_a_pause_where_the_node_is() {
    // The printed destination of a pause is ignored: the node stops where it is.
    let trace = one_node(
        "$ns_ at 0 \"$node_(0) setdest 100 0 10\"\n\
         $ns_ at 3 \"$node_(0) setdest 999 999 0\"\n\
         $ns_ at 8 \"$node_(0) setdest 30 40 10\"\n",
        20.0,
    );
    let legs = trace.nodes[0].legs();
    assert_eq!(legs.len(), 4);
    assert!(legs[1].is_pause());
    assert_eq!((legs[1].start, legs[1].end), (3.0, 8.0));
    assert!(near(trace.position(0, 6.0), Point::new(30.0, 0.0)));
    assert!(near(trace.position(0, 12.0), Point::new(30.0, 40.0)));
    assert!(legs[3].is_pause());
}

#[test]
fn early_arrival_adds_a_pause_and_pauses_merge() {
    let trace = one_node(
        "$ns_ at 0 \"$node_(0) setdest 10 0 1\"\n\
         $ns_ at 20 \"$node_(0) setdest 10 0 0\"\n\
         $ns_ at 25 \"$node_(0) setdest 10 10 2\"\n",
        40.0,
    );
    let legs = trace.nodes[0].legs();
    // Moving to t = 10, paused 10..25 (arrival pause and explicit pause merged),
    // moving 25..30, paused to the end.
    assert_eq!(legs.len(), 4, "{legs:?}");
    assert_eq!((legs[0].start, legs[0].end), (0.0, 10.0));
    assert!(legs[1].is_pause());
    assert_eq!((legs[1].start, legs[1].end), (10.0, 25.0));
    assert_eq!(legs[1].origin, Point::new(10.0, 0.0));
    assert_eq!((legs[2].start, legs[2].end), (25.0, 30.0));
    assert_eq!((legs[3].start, legs[3].end), (30.0, 40.0));
}

#[test]
fn nodes_without_events_and_initial_pauses() {
    let text = with_tail("$ns_ at 4 \"$node_(1) setdest 20 30 1\"\n");
    let trace = parse(&text).trace;
    assert_eq!(trace.duration, 4.0);
    // Node 0 never moves; node 1 is paused until t = 4, the end (the trip is cut).
    assert_eq!(trace.nodes[0].legs().len(), 1);
    assert_eq!(trace.nodes[1].legs().len(), 1);
    assert!(trace.nodes[1].legs()[0].is_pause());
}

#[test]
fn trips_are_cut_at_the_duration() {
    let trace = one_node("$ns_ at 1 \"$node_(0) setdest 100 0 10\"\n", 6.0);
    let legs = trace.nodes[0].legs();
    assert_eq!(legs.len(), 2);
    assert_eq!(legs[1].end, 6.0);
    assert!(near(legs[1].end_position(), Point::new(50.0, 0.0)));
}

#[test]
fn same_time_events_later_line_wins() {
    let trace = one_node(
        "$ns_ at 1 \"$node_(0) setdest 100 0 10\"\n\
         $ns_ at 1 \"$node_(0) setdest 0 100 10\"\n",
        20.0,
    );
    assert!(near(trace.position(0, 2.0), Point::new(0.0, 10.0)));
    assert_eq!(trace.nodes[0].legs().len(), 3);
}

#[test]
fn trip_to_the_current_position_is_a_pause() {
    let trace = one_node("$ns_ at 1 \"$node_(0) setdest 0 0 10\"\n", 5.0);
    assert_eq!(trace.nodes[0].legs().len(), 1);
    assert!(trace.nodes[0].legs()[0].is_pause());
}

#[test]
fn slow_arrival_snaps_to_the_next_event() {
    // setdest computed the arrival from the unrounded speed 0.0123456789007 m/s, and
    // printed it with 12 decimals; recomputed from the printed 0.012345678901 it is about
    // 1e-6 s early. The next trip must start from exactly (500, 0), with no sliver pause.
    let trace = one_node(
        "$ns_ at 0.000000000000 \"$node_(0) setdest 500.000000000000 0.000000000000 0.012345678901\"\n\
         $ns_ at 40500.000366253655 \"$node_(0) setdest 500.000000000000 100.000000000000 1.000000000000\"\n",
        50000.0,
    );
    let legs = trace.nodes[0].legs();
    assert_eq!(legs.len(), 3, "{legs:?}");
    assert_eq!(legs[0].end, 40500.000366253655);
    assert_eq!(legs[1].origin, Point::new(500.0, 0.0));
    assert!(near(legs[0].end_position(), Point::new(500.0, 0.0)));
    assert!((legs[0].speed() - 0.012345678901).abs() < 1e-12);
}

#[test]
fn arrival_just_after_the_end_snaps_to_the_end() {
    // Arrives at 10 + 1e-10 s: the trace ends at 10 and the node is at the destination.
    let trace = one_node("$ns_ at 0 \"$node_(0) setdest 10.000000001 0 1\"\n", 10.0);
    let legs = trace.nodes[0].legs();
    assert_eq!(legs.len(), 1);
    assert!(near(trace.position(0, 10.0), Point::new(10.000000001, 0.0)));
}

// ---------------------------------------------------------------------------------------
// ns-2 writer
// ---------------------------------------------------------------------------------------

#[test]
fn writer_round_trips_the_shipped_traces() {
    for (name, ..) in SHIPPED {
        let original = ns2::read(&shipped(name)).unwrap().trace;
        let text = written(&original);
        let back = parse(&text);
        assert!(back.warnings.is_empty(), "{name}: {:?}", back.warnings);
        assert!(back.footer.is_none());
        let diff = original
            .max_difference(&back.trace)
            .unwrap_or_else(|| panic!("{name}: leg counts differ"));
        assert!(diff < 1e-9, "{name}: {diff}");
        assert_eq!(back.trace.total_legs(), original.total_legs());
        // Deterministic: the same trace gives the same bytes.
        assert_eq!(written(&original), text, "{name}");
    }
}

#[test]
fn writer_layout() {
    let trace = parse(CANONICAL).trace;
    let text = written(&trace);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "#");
    assert_eq!(lines[1], "# nodes: 3, max x: 300, max y: 200, duration: 40");
    assert!(lines[2].starts_with("# generated by linkrev "));
    assert_eq!(lines[3], "#");
    assert_eq!(lines[4], "$node_(0) set X_ 10.250000000000");
    assert_eq!(lines[6], "$node_(0) set Z_ 0.000000000000");
    assert_eq!(
        lines[13],
        "$ns_ at 0.000000000000 \"$node_(1) setdest 150.000000000000 100.000000000000 5.000000000000\""
    );
    // Sorted by (time, node); node 1's arrival pause at t = 10 is explicit, pauses at
    // t = 0 are implied by the initial positions, and node 1's trip at the very end is
    // empty, so it is gone.
    let times: Vec<&str> = lines[13..]
        .iter()
        .map(|l| l.split_whitespace().nth(2).unwrap())
        .collect();
    assert_eq!(
        times,
        [
            "0.000000000000",
            "3.500000000000",
            "10.000000000000",
            "20.000000000000",
        ]
    );
    assert!(parse(&text).trace.max_difference(&trace).unwrap() < 1e-9);
}

#[test]
fn write_trace_and_read_trace_by_extension() {
    let dir = tempfile::tempdir().unwrap();
    let original = ns2::read(&shipped(SHIPPED[1].0)).unwrap().trace;
    for name in [
        "copy.tcl",
        "copy.ns_movements",
        "copy.movements",
        "copy.movements.gz",
    ] {
        let path = dir.path().join(name);
        write_trace(&original, &path).unwrap();
        let loaded = read_trace(&path).unwrap();
        assert_eq!(loaded.format, TraceFormat::from_path(&path));
        assert!(loaded.warnings.is_empty(), "{name}: {:?}", loaded.warnings);
        let diff = original.max_difference(&loaded.trace).unwrap();
        assert!(diff < 1e-9, "{name}: {diff}");
    }
    let e = write_trace(&original, &dir.path().join("missing/dir/x.tcl")).unwrap_err();
    assert!(e.to_string().contains("missing/dir/x.tcl"), "{e}");
}

// ---------------------------------------------------------------------------------------
// BonnMotion
// ---------------------------------------------------------------------------------------

const BM_PARAMS: &str = "\
model=RandomWaypoint
ignore=3600.0
randomSeed=1347984564833
x=100.0
y=50.0
duration=30.0
nn=2
circular=false
dim=3
";

const BM_MOVEMENTS: &str = "0.0 0.0 0.0 10.0 10.0 0.0 20.0 10.0 0.0 \n0.0 5.0 5.0 5.0 5.0 5.0\n";

fn bm_parse(movements: &str, params: &str) -> Result<bonnmotion::BonnMotionFile, InputError> {
    bonnmotion::parse(movements, "s.movements", params, "s.params")
}

#[track_caller]
fn assert_bm_error(
    movements: &str,
    params: &str,
    file: &str,
    line: Option<usize>,
    field: Option<&str>,
    phrase: &str,
) {
    let e = match bm_parse(movements, params) {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    };
    assert_eq!(e.location.file, file, "{e}");
    assert_eq!(e.location.line, line, "{e}");
    assert_eq!(e.location.field.as_deref(), field, "{e}");
    assert!(e.message.contains(phrase), "`{phrase}` not in: {e}");
}

fn check_small_scenario(trace: &Trace) {
    assert_eq!(trace.node_count(), 2);
    assert_eq!(trace.duration, 30.0);
    assert_eq!((trace.area.width, trace.area.height), (100.0, 50.0));
    let legs = trace.nodes[0].legs();
    assert_eq!(legs.len(), 2);
    assert_eq!(legs[0].velocity, Point::new(1.0, 0.0));
    assert!(legs[1].is_pause());
    assert_eq!((legs[1].start, legs[1].end), (10.0, 30.0));
    // Node 1 waits at its only place; the pause to t = 5 and the stay merge.
    assert_eq!(trace.nodes[1].legs().len(), 1);
    assert_eq!(trace.position(1, 29.0), Point::new(5.0, 5.0));
}

#[test]
fn bonnmotion_small_scenario() {
    let file = bm_parse(BM_MOVEMENTS, BM_PARAMS).unwrap();
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    check_small_scenario(&file.trace);
}

#[test]
fn bonnmotion_plain_and_gzipped_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("s.params"), BM_PARAMS).unwrap();
    let plain = dir.path().join("s.movements");
    std::fs::write(&plain, BM_MOVEMENTS).unwrap();
    check_small_scenario(&bonnmotion::read(&plain).unwrap().trace);

    std::fs::write(dir.path().join("g.params"), BM_PARAMS).unwrap();
    let gz = dir.path().join("g.movements.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(BM_MOVEMENTS.as_bytes()).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let loaded = read_trace(&gz).unwrap();
    assert_eq!(loaded.format, TraceFormat::BonnMotion);
    assert!(loaded.footer.is_none());
    check_small_scenario(&loaded.trace);

    // A .gz that is not gzip, and a movements file without params.
    std::fs::write(&gz, BM_MOVEMENTS).unwrap();
    let e = bonnmotion::read(&gz).unwrap_err();
    assert!(e.message.contains("gzip"), "{e}");
    std::fs::remove_file(dir.path().join("s.params")).unwrap();
    let e = bonnmotion::read(&plain).unwrap_err();
    assert!(e.location.file.ends_with("s.params"), "{e}");
    assert!(e.message.contains("missing BonnMotion params"), "{e}");
}

#[test]
fn bonnmotion_three_d_needs_flat_z() {
    let params = format!("{BM_PARAMS}z=20.0\n");
    let flat = "0 0 0 0 10 10 0 0\n0 5 5 0\n";
    let file = bm_parse(flat, &params).unwrap();
    assert_eq!(file.trace.nodes[0].legs()[0].velocity, Point::new(1.0, 0.0));
    assert_bm_error(
        "0 0 0 0 10 10 0 0\n0 5 5 0 8 5 5 2\n",
        &params,
        "s.movements",
        Some(2),
        Some("waypoint 2 z"),
        "3-D movement is not supported",
    );
    // With z, a triple line no longer fits.
    assert_bm_error(
        BM_MOVEMENTS,
        &params,
        "s.movements",
        Some(1),
        Some("waypoints"),
        "multiple of 4",
    );
}

#[test]
fn bonnmotion_errors_are_located() {
    let p = BM_PARAMS;
    let m = "s.movements";
    assert_bm_error(
        "0 0 0 10 10 0\n0 5 x\n",
        p,
        m,
        Some(2),
        Some("waypoint 1 y"),
        "expected a number",
    );
    assert_bm_error(
        "0 0 0 10 NaN 0\n0 5 5\n",
        p,
        m,
        Some(1),
        Some("waypoint 2 x"),
        "finite",
    );
    assert_bm_error(
        "0 0 0 10 10 0 5 10 5\n0 5 5\n",
        p,
        m,
        Some(1),
        Some("waypoint 3 time"),
        "times must increase",
    );
    assert_bm_error(
        "0 0 0 10 10 0\n1 5 5\n",
        p,
        m,
        Some(2),
        Some("waypoint 1 time"),
        "first waypoint at time 0",
    );
    assert_bm_error(
        "0 0 0 10 10\n0 5 5\n",
        p,
        m,
        Some(1),
        Some("waypoints"),
        "not a multiple of 3",
    );
    assert_bm_error(
        "0 0 0 10 10 0 10 20 0\n0 5 5\n",
        p,
        m,
        Some(1),
        Some("waypoint 3 time"),
        "jump",
    );
    assert_bm_error(
        "0 0 0\n\n0 5 5\n",
        &p.replace("nn=2", "nn=3"),
        m,
        Some(2),
        Some("waypoints"),
        "no waypoints",
    );
    assert_bm_error(
        "0 0 0\n",
        p,
        "s.params",
        Some(7),
        Some("nn"),
        "nn=2 but s.movements has 1 node lines",
    );
    assert_bm_error("", p, m, None, None, "no nodes");
    assert_bm_error(
        BM_MOVEMENTS,
        &p.replace("x=100.0\n", ""),
        "s.params",
        None,
        Some("x"),
        "missing `x=`",
    );
    assert_bm_error(
        BM_MOVEMENTS,
        &p.replace("duration=30.0\n", ""),
        "s.params",
        None,
        Some("duration"),
        "missing `duration=`",
    );
    assert_bm_error(
        BM_MOVEMENTS,
        &p.replace("y=50.0", "y=-50"),
        "s.params",
        Some(5),
        Some("y"),
        "height",
    );
    assert_bm_error(
        BM_MOVEMENTS,
        &p.replace("dim=3", "dim"),
        "s.params",
        Some(9),
        None,
        "key=value",
    );
}

#[test]
fn bonnmotion_tolerated_quirks_and_warnings() {
    // A repeated last waypoint, trailing blank lines, and a waypoint past the duration.
    let file = bm_parse(
        "0 0 0 10 10 0 10 10 0\n0 5 5 20 5 5 40 5 65\n\n\n",
        BM_PARAMS,
    )
    .unwrap();
    let trace = &file.trace;
    assert_eq!(trace.nodes[0].legs().len(), 2);
    assert!(near(trace.position(1, 30.0), Point::new(5.0, 35.0)));
    assert_eq!(trace.nodes[1].legs().last().unwrap().end, 30.0);
    let located: Vec<_> = file
        .warnings
        .iter()
        .map(|w| {
            (
                w.location.line,
                w.location.field.clone().unwrap_or_default(),
            )
        })
        .collect();
    // The last waypoint lies outside the 100 × 50 area and after the 30 s duration.
    assert_eq!(
        located,
        vec![
            (Some(2), "waypoint 3".to_string()),
            (Some(2), "waypoints".to_string())
        ]
    );
}

#[test]
fn bonnmotion_round_trips_a_shipped_trace() {
    let dir = tempfile::tempdir().unwrap();
    for (name, ..) in SHIPPED {
        let original = ns2::read(&shipped(name)).unwrap().trace;
        for file in ["t.movements", "t.movements.gz"] {
            let path = dir.path().join(file);
            bonnmotion::write(&original, &path).unwrap();
            let bytes = std::fs::read(&path).unwrap();
            let via_bm = bonnmotion::read(&path).unwrap();
            assert!(via_bm.warnings.is_empty(), "{:?}", via_bm.warnings);
            let diff = original.max_difference(&via_bm.trace).expect("same legs");
            assert!(diff < 1e-9, "{name} {file}: {diff}");
            // And on to ns-2 again.
            let back = parse(&written(&via_bm.trace)).trace;
            let diff = original.max_difference(&back).expect("same legs");
            assert!(diff < 1e-9, "{name} {file} → ns-2: {diff}");
            // Deterministic bytes, gzip included.
            bonnmotion::write(&original, &path).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), bytes);
        }
    }
}

#[test]
fn gzipped_ns2_files_are_read_and_corrupt_ones_are_named_as_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let original = shipped(SHIPPED[0].0);
    let text = std::fs::read(&original).unwrap();
    let gz = dir.path().join("s.tcl.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(&text).unwrap();
    let compressed = encoder.finish().unwrap();
    std::fs::write(&gz, &compressed).unwrap();
    let plain = ns2::read(&original).unwrap();
    let unzipped = read_trace(&gz).unwrap();
    assert_eq!(unzipped.trace, plain.trace);
    assert_eq!(unzipped.footer, plain.footer);
    // Truncated: named as a gzip problem, not as "not UTF-8".
    std::fs::write(&gz, &compressed[..compressed.len() / 2]).unwrap();
    let e = read_trace(&gz).unwrap_err();
    assert!(e.message.starts_with("corrupt gzip"), "{e}");
    // Named .gz but plain text.
    std::fs::write(&gz, &text).unwrap();
    let e = read_trace(&gz).unwrap_err();
    assert!(e.message.contains("not a gzip file"), "{e}");
}

#[test]
fn a_utf8_byte_order_mark_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let original = shipped(SHIPPED[0].0);
    let mut text = b"\xEF\xBB\xBF".to_vec();
    text.extend(std::fs::read(&original).unwrap());
    let bom = dir.path().join("bom.tcl");
    std::fs::write(&bom, &text).unwrap();
    let read = ns2::read(&bom).unwrap();
    assert_eq!(read.trace, ns2::read(&original).unwrap().trace);
    assert!(read.warnings.is_empty(), "{:?}", read.warnings);
}

/// Messages that misled (issue 40): a NUL byte in a value is shown escaped, never echoed
/// raw to the terminal; a BonnMotion line with commas says so instead of counting its
/// "numbers".
#[test]
fn a_nul_byte_is_escaped_and_commas_are_named() {
    let e = parse_err("$node_(0) set X_ 1\u{0}0\n");
    let shown = e.to_string();
    assert!(!shown.contains('\u{0}'), "{shown:?}");
    assert!(shown.contains("1\\u{0}0"), "{shown}");
    assert_bm_error(
        "0,0,0 10,5,5\n0.0 5.0 5.0\n",
        BM_PARAMS,
        "s.movements",
        Some(1),
        Some("waypoints"),
        "numbers separated by commas",
    );
    // An odd count is still counted, in English.
    assert_bm_error(
        "0.0\n0.0 5.0 5.0\n",
        BM_PARAMS,
        "s.movements",
        Some(1),
        Some("waypoints"),
        "1 number is not a multiple of 3",
    );
}
