//! Traces written by the tools users have: ns-2 files listing events node by node
//! (BonnMotion's ns-2 export), a length given on the command line or in a spec (cut or
//! extended), and SUMO's ns-2 mobility export with its activity file (`traces/sumo`,
//! made by SUMO's own tools; see traces/sumo/README.md).

use linkrev::mobility::format::{ReadOptions, read_trace_with};
use linkrev::mobility::{Point, bonnmotion, ns2};
use linkrev::topology::events::link_timeline;
use std::path::{Path, PathBuf};
use std::process::Command;

fn sumo(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces/sumo")
        .join(name)
}

const HEADER: &str = "# nodes: 2, max x: 500.0, max y: 100.0\n";

#[test]
fn events_listed_node_by_node_are_not_out_of_order_but_a_nodes_own_are() {
    // BonnMotion's ns-2 export: all of node 0's events, then all of node 1's.
    let by_node = format!(
        "{HEADER}$node_(0) set X_ 0.0\n$node_(0) set Y_ 0.0\n\
         $node_(1) set X_ 400.0\n$node_(1) set Y_ 0.0\n\
         $ns_ at 0.0 \"$node_(0) setdest 100.0 0.0 10.0\"\n\
         $ns_ at 50.0 \"$node_(0) setdest 0.0 0.0 10.0\"\n\
         $ns_ at 0.0 \"$node_(1) setdest 300.0 0.0 5.0\"\n\
         $ns_ at 60.0 \"$node_(1) setdest 400.0 0.0 5.0\"\n"
    );
    let file = ns2::parse(&by_node, "by-node.tcl").unwrap();
    assert!(file.warnings.is_empty(), "{:?}", file.warnings);
    // Node 1's second event written before its first: one warning, at that line.
    let swapped = by_node.replace(
        "$ns_ at 0.0 \"$node_(1) setdest 300.0 0.0 5.0\"\n$ns_ at 60.0 \"$node_(1) setdest 400.0 0.0 5.0\"\n",
        "$ns_ at 60.0 \"$node_(1) setdest 400.0 0.0 5.0\"\n$ns_ at 0.0 \"$node_(1) setdest 300.0 0.0 5.0\"\n",
    );
    let file = ns2::parse(&swapped, "swapped.tcl").unwrap();
    assert_eq!(file.warnings.len(), 1, "{:?}", file.warnings);
    assert_eq!(file.warnings[0].location.line, Some(9));
    assert!(file.warnings[0].message.contains("node 1"));
    // Either way the same trajectories: events are applied in time order.
    assert_eq!(
        ns2::parse(&by_node, "a").unwrap().trace,
        ns2::parse(&swapped, "b").unwrap().trace
    );
}

/// Node 0 leaves x = 0 at t = 0 for x = 100 at 1 m/s; node 1's event at t = 10 is the
/// file's last, so the file reads as 10 s long.
const TRIP: &str = "# max x: 500.0, max y: 100.0\n\
    $node_(0) set X_ 0.0\n$node_(0) set Y_ 0.0\n\
    $node_(1) set X_ 400.0\n$node_(1) set Y_ 0.0\n\
    $ns_ at 0.0 \"$node_(0) setdest 100.0 0.0 1.0\"\n\
    $ns_ at 10.0 \"$node_(1) setdest 400.0 0.0 0.0\"\n";

#[test]
fn a_given_duration_cuts_or_extends_an_ns2_trace_with_trips_going_on() {
    let own = ns2::parse(TRIP, "trip.tcl").unwrap().trace;
    assert_eq!(own.duration, 10.0);
    for (duration, end_x) in [(5.0, 5.0), (10.0, 10.0), (50.0, 50.0), (300.0, 100.0)] {
        let file = ns2::parse_with(TRIP, "trip.tcl", Some(duration)).unwrap();
        let trace = file.trace;
        assert_eq!(trace.duration, duration);
        let end = trace.position(0, duration);
        assert!(
            (end.x - end_x).abs() < 1e-9 && end.y == 0.0,
            "{duration}: {end}"
        );
        assert_eq!(trace.position(1, duration), Point::new(400.0, 0.0));
    }
    // Cutting before the last event says so once.
    let cut = ns2::parse_with(TRIP, "trip.tcl", Some(5.0)).unwrap();
    assert_eq!(cut.warnings.len(), 1, "{:?}", cut.warnings);
    assert!(cut.warnings[0].message.contains("--duration"));
}

#[test]
fn a_given_duration_cuts_or_extends_a_bonnmotion_trace() {
    let params = "x=200.0\ny=50.0\nduration=30.0\nnn=1\n";
    let movements = "0.0 0.0 10.0 20.0 100.0 10.0\n";
    let own = bonnmotion::parse(movements, "m", params, "p").unwrap();
    assert_eq!(own.trace.duration, 30.0);
    let longer = bonnmotion::parse_with(movements, "m", params, "p", Some(60.0)).unwrap();
    assert_eq!(longer.trace.duration, 60.0);
    assert_eq!(longer.trace.position(0, 60.0), Point::new(100.0, 10.0));
    let shorter = bonnmotion::parse_with(movements, "m", params, "p", Some(10.0)).unwrap();
    assert_eq!(shorter.trace.position(0, 10.0), Point::new(50.0, 10.0));
    assert!(shorter.warnings.is_empty(), "{:?}", shorter.warnings);
}

