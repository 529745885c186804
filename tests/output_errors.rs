//! Where a command's output goes can fail: a reader that closes the pipe early
//! (`linkrev algorithms --json | head -c1`) only stops the output, and the command still
//! finishes (and every file it writes); a full device is a clean error, exit 2. Neither
//! is a panic (exit 101, "failed printing to stdout").

use std::process::{Command, Stdio};

/// Commands that print, each quick.
const COMMANDS: &[&[&str]] = &[
    &["algorithms", "--json"],
    &["algorithms"],
    &["run", "--algo", "me-rl", "--rwp", "nodes=5,duration=20"],
    &["sweep", "analysis/me_load.toml", "--dry-run"],
    &[
        "trace",
        "stats",
        "traces/setdest_v1_n20_p10_M10_t200_800x400.tcl",
    ],
];

fn linkrev(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_linkrev"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(Stdio::piped());
    command
}

/// Runs `args` with standard output closed before the command writes anything.
fn with_closed_stdout(args: &[&str]) -> (Option<i32>, String) {
    let mut child = linkrev(args).stdout(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_pipe_stops_only_the_output() {
    for args in COMMANDS {
        let (code, stderr) = with_closed_stdout(args);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("error"), "{args:?}: {stderr}");
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
    }
}

/// `export --csv DIR | head -1`, `replay -o p.html | true`, `check --out D | true` and
/// `reference --out D | true` used to end at their first line of output, leaving 2 of 4
/// CSVs, no page, nothing, or 1 of 5 pages.
#[test]
fn commands_that_write_files_finish_them_whatever_happens_to_stdout() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |name: &str| tmp.path().join(name).to_str().unwrap().to_string();
    let spec = path("small.toml");
    std::fs::write(
        &spec,
        "name = \"small\"\nmaster_seed = 7\nreplications = 2\nalgorithms = [\"me-rl\"]\n\
         [mobility]\nnodes = 6\narea = \"400x300\"\nduration = 20.0\n\
         [workload]\nrate = 0.5\n",
    )
    .unwrap();
    let results = path("results");
    let sweep = linkrev(&["sweep", &spec, "--results", &results])
        .output()
        .unwrap();
    assert!(sweep.status.success(), "{sweep:?}");

    let (code, stderr) = with_closed_stdout(&["export", &results, "--csv"]);
    assert_eq!(code, Some(0), "{stderr}");
    for table in linkrev::results::store::tables() {
        let csv = tmp.path().join("results").join(format!("{table}.csv"));
        assert!(csv.is_file(), "{} missing: {stderr}", csv.display());
    }

    let page = path("p.html");
    let (code, stderr) = with_closed_stdout(&[
        "replay",
        "--algo",
        "me-rl",
        "--rwp",
        "nodes=5,duration=5",
        "-o",
        &page,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(std::fs::metadata(&page).unwrap().len() > 1000);

    let check = path("check");
    let (code, stderr) = with_closed_stdout(&[
        "check",
        "--algo",
        "me-rl",
        "--graph",
        "ring:3",
        "--requests",
        "1",
        "--out",
        &check,
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(tmp.path().join("check/check.json").is_file(), "{stderr}");

    let reference = path("reference");
    let (code, stderr) = with_closed_stdout(&["reference", "--out", &reference]);
    assert_eq!(code, Some(0), "{stderr}");
    let expected = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/reference"))
        .unwrap()
        .count();
    let written = std::fs::read_dir(&reference).unwrap().count();
    assert_eq!(written, expected, "{stderr}");
}

#[test]
fn a_full_device_is_a_clean_error() {
    for args in COMMANDS {
        let full = std::fs::File::create("/dev/full").unwrap();
        let out = linkrev(args).stdout(full).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to standard output: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
