//! The replay page in a real browser: headless Chromium opens `linkrev replay`'s page
//! at a chosen time; the page must load without console errors, draw one node element
//! per node, and draw every link with the orientation the simulator's nodes had at that
//! time (the `--snapshot` the run wrote from the nodes themselves, not from the recorded
//! deltas the page replays). Screenshots before and after a topology change differ
//! where the change is and nowhere far from it.

#[path = "common/browser.rs"]
mod browser;

use browser::{browse, chromium_or_skip, console_messages};
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn linkrev(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(args)
        .output()
        .expect("run linkrev");
    assert!(
        out.status.success(),
        "linkrev {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The value of `name="…"` in one tag's text.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&tag[start..start + tag[start..].find('"')?])
}

/// Every start tag `<element …>` whose class list contains `class`.
fn tags<'a>(dom: &'a str, element: &str, class: &str) -> Vec<&'a str> {
    dom.match_indices(&format!("<{element} "))
        .map(|(i, _)| &dom[i..i + dom[i..].find('>').unwrap()])
        .filter(|t| attr(t, "class").is_some_and(|c| c.split(' ').any(|w| w == class)))
        .collect()
}

/// Links as drawn: `(lo, hi, dir)` with `dir` 1 for an arrow lo → hi, -1 for hi → lo,
/// 0 for none.
fn drawn_links(dom: &str) -> BTreeSet<(u32, u32, i8)> {
    tags(dom, "line", "link")
        .into_iter()
        .map(|t| {
            let num = |n: &str| attr(t, n).map(|v| v.parse::<u32>().unwrap());
            let (a, b) = (num("data-a").unwrap(), num("data-b").unwrap());
            let (lo, hi) = (a.min(b), a.max(b));
            let dir = match (num("data-from"), num("data-to")) {
                (Some(f), Some(_)) if f == lo => 1,
                (Some(_), Some(_)) => -1,
                _ => 0,
            };
            (lo, hi, dir)
        })
        .collect()
}

/// Writes the replay page and snapshot of `source` (the replay's input arguments) up to
/// `at` seconds, opens the page at `#t={at}{fragment}` and returns the DOM Chromium
/// dumped and the snapshot (the simulator's state at `at`).
fn page_at(
    chromium: &Path,
    tmp: &Path,
    name: &str,
    source: &[&str],
    at: &str,
    fragment: &str,
) -> (String, serde_json::Value) {
    let page = tmp.join(format!("{name}.html"));
    let snapshot = tmp.join(format!("{name}.json"));
    let mut args = vec!["replay"];
    args.extend_from_slice(source);
    args.extend([
        "--to",
        at,
        "--snapshot",
        snapshot.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ]);
    linkrev(&args);
    let url = format!("file://{}#t={at}{fragment}", page.display());
    let run = browse(
        chromium,
        &tmp.join("profile"),
        &["--dump-dom", "--window-size=1200,800"],
        &url,
    );
    assert!(run.status.success(), "{name}: chromium failed");
    assert_eq!(console_messages(&run), Vec::<String>::new(), "{name}");
    let snap = serde_json::from_slice(&std::fs::read(&snapshot).unwrap()).unwrap();
    (String::from_utf8_lossy(&run.stdout).into_owned(), snap)
}