#[test]
fn sumo_vehicles_have_links_only_while_both_are_in_the_network() {
    let range = 250.0;
    let with = ReadOptions {
        duration: Some(300.0),
        activity: Some(sumo("grid.ns2activity.tcl")),
    };
    let loaded = read_trace_with(&sumo("grid.ns2mobility.tcl"), &with).unwrap();
    let trace = &loaded.trace;
    assert_eq!(trace.node_count(), 30);
    assert_eq!(trace.duration, 300.0);
    // SUMO's coordinates start at -1.6 m: no "outside the area" warnings, only the note
    // that the area is the file's bounding box.
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].message.contains("from -1.6"));
    let presence = trace.presence.clone().expect("activity read");
    let present = |node: u32, t: f64| {
        let (start, stop) = presence[node as usize];
        start <= t && t <= stop
    };
    let timeline = link_timeline(trace, range);
    assert!(!timeline.events.is_empty());
    for e in &timeline.events {
        assert!(
            present(e.a, e.time) && present(e.b, e.time),
            "{e:?} with an absent end"
        );
    }
    // Brute force at sample instants away from events: linked iff both are present and
    // closer than the range.
    let event_times: Vec<f64> = timeline.events.iter().map(|e| e.time).collect();
    let mut t = 0.25;
    let mut checked = 0;
    while t < trace.duration {
        if event_times.iter().all(|&e| (e - t).abs() > 1e-6)
            && presence
                .iter()
                .all(|&(a, b)| (a - t).abs() > 1e-6 && (b - t).abs() > 1e-6)
        {
            for a in 0..30u32 {
                for b in a + 1..30 {
                    let linked = timeline
                        .intervals
                        .iter()
                        .any(|iv| iv.a == a && iv.b == b && iv.start < t && t < iv.end);
                    let expected = present(a, t)
                        && present(b, t)
                        && trace.position(a, t).distance(trace.position(b, t)) < range;
                    assert_eq!(linked, expected, "pair ({a}, {b}) at {t} s");
                }
            }
            checked += 1;
        }
        t += 0.5;
    }
    assert!(checked > 500, "{checked} instants checked");

    // Without the activity file: every vehicle parked at its departure point from t = 0
    // takes part, which the reader points out.
    let without = read_trace_with(&sumo("grid.ns2mobility.tcl"), &ReadOptions::default()).unwrap();
    assert!(
        without
            .warnings
            .iter()
            .any(|w| w.message.contains("--activity")),
        "{:?}",
        without.warnings
    );
    assert!(link_timeline(&without.trace, range).events.len() > timeline.events.len());
}

#[test]
fn trace_commands_and_specs_take_the_duration_and_the_activity() {
    let linkrev = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .args(args)
            .output()
            .unwrap()
    };
    let mobility = sumo("grid.ns2mobility.tcl");
    let activity = sumo("grid.ns2activity.tcl");
    let out = linkrev(&[
        "trace",
        "stats",
        mobility.to_str().unwrap(),
        "--duration",
        "300",
        "--activity",
        activity.to_str().unwrap(),
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("duration              300 s"), "{stdout}");

    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&mobility, dir.path().join("grid.ns2mobility.tcl")).unwrap();
    std::fs::copy(&activity, dir.path().join("grid.ns2activity.tcl")).unwrap();
    let spec = dir.path().join("sumo.toml");
    let text = "name = \"sumo\"\nmaster_seed = 1\nreplications = 1\n\
                algorithms = [\"le-malpani\"]\n\n[mobility]\n\
                traces = [\"grid.ns2mobility.tcl\"]\nduration = 300.0\nactivity = \"beside\"\n";
    std::fs::write(&spec, text).unwrap();
    let results = dir.path().join("results");
    let out = linkrev(&[
        "sweep",
        spec.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = linkrev::results::store::Store::open_read_only(&results).unwrap();
    let runs = store.read_table("runs").unwrap();
    let changes = runs
        .column("mob_link_changes")
        .unwrap()
        .u64()
        .unwrap()
        .get(0);
    let direct = link_timeline(
        &read_trace_with(
            &mobility,
            &ReadOptions {
                duration: Some(300.0),
                activity: Some(activity.clone()),
            },
        )
        .unwrap()
        .trace,
        250.0,
    );
    assert_eq!(changes, Some(direct.events.len() as u64));

    // A missing activity file fails the dry run, located at the trace's entry.
    std::fs::remove_file(dir.path().join("grid.ns2activity.tcl")).unwrap();
    let out = linkrev(&["sweep", spec.to_str().unwrap(), "--dry-run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}:7: mobility.traces", spec.display()))
            && stderr.contains("grid.ns2activity.tcl"),
        "{stderr}"
    );
}
