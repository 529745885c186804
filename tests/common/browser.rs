//! Headless Chromium for the tests that open linkrev's pages (the report, the replay).
//!
//! Needs the `chromium` binary (Debian package `chromium`, which `.ci/run` installs).
//! Without it a test says so and passes, unless LINKREV_REQUIRE_CHROMIUM=1 (set by
//! `.ci/run`), where a missing browser is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The browser on PATH, if any.
pub fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    None
}

/// Flags for a sandbox-less, network-less, GPU-less headless run (CI runs as root in a
/// container, where Chromium's sandbox cannot start).
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-extensions",
    "--disable-sync",
    "--hide-scrollbars",
    "--enable-logging=stderr",
    "--v=0",
];

/// Runs the browser on `url` with a fresh profile in `profile` and the `extra` flags
/// (`--dump-dom`, `--screenshot=…`).
pub fn browse(browser: &Path, profile: &Path, extra: &[&str], url: &str) -> Output {
    let profile_flag = format!("--user-data-dir={}", profile.display());
    Command::new(browser)
        .args(FLAGS)
        .arg(profile_flag)
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium")
}

/// The browser, or `None` after saying the test is skipped; panics when CI requires it.
#[allow(dead_code)] // Not every browser test uses every helper.
pub fn chromium_or_skip() -> Option<PathBuf> {
    let browser = chromium();
    if browser.is_none() {
        assert!(
            std::env::var("LINKREV_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "LINKREV_REQUIRE_CHROMIUM=1 but no chromium on PATH"
        );
        eprintln!("skipped: no chromium on PATH (apt-get install chromium)");
    }
    browser
}

/// Console messages in a run's log (Chromium prints them with `--enable-logging=stderr`).
#[allow(dead_code)]
pub fn console_messages(run: &Output) -> Vec<String> {
    String::from_utf8_lossy(&run.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Uncaught"))
        .map(str::to_string)
        .collect()
}