#[test]
fn the_page_shows_the_simulators_state_at_a_chosen_time() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // One algorithm of each family: heights (RL, leader election, routes) all orient links.
    for (algo, nodes, at) in [
        ("me-rl", 14, "41.3"),
        ("le-malpani", 12, "57.9"),
        ("gb-partial", 12, "23.45"),
    ] {
        let rwp = format!("nodes={nodes},area=800x300,duration=60");
        // Node 3's panel open: its state text must be the one the snapshot has.
        let (dom, snap) = page_at(
            &chromium,
            tmp.path(),
            algo,
            &["--algo", algo, "--rwp", &rwp, "--seed", "4"],
            at,
            "&node=3",
        );
        assert_eq!(
            tags(&dom, "g", "node").len(),
            nodes,
            "{algo}: node elements"
        );
        let expected: BTreeSet<(u32, u32, i8)> = snap["links"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| {
                let n = |i: usize| l[i].as_i64().unwrap();
                (n(0) as u32, n(1) as u32, n(2) as i8)
            })
            .collect();
        assert!(expected.len() >= 5, "{algo}: a connected enough network");
        assert!(
            expected.iter().all(|l| l.2 != 0),
            "{algo}: every link oriented"
        );
        assert_eq!(drawn_links(&dom), expected, "{algo} at {at} s");
        assert_eq!(sink_dots(&dom), sinks(&snap), "{algo}: sink dots");
        let panel = &dom[dom.find("id=\"p-state\"").unwrap()..];
        let panel = &panel[panel.find('>').unwrap() + 1..panel.find("</pre>").unwrap()];
        let want = snap["nodes"][3]["state"].as_str().unwrap();
        assert_eq!(panel.trim_end(), want.trim_end(), "{algo}: node 3's panel");
        // Each leader-election node names the leader it believes in, as the snapshot has it.
        if algo.starts_with("le-") {
            let subs: Vec<String> = dom
                .split("<text class=\"sub\"")
                .skip(1)
                .map(|t| t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()].to_string())
                .collect();
            let leaders: Vec<String> = snap["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| format!("L{}", n["leader"]))
                .collect();
            assert_eq!(subs, leaders, "{algo}: leader labels");
        }
    }
}

/// The nodes a snapshot says should carry the sink dot: every link points to them
/// (arrows point to the lower height) and they are not the leader, destination or token
/// holder, whose being a sink is the algorithms' aim.
fn sinks(snap: &serde_json::Value) -> BTreeSet<u32> {
    let nodes = snap["nodes"].as_array().unwrap();
    let mut into = vec![0; nodes.len()];
    let mut out = vec![0; nodes.len()];
    for l in snap["links"].as_array().unwrap() {
        let (lo, hi, dir) = (
            l[0].as_u64().unwrap(),
            l[1].as_u64().unwrap(),
            l[2].as_i64().unwrap(),
        );
        if dir == 0 {
            continue;
        }
        let (from, to) = if dir > 0 { (lo, hi) } else { (hi, lo) };
        into[to as usize] += 1;
        out[from as usize] += 1;
    }
    (0..nodes.len())
        .filter(|&i| {
            let flags = nodes[i]["flags"].as_array().unwrap();
            let aimed = ["leader", "destination", "token"]
                .iter()
                .any(|f| flags.iter().any(|g| g == f));
            into[i] > 0 && out[i] == 0 && !aimed
        })
        .map(|i| i as u32)
        .collect()
}

/// The nodes drawn with the sink dot.
fn sink_dots(dom: &str) -> BTreeSet<u32> {
    tags(dom, "g", "f-sink")
        .iter()
        .map(|t| attr(t, "data-id").unwrap().parse().unwrap())
        .collect()
}

/// The slides' worked examples pass through states with sinks that must reverse: the
/// page marks exactly those, at each step.
#[test]
fn the_sink_dot_marks_the_nodes_that_must_reverse() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut marked = 0;
    for (scenario, at) in [
        ("slides-le-a", "0.000002"),
        ("slides-le-b", "0.000004"),
        ("slides-rl", "0.000005"),
        ("slides-rl", "0.000008"),
    ] {
        let (dom, snap) = page_at(
            &chromium,
            tmp.path(),
            &format!("{scenario}-{at}"),
            &["--scenario", scenario],
            at,
            "",
        );
        let want = sinks(&snap);
        marked += want.len();
        assert_eq!(sink_dots(&dom), want, "{scenario} at {at} s");
    }
    assert!(marked >= 3, "the chosen steps hold sinks ({marked})");
}

/// Pixel `(x, y)` of a screenshot, as RGB.
fn pixel(image: &image::RgbImage, x: f64, y: f64) -> [u8; 3] {
    image.get_pixel(x.round() as u32, y.round() as u32).0
}

