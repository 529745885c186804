//! The report in a real browser: headless Chromium opens `index.html`, which must render
//! without console errors, show every figure and the safety box, and every local link
//! must point at a file of the report. A screenshot is kept for a human to look at.
//!
//! Needs the `chromium` binary (Debian package `chromium`, which `.ci/run` installs).
//! Without it the test says so and passes, unless LINKREV_REQUIRE_CHROMIUM=1 (set by
//! `.ci/run`), where a missing browser is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn linkrev(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
}

fn chromium() -> Option<PathBuf> {
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

fn browse(browser: &Path, profile: &Path, extra: &[&str], url: &str) -> Output {
    let profile_flag = format!("--user-data-dir={}", profile.display());
    Command::new(browser)
        .args(FLAGS)
        .arg(profile_flag)
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium")
}

/// Local targets of `href="..."` and `src="..."` attributes.
fn local_links(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for piece in page.split(attr).skip(1) {
            let target = &piece[..piece.find('"').unwrap_or(0)];
            if !target.contains("://") && !target.starts_with('#') && !target.is_empty() {
                out.push(target.to_string());
            }
        }
    }
    out
}

#[test]
fn report_renders_in_headless_chromium_without_console_errors() {
    let Some(browser) = chromium() else {
        assert!(
            std::env::var("LINKREV_REQUIRE_CHROMIUM").as_deref() != Ok("1"),
            "LINKREV_REQUIRE_CHROMIUM=1 but no chromium on PATH"
        );
        eprintln!("skipped: no chromium on PATH (apt-get install chromium)");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let results = tmp.path().join("results");
    let demo = linkrev(&[
        "demo",
        "--quick",
        "--out",
        out.to_str().unwrap(),
        "--results",
        results.to_str().unwrap(),
    ]);
    assert!(
        demo.status.success(),
        "{}",
        String::from_utf8_lossy(&demo.stderr)
    );
    let index = out.join("index.html");
    let page = std::fs::read_to_string(&index).unwrap();
    let links = local_links(&page);
    assert!(links.len() > 20, "{links:?}");
    for link in &links {
        assert!(out.join(link).is_file(), "broken link {link}");
    }

    let url = format!("file://{}", index.display());
    let profile = tmp.path().join("profile");
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-screenshot.png");
    let _ = std::fs::remove_file(&screenshot);
    let shot = format!("--screenshot={}", screenshot.display());
    let run = browse(
        &browser,
        &profile,
        &[&shot, "--window-size=1280,2400"],
        &url,
    );
    let log = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "chromium failed: {log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");

    // The screenshot is a real rendering: right size, and far from blank.
    let image = image::open(&screenshot).expect("screenshot").to_rgb8();
    assert_eq!(image.dimensions(), (1280, 2400));
    let inked = image
        .pixels()
        .filter(|p| p.0.iter().any(|&c| c < 200))
        .count();
    assert!(
        inked > 20_000,
        "only {inked} non-white pixels in {}",
        screenshot.display()
    );
    eprintln!("screenshot: {}", screenshot.display());

    // The DOM the browser built holds every figure and the safety box.
    let dom = browse(&browser, &profile, &["--dump-dom"], &url);
    assert!(dom.status.success());
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert_eq!(dom.matches("<svg").count(), page.matches("<svg").count());
    assert!(page.matches("<svg").count() >= 12);
    assert!(dom.contains("id=\"safety\""));
}
