//! A plan near the run limit is planned in bounded memory: its runs are kept as compact
//! slots and built when asked for. Its own test binary, so that the process's peak
//! memory (VmHWM, Linux) is this test's alone.

use linkrev::sweep::specs;

/// Peak resident memory of this process so far, bytes (Linux).
fn peak_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[test]
fn a_plan_of_two_million_runs_stays_under_200_mb() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.toml");
    std::fs::write(
        &path,
        "name = \"big\"\nmaster_seed = 1\nreplications = 995000\n\
         algorithms = [\"me-rl\", \"me-raymond\"]\n\n[mobility]\nnodes = 20\nduration = 100.0\n\n\
         [workload]\nrate = 0.1\n",
    )
    .unwrap();
    let plan = specs::plan_from_file(&path).unwrap();
    assert_eq!(plan.runs.len(), 1_990_000);
    // Every run is still there, built on demand, with its key and seed.
    let last = plan.runs.last().unwrap();
    assert_eq!(last.index, 1_989_999);
    assert_eq!(last.key, "big/algo=me-raymond/rep=994999");
    assert_eq!(
        plan.node_seconds(),
        Some(1_990_000.0 * 20.0 * 100.0),
        "node-seconds without building the runs"
    );
    if let Some(peak) = peak_memory() {
        assert!(
            peak < 200 * 1024 * 1024,
            "planning took {} MB",
            peak / (1024 * 1024)
        );
    }
}