/// Where a point of the drawing (in the page's viewBox units) lands on the screen.
fn to_screen(dom: &str, x: f64, y: f64) -> (f64, f64) {
    let svg = &dom[dom.find("<svg").unwrap()..];
    let svg = &svg[..svg.find('>').unwrap()];
    let numbers = |s: &str, sep: char| -> Vec<f64> {
        s.split(sep).map(|v| v.trim().parse().unwrap()).collect()
    };
    let view = numbers(attr(svg, "viewBox").unwrap(), ' ');
    let rect = numbers(attr(svg, "data-rect").unwrap(), ',');
    // preserveAspectRatio="xMidYMid meet": scaled to fit, centred.
    let scale = (rect[2] / view[2]).min(rect[3] / view[3]);
    (
        rect[0] + (rect[2] - view[2] * scale) / 2.0 + (x - view[0]) * scale,
        rect[1] + (rect[3] - view[3] * scale) / 2.0 + (y - view[1]) * scale,
    )
}

/// A node's centre in viewBox units, from its `translate(x,y)`.
fn node_centre(dom: &str, id: u32) -> (f64, f64) {
    let tag = tags(dom, "g", "node")
        .into_iter()
        .find(|t| attr(t, "data-id") == Some(&id.to_string()))
        .unwrap();
    let transform = attr(tag, "transform").unwrap();
    let inside = &transform[transform.find('(').unwrap() + 1..transform.find(')').unwrap()];
    let xy: Vec<f64> = inside
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect();
    (xy[0], xy[1])
}

#[test]
fn a_topology_change_changes_the_picture_where_it_happens() {
    let Some(chromium) = chromium_or_skip() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("le-b.html");
    // The slides' seven-node example: its first event is the failure of A–E (0–4), and
    // its nodes do not move, so only what the change did may differ.
    linkrev(&[
        "replay",
        "--scenario",
        "slides-le-b",
        "-o",
        page.to_str().unwrap(),
    ]);
    // Tall enough that the drawing's size follows the window's width, which is the same
    // for a screenshot and a DOM dump (the height Chromium leaves the page is not).
    let window = "--window-size=1200,2000";
    let shot = |event: &str, name: &str| {
        let png = tmp.path().join(name);
        let url = format!("file://{}#event={event}", page.display());
        let flags = [&format!("--screenshot={}", png.display()) as &str, window];
        let run = browse(&chromium, &tmp.path().join("profile"), &flags, &url);
        assert!(run.status.success());
        assert_eq!(console_messages(&run), Vec::<String>::new());
        let dom = browse(
            &chromium,
            &tmp.path().join("profile"),
            &["--dump-dom", window],
            &url,
        );
        (
            image::open(&png).unwrap().to_rgb8(),
            String::from_utf8_lossy(&dom.stdout).into_owned(),
        )
    };
    let (before, dom_before) = shot("-1", "before.png");
    let (after, dom_after) = shot("0", "after.png");
    assert!(
        drawn_links(&dom_before)
            .iter()
            .any(|l| (l.0, l.1) == (0, 4))
    );
    assert!(!drawn_links(&dom_after).iter().any(|l| (l.0, l.1) == (0, 4)));
    // The middle of the failed link A–E: drawn before, gone (or flashing) after.
    let (a, e) = (node_centre(&dom_before, 0), node_centre(&dom_before, 4));
    let mid = to_screen(&dom_before, (a.0 + e.0) / 2.0, (a.1 + e.1) / 2.0);
    let around = |image: &image::RgbImage| -> Vec<[u8; 3]> {
        let offsets = [-2.0, -1.0, 0.0, 1.0, 2.0];
        offsets
            .iter()
            .flat_map(|&dx| offsets.iter().map(move |&dy| (dx, dy)))
            .map(|(dx, dy)| pixel(image, mid.0 + dx, mid.1 + dy))
            .collect()
    };
    assert_ne!(
        around(&before),
        around(&after),
        "the link's middle at {mid:?}"
    );
    // Far from A and its links: node C (2, isolated) and the link G–H (6–7) look the same.
    for (x, y) in [node_centre(&dom_before, 2), {
        let (g, h) = (node_centre(&dom_before, 6), node_centre(&dom_before, 7));
        ((g.0 + h.0) / 2.0, (g.1 + h.1) / 2.0)
    }] {
        let (sx, sy) = to_screen(&dom_before, x, y);
        for dx in [-4.0, 0.0, 4.0] {
            for dy in [-4.0, 0.0, 4.0] {
                assert_eq!(
                    pixel(&before, sx + dx, sy + dy),
                    pixel(&after, sx + dx, sy + dy),
                    "unchanged part at ({sx}, {sy})"
                );
            }
        }
    }
}
