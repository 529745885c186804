//! The `linkrev trace …` commands end to end, through the real binary: footer agreement,
//! exit codes, located errors, determinism and the absence of half-written output; and
//! the registry as the commands list it (`linkrev algorithms`, `linkrev bench
//! protocols`, the algorithms reference page).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const SHIPPED: [&str; 3] = [
    "setdest_v1_n20_p10_M10_t200_800x400.tcl",
    "setdest_v2_n30_s1_m1_M15_P2_p5_t300_1000x500.tcl",
    "setdest_v2_n50_s2_m2_M10_P1_p0_t300_1500x300.tcl",
];

fn linkrev(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
}

fn shipped(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name)
        .display()
        .to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stats_json(file: &str) -> Value {
    let out = linkrev(&["trace", "stats", file, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn stats_link_changes_equal_the_setdest_footer_on_every_shipped_trace() {
    for name in SHIPPED {
        let json = stats_json(&shipped(name));
        assert_eq!(json["link_changes"], json["footer_link_changes"], "{name}");
        assert_eq!(json["footer_match"], true, "{name}");
        assert_eq!(json["footer_per_node_match"], true, "{name}");
        for key in [
            "nodes",
            "duration",
            "link_ups",
            "link_downs",
            "mean_degree",
            "mean_link_duration",
            "mean_components",
            "frac_time_connected",
            "mean_speed",
        ] {
            assert!(
                json.get(key).is_some_and(|v| !v.is_null()),
                "{name}: {key} missing"
            );
        }
        let ups = json["link_ups"].as_u64().unwrap();
        let downs = json["link_downs"].as_u64().unwrap();
        assert_eq!(ups + downs, json["link_changes"].as_u64().unwrap());
    }
}

#[test]
fn lint_passes_shipped_traces_and_fails_a_tampered_footer_with_exit_1() {
    let out = linkrev(&["trace", "lint", &shipped(SHIPPED[0])]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(shipped(SHIPPED[0])).unwrap();
    assert!(text.contains("# Link Changes: 384"));
    let tampered = dir.path().join("tampered.tcl");
    std::fs::write(
        &tampered,
        text.replace("# Link Changes: 384", "# Link Changes: 385"),
    )
    .unwrap();
    let out = linkrev(&["trace", "lint", tampered.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("footer 385, replay 384"));
}

#[test]
fn unreadable_input_exits_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.tcl");
    std::fs::write(&bad, "$node_(0) set X_ 1.0\n$node_(0) set Y_ oops\n").unwrap();
    for cmd in ["stats", "lint"] {
        let out = linkrev(&["trace", cmd, bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = stderr(&out);
        assert!(err.contains("bad.tcl:2"), "{cmd}: {err}");
    }
    let out = linkrev(&[
        "trace",
        "stats",
        dir.path().join("missing.tcl").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.tcl"));
    let out = linkrev(&["trace", "stats", &shipped(SHIPPED[0]), "--range", "-5"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--range"), "{}", stderr(&out));
}

fn generate(dir: &Path, name: &str, extra: &[&str]) -> (Output, PathBuf) {
    let path = dir.join(name);
    let mut args = vec![
        "trace",
        "gen",
        "rwp",
        "--nodes",
        "12",
        "--duration",
        "120",
        "-o",
    ];
    args.push(path.to_str().unwrap());
    args.extend_from_slice(extra);
    (linkrev(&args), path)
}

#[test]
fn gen_is_byte_deterministic_per_seed() {
    let dir = tempfile::tempdir().unwrap();
    let (o1, a) = generate(dir.path(), "a.tcl", &["--seed", "5"]);
    let (o2, b) = generate(dir.path(), "b.tcl", &["--seed", "5"]);
    let (o3, c) = generate(dir.path(), "c.tcl", &["--seed", "6"]);
    assert!(
        o1.status.success() && o2.status.success() && o3.status.success(),
        "{}",
        stderr(&o1)
    );
    let (a, b, c) = (
        std::fs::read(a).unwrap(),
        std::fs::read(b).unwrap(),
        std::fs::read(c).unwrap(),
    );
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn bad_generator_parameters_exit_2_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for (extra, needle) in [
        (vec!["--speed", "5:1"], "--speed"),
        (vec!["--speed", "0:10", "--start", "stationary"], "--speed"),
        (vec!["--area", "100"], "--area"),
        (vec!["--pause", "-1"], "--pause"),
        (vec!["--nodes", "0"], "--nodes"),
    ] {
        let (out, path) = generate(dir.path(), "x.tcl", &extra);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        assert!(stderr(&out).contains(needle), "{extra:?}: {}", stderr(&out));
        assert!(!path.exists(), "{extra:?} left output behind");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "temporary files left behind"
    );
}

#[test]
fn convert_to_bonnmotion_and_back_keeps_every_link_change() {
    let dir = tempfile::tempdir().unwrap();
    let src = shipped(SHIPPED[1]);
    let bm = dir.path().join("s.movements.gz");
    let back = dir.path().join("back.tcl");
    for (from, to) in [
        (src.as_str(), bm.to_str().unwrap()),
        (bm.to_str().unwrap(), back.to_str().unwrap()),
    ] {
        let out = linkrev(&["trace", "convert", from, to]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert!(dir.path().join("s.params").exists());
    let original = stats_json(&src);
    for converted in [bm.to_str().unwrap(), back.to_str().unwrap()] {
        let json = stats_json(converted);
        for key in ["nodes", "link_changes", "link_ups", "initial_links"] {
            assert_eq!(json[key], original[key], "{converted}: {key}");
        }
        let rel = (json["mean_degree"].as_f64().unwrap()
            / original["mean_degree"].as_f64().unwrap()
            - 1.0)
            .abs();
        assert!(rel < 1e-9, "{converted}: mean degree differs by {rel}");
    }
}

/// `trace convert a.tcl a.tcl` rewrote its input in place, dropping its `$god_`
/// lines; a BonnMotion output whose `.params` is the input's is the same mistake.
#[test]
fn convert_refuses_to_write_over_what_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let tcl = dir.path().join("a.tcl");
    std::fs::copy(shipped(SHIPPED[0]), &tcl).unwrap();
    let before = std::fs::read(&tcl).unwrap();
    let same = dir.path().join(".").join("a.tcl");
    for output in [&tcl, &same] {
        let out = linkrev(&[
            "trace",
            "convert",
            tcl.to_str().unwrap(),
            output.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains("is also read by this conversion"),
            "{}",
            stderr(&out)
        );
    }
    assert_eq!(
        std::fs::read(&tcl).unwrap(),
        before,
        "the input is untouched"
    );
    let bm = dir.path().join("b.movements.gz");
    let out = linkrev(&[
        "trace",
        "convert",
        tcl.to_str().unwrap(),
        bm.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let params = std::fs::read(dir.path().join("b.params")).unwrap();
    let out = linkrev(&[
        "trace",
        "convert",
        bm.to_str().unwrap(),
        "--",
        dir.path().join("b.params").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(std::fs::read(dir.path().join("b.params")).unwrap(), params);
}

#[test]
fn algorithms_lists_the_registry_and_readme_shows_it() {
    use linkrev::registry::Algorithm;
    let out = linkrev(&["algorithms", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let listed = listed.as_array().expect("a list");
    assert_eq!(listed.len(), Algorithm::all().len());
    for (entry, algorithm) in listed.iter().zip(Algorithm::all()) {
        assert_eq!(entry["name"], algorithm.name());
        assert_eq!(entry["family"], algorithm.family().name());
        assert_eq!(entry["description"], algorithm.description());
        assert_eq!(
            entry["params"].as_array().map(Vec::len),
            Some(algorithm.params().len())
        );
    }
    let table = linkrev(&["algorithms", "--markdown"]);
    assert!(table.status.success(), "{}", stderr(&table));
    let table = String::from_utf8(table.stdout).unwrap();
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/reference/algorithms.md"),
    )
    .unwrap();
    assert!(
        page.contains(&table),
        "the algorithms reference page is out of date; run `linkrev reference --out \
         docs/src/reference`:\n{table}"
    );
    let text = linkrev(&["algorithms"]);
    let text = String::from_utf8_lossy(&text.stdout);
    for algorithm in Algorithm::all() {
        assert!(text.contains(algorithm.name()), "{text}");
    }
}

#[test]
fn bench_scale_keeps_the_density_in_squares_or_strips() {
    for shape in ["square", "strip"] {
        let out = linkrev(&[
            "bench",
            "scale",
            "--nodes",
            "12,48",
            "--duration",
            "30",
            "--repeats",
            "1",
            "--algo",
            "me-rl",
            "--shape",
            shape,
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        let results: Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let results = results.as_array().unwrap();
        assert_eq!(results.len(), 2);
        for r in results {
            let nodes = r["nodes"].as_f64().unwrap();
            let (w, h) = (
                r["width_m"].as_f64().unwrap(),
                r["height_m"].as_f64().unwrap(),
            );
            // 50 nodes per 1500 m × 300 m: 9,000 m² a node, up to the metre rounding.
            assert!((w * h / nodes - 9_000.0).abs() < 9_000.0 * 0.01, "{r}");
            let aspect = if shape == "square" { 1.0 } else { 5.0 };
            assert!((w / h - aspect).abs() < 0.01, "{r}");
            let (events, changes) = (
                r["events"].as_u64().unwrap(),
                r["topology_changes"].as_u64().unwrap(),
            );
            assert!(changes > 0 && changes < events, "{r}");
        }
        let ratio = results[1]["relative_to_smallest"].as_f64().unwrap();
        let by_hand = results[1]["events_per_s"].as_f64().unwrap()
            / results[0]["events_per_s"].as_f64().unwrap();
        assert!(
            (ratio - by_hand).abs() < 1e-9 * by_hand,
            "{ratio} vs {by_hand}"
        );
    }
}

#[test]
fn bench_protocols_runs_every_registered_algorithm() {
    use linkrev::registry::Algorithm;
    let out = linkrev(&[
        "bench",
        "protocols",
        "--rwp",
        "nodes=8,area=400x400,duration=30",
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let results: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<&str> = results
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["algorithm"].as_str().unwrap())
        .collect();
    assert_eq!(names, Algorithm::names());
    for r in results.as_array().unwrap() {
        assert!(r["events"].as_u64().unwrap() > 0, "{r}");
    }
}

#[test]
fn bench_check_counts_the_same_states_and_their_memory() {
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args([
            "bench",
            "check",
            "--graph",
            "path:3",
            "--changes",
            "1",
            "--requests",
            "1",
            "--max-depth",
            "6",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 4);
    // The plain search and the checker's own, with and without sleep sets, find the
    // same states.
    assert_eq!(rows[0]["states"], rows[1]["states"]);
    assert_eq!(rows[0]["states"], rows[2]["states"]);
    for row in rows {
        let bytes = &row["bytes_per_state"];
        assert!(
            bytes.is_null() || bytes.as_f64().is_some_and(|b| b >= 0.0),
            "{row}"
        );
    }
}
