//! The tutorials work as written: each page is followed as a reader would, in an empty
//! directory with `linkrev` on the `PATH`. Every file the page asks the reader to create
//! is written from the code block after that request, every `sh` block runs (it must
//! succeed), and every line of the `text` block that shows a command's output must
//! appear in what the commands printed (lines with `…` are elisions and skipped).
//!
//! `cargo install` is the one line not run: the binary under test stands in for it.
//! Lines that call `pdflatex` run only where it is installed (CI installs it).

#[path = "common/figure_outputs.rs"]
mod figure_outputs;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One fenced block: its language and text, the paragraph before it, and all the prose
/// since the block before (where the page says what the previous command exited with).
struct Block {
    lang: String,
    text: String,
    before: String,
    prose: String,
}

fn blocks(page: &str) -> Vec<Block> {
    let mut out = Vec::new();
    // The paragraph being read, and the last one finished (a blank line separates a
    // paragraph from the block it introduces).
    let mut paragraph: Vec<&str> = Vec::new();
    let mut last = String::new();
    let mut prose = String::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        if let Some(lang) = line.trim_start().strip_prefix("```") {
            let mut text = String::new();
            for inner in lines.by_ref() {
                if inner.trim_start().starts_with("```") {
                    break;
                }
                text.push_str(inner);
                text.push('\n');
            }
            let before = if paragraph.is_empty() {
                std::mem::take(&mut last)
            } else {
                paragraph.join(" ")
            };
            out.push(Block {
                lang: lang.trim().to_string(),
                text,
                before,
                prose: std::mem::take(&mut prose),
            });
            paragraph.clear();
            last.clear();
        } else if line.trim().is_empty() {
            if !paragraph.is_empty() {
                last = paragraph.join(" ");
            }
            paragraph.clear();
        } else {
            paragraph.push(line.trim());
            prose.push_str(line.trim());
            prose.push(' ');
        }
    }
    out.push(Block {
        lang: String::new(),
        text: String::new(),
        before: String::new(),
        prose,
    });
    out
}

/// The exit code the prose states ("The exit code is 1."), if it states one.
fn stated_exit_code(prose: &str) -> Option<i32> {
    let (_, rest) = prose.split_once("exit code is ")?;
    rest.split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A line of output as compared: words separated by one space (the page may align
/// columns differently), and wall-clock times (`in 0.5 s`, `total 1.3 s`, `time 0.186
/// s`), which differ from run to run, replaced by `#`.
fn normalise(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    for (i, word) in words.iter().enumerate() {
        let wall = i > 0
            && ["in", "total", "time"].contains(&words[i - 1])
            && words
                .get(i + 1)
                .is_some_and(|u| u.trim_end_matches([';', ',', ')']) == "s")
            && word.parse::<f64>().is_ok();
        out.push(if wall { "#" } else { word });
    }
    out.join(" ")
}

/// The file a paragraph asks the reader to create with the block after it, if any:
/// "Create `dir/file`:" or "Create a directory `dir` and in it `file`:".
fn requested_file(paragraph: &str) -> Option<PathBuf> {
    if !paragraph.ends_with(':') || !paragraph.contains("Create") {
        return None;
    }
    let quoted: Vec<&str> = paragraph.split('`').skip(1).step_by(2).collect();
    let file = *quoted.last()?;
    match paragraph.split_once("directory `") {
        Some((_, rest)) if rest.contains("in it") => {
            let dir = rest.split('`').next()?;
            Some(Path::new(dir).join(file))
        }
        _ => Some(PathBuf::from(file)),
    }
}

/// Follows `page` in a fresh directory; returns how many commands ran.
fn follow(page: &str) -> usize {
    follow_then(page, &|_| {})
}

/// The bound a page states for each of its commands: "every command finishes in under
/// N seconds on 2 cores" (the words may run across lines).
fn stated_bound(text: &str) -> Option<f64> {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let rest = flat.split("every command finishes in under ").nth(1)?;
    let (n, after) = rest.split_once(' ')?;
    after
        .starts_with("seconds on 2 cores")
        .then(|| n.parse().ok())
        .flatten()
}

/// [`follow`], then `after` on the reader's working directory, before it goes.
fn follow_then(page: &str, after: &dyn Fn(&Path)) -> usize {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("docs/src")
            .join(page),
    )
    .unwrap();
    let bound = stated_bound(&text).unwrap_or_else(|| {
        panic!("{page} does not say how long its commands take (\"every command finishes in under N seconds on 2 cores\")")
    });
    let work = tempfile::tempdir().unwrap();
    let bin = work.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_linkrev"), bin.join("linkrev")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // pdflatex with pgfplots, which the figures' .tex files need.
    let has_latex = Command::new("kpsewhich")
        .arg("pgfplots.sty")
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    let dir = work.path().join("reader");
    std::fs::create_dir(&dir).unwrap();
    let mut commands = 0;
    let mut printed: Option<String> = None;
    // The last command block's exit code and text, until the page says what it was.
    let mut pending: Option<(i32, String)> = None;
    for block in blocks(&text) {
        if let Some(code) = stated_exit_code(&block.prose)
            && let Some((status, text)) = pending.take()
        {
            assert_eq!(
                status, code,
                "{page}: the page says exit code {code} after\n{text}"
            );
        }
        if block.lang == "sh"
            && let Some((status, text)) = pending.take()
        {
            assert_eq!(status, 0, "{page}: this block failed:\n{text}");
        }
        if let Some(file) = requested_file(&block.before) {
            let file = dir.join(file);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &block.text).unwrap();
            continue;
        }
        match block.lang.as_str() {
            "sh" => {
                let script: Vec<&str> = block
                    .text
                    .lines()
                    .filter(|l| !l.trim_start().starts_with("cargo install"))
                    .filter(|l| has_latex || !l.contains("pdflatex"))
                    .collect();
                let started = std::time::Instant::now();
                let output = Command::new("sh")
                    .args(["-e", "-c", &script.join("\n")])
                    .current_dir(&dir)
                    .env("PATH", &path)
                    .output()
                    .unwrap();
                // The page's stated bound per command, generously: this binary may be
                // a debug build, and the machine busy.
                let took = started.elapsed().as_secs_f64();
                let lines = script
                    .iter()
                    .filter(|l| !l.trim().is_empty())
                    .count()
                    .max(1);
                let slack = if cfg!(debug_assertions) { 20.0 } else { 2.0 };
                assert!(
                    took <= bound * slack * lines as f64,
                    "{page}: the page says every command finishes in under {bound} s on 2 \
                     cores, but this block of {lines} took {took:.1} s:\n{}",
                    block.text
                );
                let all = format!(
                    "{}{}",
                    String::from_utf8_lossy(&output.stdout),
                    String::from_utf8_lossy(&output.stderr)
                );
                let status = output.status.code().unwrap_or(-1);
                assert!(
                    matches!(status, 0 | 1),
                    "{page}: this block failed:\n{}\n--- output:\n{all}",
                    block.text
                );
                pending = Some((status, block.text.clone()));
                commands += script.iter().filter(|l| !l.trim().is_empty()).count();
                // TeX's own output (page count, byte count) is not linkrev's to check,
                // nor is output of lines skipped for want of TeX.
                let latex = block.text.contains("pdflatex");
                printed = (!latex).then_some(all);
            }
            "text" => {
                // Output shown right after a command; other text blocks (an error a
                // mistake would give, a directory listing) are prose.
                if let Some(printed) = printed.take() {
                    let printed: String = printed.lines().map(|l| normalise(l) + "\n").collect();
                    for line in block.text.lines() {
                        let line = line.trim_end();
                        if line.is_empty() || line.contains('…') {
                            continue;
                        }
                        assert!(
                            printed.contains(&normalise(line)),
                            "{page}: the page shows\n  {line}\nbut the commands printed:\n{printed}"
                        );
                    }
                }
            }
            _ => printed = None,
        }
    }
    if let Some((status, text)) = pending {
        assert_eq!(status, 0, "{page}: this block failed:\n{text}");
    }
    after(&dir);
    commands
}

