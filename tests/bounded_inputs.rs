//! Sizes and times a user gives are checked before anything is allocated or run: each
//! of these once ran for minutes, allocated until memory ran out, or was clamped
//! silently. Each must now end at once with exit 2 and a message naming the flag.

use polars::prelude::{ParquetReader, SerReader};
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `linkrev args…` and returns its exit code and stderr, asserting it ended well
/// within the time a refused input needs.
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{args:?} took {:?}",
        started.elapsed()
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn a_grid_whose_size_overflows_is_refused() {
    // 2 × (2^63 + 2) wrapped to 4 nodes, passed the size check, then allocated until
    // memory ran out.
    let args = [
        "check",
        "--algo",
        "me-rl",
        "--graph",
        "grid:2x9223372036854775810",
    ];
    let (code, stderr) = refused(&args);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("the checker takes 2 to 8"), "{stderr}");
}

#[test]
fn durations_beyond_the_time_limit_are_refused_not_clamped() {
    // 1e10 s was accepted; 1e19 s was clamped silently to 18,446,744,073.7 s.
    for duration in ["1e10", "1e19"] {
        let args = [
            "run",
            "--algo",
            "me-rl",
            "--rwp",
            "nodes=5,duration=10",
            "--duration",
            duration,
        ];
        let (code, stderr) = refused(&args);
        assert_eq!(code, Some(2), "{stderr}");
        assert!(stderr.contains("duration"), "{stderr}");
        assert!(stderr.contains("than the limit of 1e9 s"), "{stderr}");
    }
}

/// A delay of 1e20 s was clamped to u64 nanoseconds, a CS time of 0 accepted though
/// the reference says > 0, and a duration of 1e-300 s gave 0-second runs.
#[test]
fn spans_of_time_are_refused_outside_the_clocks_range_not_clamped() {
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "--algo", "me-rl", "--rwp", "nodes=5,duration=10"];
        args.extend_from_slice(extra);
        let (code, stderr) = refused(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        stderr
    };
    let stderr = run(&["--delay", "const:99999999999999999999s"]);
    assert!(
        stderr.contains("1e20 s is longer than the limit of 1e9 s"),
        "{stderr}"
    );
    let stderr = run(&["--delay", "uniform:1ms:2000000000s"]);
    assert!(stderr.contains("longer than the limit"), "{stderr}");
    for cs in ["0", "exp:0", "1e-12"] {
        let stderr = run(&["--cs-time", cs]);
        assert!(
            stderr.contains("cs-time") && stderr.contains("at least 1 ns"),
            "{stderr}"
        );
    }
    let stderr = run(&["--duration", "1e-300"]);
    assert!(
        stderr.contains("at least 1 ns") && stderr.contains("1e-300"),
        "{stderr}"
    );
    let (code, stderr) = refused(&["run", "--algo", "me-rl", "--rwp", "nodes=5,duration=1e-300"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("at least 1 ns"), "{stderr}");
    // The same in a spec, named by its key.
    let tmp = tempfile::tempdir().unwrap();
    for (key, value) in [
        ("cs_time", "0"),
        ("cs_time", "\"exp:0\""),
        ("duration", "1e-300"),
    ] {
        let spec = tmp.path().join("s.toml");
        let (workload, mobility) = match key {
            "cs_time" => (format!("cs_time = {value}\n"), String::new()),
            _ => (String::new(), format!("duration = {value}\n")),
        };
        std::fs::write(
            &spec,
            format!(
                "name = \"s\"\nmaster_seed = 1\nreplications = 1\nalgorithms = [\"me-rl\"]\n\
                 [mobility]\nnodes = 5\n{mobility}[workload]\nrate = 1.0\n{workload}"
            ),
        )
        .unwrap();
        let (code, stderr) = refused(&["sweep", spec.to_str().unwrap(), "--dry-run"]);
        assert_eq!(code, Some(2), "{key} = {value}: {stderr}");
        assert!(
            stderr.contains(key) && stderr.contains("at least 1 ns"),
            "{stderr}"
        );
    }
}

