//! `linkrev run` end to end: the JSON summary, determinism per seed, and exit code 2 with
//! a message naming the flag for every bad value.

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
        for family in linkrev::family::ALL {
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

/// `--param` is checked against the algorithm's declared parameters, node ids against
/// the run's node count.
#[test]
fn params_are_checked_and_applied() {
    for (algo, param, needle) in [
        (
            "le-malpani",
            "k=2",
            "le-malpani: unknown parameter `k`: this algorithm takes none",
        ),
        (
            "me-rl",
            "k=2",
            "me-rl: unknown parameter `k` (known: holder)",
        ),
        ("me-rl", "holder", "expected KEY=VALUE, got `holder`"),
        ("me-rl", "holder=two", "`two` is not a node id"),
        ("me-rl", "holder=-1", "-1 is out of range"),
        (
            "me-raymond",
            "holder=5",
            "`holder` = 5 is not a node of this run, which has 5 nodes",
        ),
    ] {
        let out = linkrev(&["run", "--algo", algo, "--rwp", "nodes=5", "--param", param]);
        assert_eq!(out.status.code(), Some(2), "{param}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--param") && err.contains(needle),
            "{param}: {err}"
        );
    }
    for algo in ["me-rl", "me-raymond"] {
        let run = |param: Option<&str>| {
            let mut args = vec![
                "run",
                "--algo",
                algo,
                "--rwp",
                "nodes=12,area=600x600,duration=120",
                "--rate",
                "0.5",
                "--seed",
                "2",
                "--json",
            ];
            args.extend(param.map(|p| ["--param", p]).into_iter().flatten());
            summary(&args)
        };
        let (h0, h7) = (run(Some("holder=0")), run(Some("holder=7")));
        assert_eq!(h7["params"]["holder"], 7);
        assert_eq!(h7["safety_violations"], 0, "{algo}: {h7}");
        assert_ne!(
            h0["messages"], h7["messages"],
            "{algo}: the holder has no effect"
        );
        assert_eq!(run(None), h0, "{algo}: the default is node 0");
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