#[test]
fn your_first_study_works_as_written() {
    // The page says the figure's .tex needs no retouching: compiled, it has the SVG's
    // legend, markers, intervals and ticks, and no legend over data in either.
    let commands = follow_then("tutorials/first-study.md", &|dir| {
        let figures = dir.join("reports/me-small/figures");
        let svg = std::fs::read_to_string(figures.join("wait-vs-rate.svg")).unwrap();
        let tex = std::fs::read_to_string(figures.join("wait-vs-rate.tex")).unwrap();
        let colors = ["#E69F00", "#56B4E9"];
        let drawn_svg = figure_outputs::read_svg(&svg, &colors);
        if !figure_outputs::latex_available() {
            return;
        }
        let work = tempfile::tempdir().unwrap();
        let drawn_tex = figure_outputs::read_tex(&tex, work.path());
        figure_outputs::assert_same_drawing(&drawn_svg, &drawn_tex, 0.015);
        // The same ticks: the .tex lists the SVG's tick labels.
        for tick in ["0.02", "0.05", "0.1", "0.2", "0.5"] {
            assert!(
                svg.contains(&format!("\n{tick}\n</text>")),
                "SVG tick {tick}"
            );
            assert!(tex.contains(&format!("{{{tick}}}")), ".tex tick {tick}");
        }
    });
    assert!(commands >= 6, "{commands} commands");
}

#[test]
fn check_an_algorithm_works_as_written() {
    let commands = follow("tutorials/check-an-algorithm.md");
    assert!(commands >= 5, "{commands} commands");
}

#[test]
fn see_a_run_works_as_written() {
    let commands = follow("tutorials/see-a-run.md");
    assert!(commands >= 3, "{commands} commands");
}

#[test]
fn the_page_reader_finds_files_and_blocks() {
    let page = "Intro.\n\nCreate a directory `d` and in it\n`f.toml`:\n\n```toml\na = 1\n```\n\n\
                Create `d/g.toml`:\n\n```toml\nb = 2\n```\n\n```sh\nlinkrev x\n```\n";
    let found = blocks(page);
    // The three blocks, and the prose after the last.
    assert_eq!(found.len(), 4);
    assert_eq!(
        requested_file(&found[0].before),
        Some(PathBuf::from("d/f.toml"))
    );
    assert_eq!(
        requested_file(&found[1].before),
        Some(PathBuf::from("d/g.toml"))
    );
    assert_eq!(requested_file(&found[2].before), None);
    assert_eq!(found[2].lang, "sh");
    assert_eq!(
        stated_exit_code("It fails. The exit code is 1. Then"),
        Some(1)
    );
    assert_eq!(
        normalise("242 runs simulated in 0.5 s; total 1.3 s, at  250.5 s"),
        "242 runs simulated in # s; total # s, at 250.5 s"
    );
}
