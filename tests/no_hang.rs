//! Accepted input never hangs the tool: the inputs that used to spin (link extraction cut
//! into windows by one outlier leg, a time written in nanoseconds, zero message delays)
//! finish or are stopped with a report, and absurd values are refused with a located
//! error. Each case runs through the binary with a timeout, so a regression fails the
//! test instead of hanging the suite.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs linkrev, killing it (and failing) if it takes longer than `limit`.
fn linkrev_within(limit: Duration, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run linkrev");
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            child.kill().unwrap();
            panic!("linkrev {args:?} still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().unwrap()
}

const LIMIT: Duration = Duration::from_secs(60);

fn text(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Three nodes on a line; node 0 crosses node 1's range at `speed` m/s.
fn fast_leg_trace(dir: &Path, speed: &str) -> String {
    let path = dir.join(format!("fast-{speed}.tcl"));
    std::fs::write(
        &path,
        format!(
            "$node_(0) set X_ 10.0\n$node_(0) set Y_ 10.0\n\
             $node_(1) set X_ 600.0\n$node_(1) set Y_ 10.0\n\
             $node_(2) set X_ 1000.0\n$node_(2) set Y_ 10.0\n\
             $ns_ at 1.0 \"$node_(0) setdest 1000.0 10.0 {speed}\"\n\
             $ns_ at 200.0 \"$node_(2) setdest 999.0 10.0 1.0\"\n"
        ),
    )
    .unwrap();
    path.display().to_string()
}

/// The `link changes` line of `trace stats`.
fn link_changes(stdout: &str) -> String {
    stdout
        .lines()
        .find(|l| l.starts_with("link changes"))
        .unwrap_or_else(|| panic!("no link changes in\n{stdout}"))
        .to_string()
}

#[test]
fn a_setdest_leg_at_absurd_speed_is_solved_quickly() {
    let dir = tempfile::tempdir().unwrap();
    // Node 0 passes node 1 (up, down) and ends linked with node 2 (up): three changes at
    // any speed, as long as the contact outlasts a nanosecond (the clock).
    for speed in ["10.0", "1e6", "1e9"] {
        let trace = fast_leg_trace(dir.path(), speed);
        let out = linkrev_within(LIMIT, &["trace", "stats", &trace, "--range", "250"]);
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{speed}: {stderr}");
        let changes = link_changes(&stdout);
        assert!(
            changes.split_whitespace().any(|w| w == "3"),
            "{speed}: {changes}"
        );
    }
    // Faster, the contact with node 1 is shorter than the clock (dropped as a sliver);
    // what matters is that it finishes (windows set by this leg: 1e18 of them).
    let trace = fast_leg_trace(dir.path(), "1e20");
    let out = linkrev_within(LIMIT, &["trace", "stats", &trace, "--range", "250"]);
    assert!(out.status.success(), "{}", text(&out).1);
}

#[test]
fn a_bonnmotion_leg_a_nanosecond_long_finishes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("s.params"),
        "model=RandomWaypoint\nx=1000.0\ny=50.0\nduration=30.0\nnn=2\n",
    )
    .unwrap();
    let movements = dir.path().join("s.movements");
    // Node 0 crosses 990 m in 10 ns (1e11 m/s) past node 1: linked for 5 ns.
    std::fs::write(
        &movements,
        "0.0 0.0 10.0 5.0 0.0 10.0 5.00000001 990.0 10.0\n0.0 500.0 10.0\n",
    )
    .unwrap();
    let out = linkrev_within(
        LIMIT,
        &[
            "trace",
            "stats",
            movements.to_str().unwrap(),
            "--range",
            "250",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let changes = link_changes(&stdout);
    assert!(changes.split_whitespace().any(|w| w == "2"), "{changes}");
}

#[test]
fn a_time_written_in_nanoseconds_is_refused_with_its_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ns.tcl");
    std::fs::write(
        &path,
        "$node_(0) set X_ 10.0\n$node_(0) set Y_ 10.0\n\
         $node_(1) set X_ 100.0\n$node_(1) set Y_ 10.0\n\
         $ns_ at 1000000000000.0 \"$node_(1) setdest 101.0 10.0 1.0\"\n",
    )
    .unwrap();
    for command in [&["trace", "stats"][..], &["trace", "lint"][..]] {
        let mut args = command.to_vec();
        args.push(path.to_str().unwrap());
        let out = linkrev_within(LIMIT, &args);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("ns.tcl:5")
                && stderr.contains("time")
                && stderr.contains("nanoseconds"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn zero_message_delays_in_a_component_without_the_token_are_stopped_and_reported() {
    // A sparse strip: RL's components cut off from the token reverse forever, and with
    // zero delays simulated time stands still. The stall guard stops the run.
    for delay in ["const:0ns", "const:1ns"] {
        let out = linkrev_within(
            LIMIT,
            &[
                "run",
                "--algo",
                "me-rl",
                "--rwp",
                "nodes=20,area=3000x300,duration=60",
                "--seed",
                "1",
                "--delay",
                delay,
            ],
        );
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{delay}: {stderr}");
        let aborted = stdout
            .lines()
            .find(|l| l.starts_with("ABORTED"))
            .unwrap_or_else(|| panic!("{delay}: not stopped\n{stdout}"));
        assert!(aborted.contains("time barely advances"), "{aborted}");
    }
}

#[test]
fn too_many_nodes_are_refused_before_any_memory_is_taken() {
    let out = linkrev_within(
        LIMIT,
        &[
            "run",
            "--algo",
            "le-malpani",
            "--rwp",
            "nodes=10000000,area=1000x1000,duration=1",
        ],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("nodes") && stderr.contains("limit"),
        "{stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.tcl");
    std::fs::write(&path, "$node_(4000000000) set X_ 1.0\n").unwrap();
    let out = linkrev_within(LIMIT, &["trace", "stats", path.to_str().unwrap()]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("many.tcl:1") && stderr.contains("limit"),
        "{stderr}"
    );
}
