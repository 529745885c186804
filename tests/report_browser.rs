//! The report in a real browser: headless Chromium opens `index.html`, which must render
//! without console errors, show every figure and the safety box, and every local link
//! must point at a file of the report. A screenshot is kept for a human to look at.
//!
//! Needs `chromium` ([`browser`] says when the test is skipped instead).

#[path = "common/browser.rs"]
mod browser;

use browser::{browse, chromium_or_skip};
use std::path::Path;
use std::process::{Command, Output};

fn linkrev(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev")
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
    let Some(browser) = chromium_or_skip() else {
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

    // No table makes the page scroll sideways at a laptop's width: a copy of the page
    // with a probe script records whether the document is wider than the window.
    let probe = out.join("probe.html");
    // It also counts table headers broken inside a word: a header's words are text
    // nodes between `<wbr>`s, and one drawn on two lines was broken inside.
    let script = "<script>document.body.setAttribute('data-wide', \
                  String(document.documentElement.scrollWidth > \
                  document.documentElement.clientWidth));\
                  let broken = 0; for (const th of document.querySelectorAll('th')) {\
                  for (const n of th.childNodes) { if (n.nodeType !== 3 || /\\s/.test(n.textContent)) continue;\
                  const r = document.createRange(); r.selectNodeContents(n);\
                  const tops = new Set(Array.from(r.getClientRects()).map(x => Math.round(x.top)));\
                  if (tops.size > 1) broken++; } }\
                  document.body.setAttribute('data-broken', String(broken));</script></body>";
    std::fs::write(&probe, page.replace("</body>", script)).unwrap();
    let dom = browse(
        &browser,
        &profile,
        &["--dump-dom", "--window-size=1280,2400"],
        &format!("file://{}", probe.display()),
    );
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(
        dom.contains("data-wide=\"false\""),
        "the report is wider than a 1280-pixel window"
    );
    assert!(
        dom.contains("data-broken=\"0\""),
        "table headers broken inside a word: {}",
        dom.split("data-broken=\"")
            .nth(1)
            .unwrap_or("")
            .split('"')
            .next()
            .unwrap_or("")
    );
}
