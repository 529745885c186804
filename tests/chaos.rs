//! Chaos, seeded and short: the ways a user's data used to be lost or mixed, together
//! on one study, through the binary. Sweeps killed at random moments (many of them
//! while the tables are compacted), a side file of a trace (BonnMotion's `.params`,
//! which sets the trace's duration) edited between two shards, commands whose standard
//! output is closed, a disk that fills mid-sweep (a small tmpfs, when the test runs as
//! root; skipped with a notice otherwise) and a report aimed at a directory of the
//! user's. Whatever happens, every table that ends up complete is byte-identical to a
//! clean run's, and no file of the user's is touched.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn linkrev(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
}

fn ok(args: &[&str]) {
    let out = linkrev(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Exit code 2 with `needle` in the message.
fn refused(args: &[&str], needle: &str) {
    let out = linkrev(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
}

fn tables(dir: &Path) -> Vec<Vec<u8>> {
    linkrev::results::store::tables()
        .iter()
        .map(|t| std::fs::read(dir.join(format!("{t}.parquet"))).expect("compacted table"))
        .collect()
}

/// Every file under `root` with its bytes.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// A fixed linear congruential sequence: the same chaos on every machine.
struct Seeded(u64);

impl Seeded {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

/// A tmpfs mounted for the test, unmounted when dropped.
struct SmallDisk(PathBuf);

impl SmallDisk {
    /// A tmpfs of `size` at `dir`, if this process may mount one (root).
    fn mount(dir: &Path, size: &str) -> Option<SmallDisk> {
        std::fs::create_dir_all(dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .stderr(Stdio::null())
            .status()
            .ok()?;
        status.success().then(|| SmallDisk(dir.to_path_buf()))
    }

    fn resize(&self, size: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .status()
            .unwrap();
        assert!(status.success(), "remounting {}", self.0.display());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn chaos_ends_in_the_clean_tables_and_touches_no_user_file() {
    let tmp = tempfile::tempdir().unwrap();
    let user = tmp.path().join("user");
    let traces = user.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    // A BonnMotion trace (movements and params) made from a setdest trace of the repo.
    let setdest = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces/setdest_v1_n20_p10_M10_t200_800x400.tcl");
    let movements = traces.join("a.movements.gz");
    ok(&[
        "trace",
        "convert",
        setdest.to_str().unwrap(),
        movements.to_str().unwrap(),
    ]);
    let params = traces.join("a.params");
    let params_text = std::fs::read_to_string(&params).unwrap();
    let shortened: String = params_text
        .lines()
        .map(|line| match line.starts_with("duration=") {
            true => "duration=100\n".to_string(),
            false => format!("{line}\n"),
        })
        .collect();
    assert_ne!(shortened, params_text);
    // No duration in the spec: the params file sets it.
    let spec = user.join("study.toml");
    std::fs::write(
        &spec,
        "name = \"chaos\"\nmaster_seed = 11\nreplications = 3\n\
         algorithms = [\"me-rl\", \"me-raymond\"]\n\
         [mobility]\ntraces = [\"traces/a.movements.gz\"]\n\
         [workload]\nrate = [0.2, 0.6]\n",
    )
    .unwrap();
    // A directory of the user's that happens to hold an index.html.
    let site = user.join("site");
    std::fs::create_dir_all(site.join("photos")).unwrap();
    std::fs::write(site.join("index.html"), "<p>my page</p>").unwrap();
    std::fs::write(site.join("precious.txt"), "mine").unwrap();
    std::fs::write(site.join("photos/cat.jpg"), [0xff, 0xd8, 0xff]).unwrap();
    let before = snapshot(&user);
    let spec = spec.to_str().unwrap();
    let out = tmp.path().join("out");
    let dir = |name: &str| out.join(name).to_str().unwrap().to_string();

    // The truth: one clean sweep, and its CSV export.
    let started = Instant::now();
    let clean = dir("clean");
    ok(&["sweep", spec, "--results", &clean]);
    let sweep_time = started.elapsed();
    ok(&["export", &clean, "--csv"]);
    let truth = tables(Path::new(&clean));
    let mut chaos = Seeded(0x5eed_0052);

    // Kills: each at a random moment of a sweep, most in its last third, where the
    // tables are compacted; the sweep resumed each time.
    let killed = dir("killed");
    for _ in 0..6 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_linkrev"))
            .args(["sweep", spec, "--results", &killed])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let at = sweep_time.as_millis() as u64 * (40 + chaos.below(80)) / 100;
        std::thread::sleep(Duration::from_millis(at));
        let _ = child.kill();
        let _ = child.wait();
    }
    ok(&["sweep", spec, "--results", &killed]);
    assert_eq!(tables(Path::new(&killed)), truth, "killed and resumed");

    // The params file edited between two shards: the second shard and merge refuse,
    // naming it; restored, the shards complete to the clean tables.
    let mixed = dir("mixed");
    ok(&["sweep", spec, "--results", &mixed, "--shard", "1/2"]);
    std::fs::write(&params, &shortened).unwrap();
    refused(
        &["sweep", spec, "--results", &mixed, "--shard", "2/2"],
        "a.params",
    );
    refused(&["merge", &mixed], "a.params");
    std::fs::write(&params, &params_text).unwrap();
    ok(&["sweep", spec, "--results", &mixed, "--shard", "2/2"]);
    ok(&["merge", &mixed]);
    assert_eq!(tables(Path::new(&mixed)), truth, "shards");

    // A closed standard output: the export still writes every CSV, as the clean one.
    let mut child = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["export", &mixed, "--csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let export = child.wait_with_output().unwrap();
    assert_eq!(export.status.code(), Some(0), "{export:?}");
    for table in linkrev::results::store::tables() {
        let name = format!("{table}.csv");
        assert_eq!(
            std::fs::read(Path::new(&mixed).join(&name)).unwrap(),
            std::fs::read(Path::new(&clean).join(&name)).unwrap(),
            "{name}"
        );
    }

    // A full disk: the sweep fails cleanly, nothing truncated is kept (a report reads
    // what is there), and with room again the sweep completes to the clean tables.
    match SmallDisk::mount(&out.join("disk"), "96k") {
        None => eprintln!("chaos: not root (or no tmpfs): the full-disk probe is skipped"),
        Some(disk) => {
            let full = dir("disk/results");
            let out = linkrev(&["sweep", spec, "--results", &full]);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{err}");
            assert!(err.contains("No space left on device"), "{err}");
            assert_eq!(err.matches("os error 28").count(), 1, "said once: {err}");
            let report = linkrev(&["report", &full, "--out", &dir("disk-report")]);
            let report_err = String::from_utf8_lossy(&report.stderr);
            assert!(!report_err.contains("PAR1"), "{report_err}");
            disk.resize("64m");
            ok(&["sweep", spec, "--results", &full]);
            assert_eq!(tables(Path::new(&full)), truth, "after a full disk");
        }
    }

    // A report aimed at the user's directory is refused, and a report of linkrev's own
    // is replaced with nothing left beside it.
    let site = site.to_str().unwrap();
    refused(&["report", &clean, "--out", site], ".linkrev-manifest");
    let report = dir("report");
    ok(&["report", &clean, "--out", &report]);
    ok(&["report", &killed, "--out", &report]);
    let beside: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with(".linkrev"))
        .collect();
    assert!(beside.is_empty(), "left beside the report: {beside:?}");

    assert!(
        snapshot(&user) == before,
        "a file of the user's was touched"
    );
}
