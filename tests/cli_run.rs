//! `linkrev run` end to end: the JSON summary, determinism per seed, and exit code 2 with
//! a message naming the flag for every bad value.

use linkrev::family::Family;
use linkrev::registry::Algorithm;
use serde_json::Value;
use std::process::{Command, Output};

fn linkrev(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
}

fn summary(args: &[&str]) -> Value {
    let out = linkrev(args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    v.as_object_mut().unwrap().remove("wall_time_s");
    v
}

/// Every registered algorithm runs with `linkrev run`, prints the common fields and the
/// metrics its family declares (and no other family's), and depends on its seed only.
#[test]
fn summary_has_the_documented_fields_and_repeats_per_seed() {
    for algorithm in Algorithm::all() {
        let algo = algorithm.name();
        let args = [
            "run",
            "--algo",
            algo,
            "--rwp",
            "nodes=12,area=600x600,duration=120",
            "--seed",
            "7",
            "--json",
        ];
        let a = summary(&args);
        for key in [
            "algorithm",
            "family",
            "params",
            "seed",
            "events",
            "messages",
            "topology_changes",
            "safety_violations",
            "tokens_lost",
            "messages_lost",
        ] {
            assert!(a.get(key).is_some(), "{algo}: {key} missing");
        }
        for family in Family::ALL {
            for metric in family.metrics() {
                assert_eq!(
                    a.get(metric.column).is_some(),
                    family == algorithm.family(),
                    "{algo}: {}",
                    metric.column
                );
            }
        }
        assert_eq!(a["algorithm"], algo);
        assert_eq!(a["family"], algorithm.family().name());
        assert_eq!(
            a["params"].as_object().unwrap().len(),
            algorithm.params().len()
        );
        assert_eq!(a["safety_violations"], 0, "{algo}: {a}");
        assert!(a["events"].as_u64().unwrap() > 0);
        assert_eq!(a, summary(&args), "{algo}: same seed, different result");
        let mut other = args;
        other[6] = "8";
        assert_ne!(a, summary(&other), "{algo}: the seed has no effect");
    }
}

/// `--param` is checked against the algorithm's declared parameters.
#[test]
fn unknown_or_malformed_params_are_refused() {
    for (param, needle) in [
        ("k=2", "unknown parameter `k`: me-rl takes none"),
        ("k", "expected KEY=VALUE, got `k`"),
    ] {
        let out = linkrev(&[
            "run", "--algo", "me-rl", "--rwp", "nodes=5", "--param", param,
        ]);
        assert_eq!(out.status.code(), Some(2), "{param}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--param") && err.contains(needle),
            "{param}: {err}"
        );
    }
}

#[test]
fn shipped_trace_runs() {
    let trace = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/setdest_v1_n20_p10_M10_t200_800x400.tcl"
    );
    let s = summary(&["run", "--algo", "me-raymond", "--trace", trace, "--json"]);
    assert_eq!(s["nodes"], 20);
    // 384 link changes in the footer, all inside the trace's 199.23 s.
    assert_eq!(s["topology_changes"], 384);
}

#[test]
fn bad_values_exit_2_naming_the_flag() {
    let base = [
        "run",
        "--algo",
        "me-raymond",
        "--rwp",
        "nodes=5,duration=10",
    ];
    for (extra, needle) in [
        (vec!["--rate", "-1"], "--rate"),
        (vec!["--range", "0"], "--range"),
        (vec!["--delay", "uniform:5ms:1ms"], "--delay"),
        (vec!["--cs-time", "soon"], "--cs-time"),
        (vec!["--duration", "-3"], "--duration"),
        (vec!["--detection-delay", "3 parsecs"], "--detection-delay"),
    ] {
        let mut args = base.to_vec();
        args.extend(extra.iter());
        let out = linkrev(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{extra:?}: {err}");
    }
    for spec in ["nodes=abc", "speed=9:1", "colour=blue", "area=10"] {
        let out = linkrev(&["run", "--algo", "me-raymond", "--rwp", spec]);
        assert_eq!(out.status.code(), Some(2), "{spec}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("--"),
            "{spec}"
        );
    }
    let out = linkrev(&["run", "--algo", "me-raymond"]);
    assert_eq!(out.status.code(), Some(2), "no mobility given");
    let out = linkrev(&["run", "--algo", "me-raymond", "--trace", "/nonexistent.tcl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent.tcl"));
}