/// Two nodes over 1e9 s (inside the time limit) made 2e8 requests, a row each held in
/// memory: 3.9 GB and growing. Refused before the run, as the same study in a spec.
#[test]
fn a_run_expected_to_make_more_requests_than_memory_holds_is_refused() {
    let (code, stderr) = refused(&[
        "run",
        "--algo",
        "me-rl",
        "--rwp",
        "nodes=2,duration=1e9,pause=1e7",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("more than the 1e7 one run may hold"),
        "{stderr}"
    );
    // Leader election makes no requests: the same mobility is not refused for that.
    let (code, stderr) = refused(&[
        "run",
        "--algo",
        "le-malpani",
        "--rwp",
        "nodes=2,duration=1e9,pause=1e7",
        "--max-events",
        "1000",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
}

/// `bench` took any size: a 1.6 TB allocation, a search growing past 3.4 GB, a
/// million-node network `run` refuses.
#[test]
fn bench_commands_are_bounded_up_front() {
    let (code, stderr) = refused(&["bench", "engine", "--pending", "100000000000"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("1..=10000000"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The link limit `run` applies, lowered so that a small network meets it.
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["bench", "protocols", "--rwp", "nodes=30,duration=60"])
        .env("LINKREV_MAX_LINKS", "10")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("link intervals"), "{stderr}");
    // A depth bound of a billion: every search stops at the state budget.
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args([
            "bench",
            "check",
            "--graph",
            "complete:5",
            "--changes",
            "3",
            "--requests",
            "2",
            "--max-depth",
            "1000000000",
            "--max-states",
            "2000",
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for row in rows.as_array().unwrap() {
        // The checker counts transitions against the budget (its distinct states are
        // fewer) and the plain search stops storing at it; stateright's search on 2
        // threads looks at the count between blocks of work, so it overshoots by a
        // constant (a few thousand states), not by a factor.
        let states = row["states"].as_u64().unwrap();
        assert!(states <= 2000 + 10_000, "{row}");
    }
}

/// `check --out` to a place it cannot write failed only after the whole search.
#[test]
fn check_out_that_cannot_be_written_fails_before_the_search() {
    let (code, stderr) = refused(&[
        "check",
        "--algo",
        "me-rl",
        "--graph",
        "ring:4",
        "--changes",
        "2",
        "--requests",
        "2",
        "--out",
        "/dev/null/check",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("/dev/null/check: cannot write here"),
        "{stderr}"
    );
    assert!(!stderr.contains("checking"), "the search started: {stderr}");
}

#[test]
fn a_key_given_twice_in_rwp_is_refused() {
    let args = ["run", "--algo", "me-rl", "--rwp", "nodes=5,nodes=6"];
    let (code, stderr) = refused(&args);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("`nodes` is given twice"), "{stderr}");
}

#[test]
fn thread_counts_above_the_limit_are_refused() {
    // A 0.07 s sweep with 100,000 threads was still starting them after 90 s.
    for args in [
        &[
            "sweep",
            "analysis/me_load.toml",
            "--dry-run",
            "--threads",
            "100000",
        ][..],
        &["demo", "--threads", "0"],
        &[
            "check",
            "--algo",
            "me-rl",
            "--graph",
            "path:3",
            "--threads",
            "5000",
        ],
    ] {
        let (code, stderr) = refused(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("expected a thread count from 1 to 1024"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_spec_too_large_is_refused_before_its_combinations_are_checked() {
    // Three mobility axes of 400 values: 64 million runs. Every combination was checked
    // (29 s) before the run count refused the plan.
    let list = |from: usize| {
        let values: Vec<String> = (from..from + 400).map(|v| format!("{v}.0")).collect();
        format!("[{}]", values.join(", "))
    };
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("huge.toml");
    std::fs::write(
        &spec,
        format!(
            "name = \"huge\"\nmaster_seed = 1\nreplications = 1\nalgorithms = [\"le-malpani\"]\n\
             [mobility]\nspeed_min = 0.5\nspeed_max = {}\npause = {}\nduration = {}\n",
            list(1),
            list(0),
            list(100)
        ),
    )
    .unwrap();
    let (code, stderr) = refused(&["sweep", spec.to_str().unwrap(), "--dry-run"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("the plan would have 64000000 runs (the limit is 2000000)"),
        "{stderr}"
    );
}

#[test]
fn a_word_for_a_duration_and_a_directory_for_a_trace_are_named() {
    // These said "`` is not a number" and "trace file … does not exist".
    let (code, stderr) = refused(&[
        "run",
        "--algo",
        "me-rl",
        "--rwp",
        "nodes=5,duration=10",
        "--detection-delay",
        "soon",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("`soon` is not a duration"), "{stderr}");
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("traces")).unwrap();
    let spec = dir.path().join("s.toml");
    std::fs::write(
        &spec,
        "name = \"s\"\nmaster_seed = 1\nreplications = 1\nalgorithms = [\"le-malpani\"]\n\
         [mobility]\ntraces = [\"traces\"]\n",
    )
    .unwrap();
    let (code, stderr) = refused(&["sweep", spec.to_str().unwrap(), "--dry-run"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("is a directory: name each trace file in it"),
        "{stderr}"
    );
}

#[test]
fn every_run_ends_at_its_event_budget() {
    // Nanosecond delays that never quite stall: 328 million events in 30 s at 4.5 s of
    // simulated time, about 4 hours at 300 s. The budget stops it, reported as aborted.
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args([
            "run",
            "--algo",
            "me-rl",
            "--rwp",
            "nodes=20,duration=4.5",
            "--delay",
            "const:2ns",
            "--max-events",
            "100000",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["events"], 100_000);
    let aborted = summary["aborted"].as_str().expect("aborted");
    assert!(
        aborted.contains("the event budget of 100000 events"),
        "{aborted}"
    );
    let (code, stderr) = refused(&[
        "run",
        "--algo",
        "me-rl",
        "--rwp",
        "nodes=5,duration=10",
        "--max-events",
        "0",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn a_gzip_that_inflates_past_the_limit_stops_there() {
    use std::io::Write as _;
    // 2 MB of gzip that inflates to 1 GiB was read whole; here 4 MB of comment lines
    // against a limit of 1 MB.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.tcl.gz");
    let mut gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&path).unwrap(),
        flate2::Compression::best(),
    );
    let line = [b'#'; 1023];
    for _ in 0..4096 {
        gz.write_all(&line).unwrap();
        gz.write_all(b"\n").unwrap();
    }
    gz.finish().unwrap();
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["trace", "stats", path.to_str().unwrap()])
        .env("LINKREV_MAX_TRACE_MB", "1")
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("its decompressed text is larger than the limit of 1 MB"),
        "{stderr}"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["trace", "stats", path.to_str().unwrap()])
        .env("LINKREV_MAX_TRACE_MB", "lots")
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("LINKREV_MAX_TRACE_MB"));
}

#[test]
fn a_replay_window_too_busy_for_a_page_is_refused_before_it_is_written() {
    // Nanosecond delays put the run's events in a tenth of a second: a 255 MB page (and
    // 9.6 GB of memory before the event budget). The recording stops growing at the
    // cap, and nothing is written.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("busy.html");
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args([
            "replay",
            "--algo",
            "me-rl",
            "--rwp",
            "nodes=20,duration=4.5",
            "--delay",
            "const:2ns",
            "--from",
            "3.8",
            "--to",
            "3.9",
            "--max-events",
            "420000",
            "-o",
            page.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("more than 400000 events, the most a page may show"),
        "{stderr}"
    );
    assert!(stderr.contains("--from and --to"), "{stderr}");
    assert!(!page.exists(), "nothing written");
}

#[test]
fn a_spec_sets_every_runs_event_budget() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = |budget: &str| {
        format!(
            "name = \"budget\"\nmaster_seed = 3\nreplications = 2\nalgorithms = [\"me-rl\"]\n\
             {budget}\n[mobility]\nnodes = 6\narea = \"400x300\"\nduration = 20.0\n\
             [network]\ndelay = \"const:2ns\"\n[workload]\nrate = 1.0\n"
        )
    };
    let path = tmp.path().join("budget.toml");
    std::fs::write(&path, spec("max_events = 500")).unwrap();
    let results = tmp.path().join("results");
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["sweep", path.to_str().unwrap(), "--results"])
        .arg(&results)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let runs = std::fs::File::open(results.join("runs.parquet")).unwrap();
    let runs = ParquetReader::new(runs).finish().unwrap();
    let events = runs.column("events").unwrap().u64().unwrap().clone();
    let aborted = runs.column("aborted").unwrap().str().unwrap().clone();
    for (events, aborted) in events.iter().zip(aborted.iter()) {
        assert_eq!(events, Some(500));
        assert!(aborted.is_some_and(|a| a.contains("event budget of 500 events")));
    }
    // The seeds are those of the same spec without a budget: it changes when a run is
    // stopped, never what it draws.
    std::fs::write(&path, spec("")).unwrap();
    let without = linkrev::sweep::specs::plan_from_file(&path).unwrap();
    std::fs::write(&path, spec("max_events = 500")).unwrap();
    let with = linkrev::sweep::specs::plan_from_file(&path).unwrap();
    assert_eq!(with.runs.get(1).seed, without.runs.get(1).seed);
    assert_eq!(with.runs.get(1).config.max_events, Some(500));
    std::fs::write(&path, spec("max_events = 0")).unwrap();
    let (code, stderr) = refused(&["sweep", path.to_str().unwrap(), "--dry-run"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("max_events: must be a positive number of events"),
        "{stderr}"
    );
}

#[test]
fn a_trace_too_dense_for_memory_is_a_clean_error() {
    // 20,000 nodes packed within range once aborted `trace stats` on a 4.4 GB
    // allocation; here 200 nodes (19,900 links at once) against a limit of 1,000.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("packed.tcl");
    let mut text = String::new();
    for i in 0..200 {
        let (x, y) = (f64::from(i % 20) * 2.0, f64::from(i / 20) * 2.0);
        text.push_str(&format!(
            "$node_({i}) set X_ {x}\n$node_({i}) set Y_ {y}\n$node_({i}) set Z_ 0.0\n"
        ));
    }
    std::fs::write(&path, text).unwrap();
    let p = path.to_str().unwrap();
    for args in [
        vec!["trace", "stats", p, "--duration", "10"],
        vec![
            "run",
            "--algo",
            "le-malpani",
            "--trace",
            p,
            "--duration",
            "10",
        ],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .args(&args)
            .env("LINKREV_MAX_LINKS", "1000")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("200 nodes at range 250 m have more than 1000 link intervals")
                && err.contains("LINKREV_MAX_LINKS"),
            "{args:?}: {err}"
        );
    }
    let (code, stderr) = {
        let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .args(["trace", "stats", p, "--duration", "10"])
            .env("LINKREV_MAX_LINKS", "lots")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("LINKREV_MAX_LINKS"), "{stderr}");
}

/// A replay whose window overflows stops the run there: it once simulated the rest
/// (52 s and 1.76 GB for a run whose `linkrev run` takes 2 s) only to refuse it.
#[test]
fn a_replay_stops_the_run_when_its_window_is_full() {
    use linkrev::registry::Algorithm;
    use linkrev::replay::{MAX_WINDOW_EVENTS, Window};
    use linkrev::sim::seeds::{Purpose, derive};
    use linkrev::sim::{DelayModel, SimTime};
    // What `linkrev replay --rwp nodes=20,duration=4.5 --delay const:2ns` runs: RL
    // reversing without end in a component cut off from the token.
    let mut mobility = linkrev::params::default_rwp(derive(1, Purpose::Mobility));
    mobility.nodes = 20;
    mobility.duration = 4.5;
    let trace = linkrev::mobility::rwp::generate(&mobility).unwrap();
    let timeline = linkrev::topology::events::link_timeline(&trace, 250.0);
    let algo = Algorithm::parse("me-rl").unwrap();
    let mut config = linkrev::params::bench_config(algo, 0.1, 4.5, 1);
    config.network.delay = DelayModel::Constant(linkrev::sim::Duration(2));
    let window = Window {
        from: SimTime::ZERO,
        to: config.duration,
    };
    let (output, recorded) = algo.replay(&algo.default_params(), &timeline, config, window);
    assert_eq!(recorded.steps.len(), MAX_WINDOW_EVENTS);
    assert_eq!(recorded.events_not_recorded, 1);
    // The event that did not fit is the last one run.
    assert_eq!(output.summary.events, MAX_WINDOW_EVENTS as u64 + 1);
}
