//! `linkrev demo` end to end at its quick size (README's main command at full size):
//! every figure of the built-in figure spec is written with its data, and the report is
//! byte-identical whatever the thread counts (the sweep's and polars').

#[path = "common/report_data.rs"]
mod report_data;

use std::process::{Command, Output};

fn demo(out: &std::path::Path, results: &std::path::Path, threads: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["demo", "--threads", threads, "--out"])
        .arg(out)
        .arg("--results")
        .arg(results)
        .env("LINKREV_DEMO_QUICK", "1")
        // polars' own thread pool too, not only the sweep's workers.
        .env("POLARS_MAX_THREADS", threads)
        .output()
        .expect("run linkrev demo")
}

#[test]
fn quick_demo_writes_every_figure_and_is_thread_count_independent() {
    let tmp = tempfile::tempdir().unwrap();
    let (out1, out2) = (tmp.path().join("r1"), tmp.path().join("r2"));
    let results = tmp.path().join("results");
    let run = demo(&out1, &results, "1");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("linkrev demo (quick)"), "{stderr}");
    let index = out1.join("index.html");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        index.display().to_string()
    );

    // Every [[figure]] of the built-in spec has at least one panel on disk.
    let spec = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("analysis/demo/figures.toml"),
    )
    .unwrap();
    let names: Vec<&str> = spec
        .lines()
        .filter_map(|l| l.strip_prefix("name = \""))
        .map(|l| l.trim_end_matches('"'))
        .collect();
    assert_eq!(names.len(), 15);
    let files: Vec<String> = std::fs::read_dir(out1.join("figures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for name in &names {
        for ext in ["svg", "png", "csv", "tex"] {
            assert!(
                files
                    .iter()
                    .any(|f| f.starts_with(name) && f.ends_with(&format!(".{ext}"))),
                "no {name}*.{ext} in {files:?}"
            );
        }
    }
    let page = std::fs::read_to_string(&index).unwrap();
    assert!(page.contains("demo-me") && page.contains("demo-le"));
    let intervals = report_data::intervals_in_support(&out1.join("data"));
    assert!(intervals > 50, "only {intervals} intervals");
    assert!(page.contains("(ms)"), "no axis was drawn in milliseconds");
    assert!(
        page.contains("Left out of the chart, being zero at every point"),
        "RL's zero route-discovery series was drawn"
    );

    // A second demo (fresh results, two threads) writes the same report, byte for byte.
    let run = demo(&out2, &results, "2");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let relative = |root: &std::path::Path| -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = walk(root)
            .into_iter()
            .map(|p| p.strip_prefix(root).unwrap().to_path_buf())
            .collect();
        v.sort();
        v
    };
    assert_eq!(relative(&out1), relative(&out2), "the same files");
    for entry in walk(&out1) {
        let rel = entry.strip_prefix(&out1).unwrap();
        let a = std::fs::read(&entry).unwrap();
        let b = std::fs::read(out2.join(rel)).unwrap();
        assert!(a == b, "{} differs between thread counts", rel.display());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn demo_refuses_an_output_directory_that_is_not_a_report_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("thesis");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("chapter1.tex"), "precious").unwrap();
    let results = tmp.path().join("results");
    let run = demo(&out, &results, "1");
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("was not written whole by this linkrev"));
    assert!(!results.exists(), "nothing simulated");
    assert!(out.join("chapter1.tex").is_file());
}

#[test]
fn demo_refuses_results_another_process_is_writing_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let busy = results.join("demo-me");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("spec.toml"), "name = \"demo-me\"\n").unwrap();
    std::fs::write(busy.join(".linkrev-demo"), "made by the demo").unwrap();
    // This test process holds the directory, as a demo or sweep still running would.
    let held = linkrev::results::lock::DirLock::exclusive(&busy).unwrap();
    let run = demo(&tmp.path().join("report"), &results, "1");
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!("in use by pid {}", std::process::id())),
        "{err}"
    );
    assert!(busy.join("spec.toml").is_file(), "not cleared");
    drop(held);
}

/// A results directory of the user's own sweep where the demo writes its results is
/// refused, not cleared: only directories the demo marked as its own are.
#[test]
fn demo_refuses_results_of_a_sweep_of_the_users() {
    let tmp = tempfile::tempdir().unwrap();
    let results = tmp.path().join("results");
    let mine = results.join("demo-me");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("spec.toml"), "name = \"demo-me\"\n").unwrap();
    let run = demo(&tmp.path().join("report"), &results, "1");
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.contains("is not a results directory of the demo's"),
        "{err}"
    );
    assert!(mine.join("spec.toml").is_file(), "not cleared");
}
