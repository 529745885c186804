//! The book (`docs/`) holds together: every page is in `SUMMARY.md` and every entry of
//! it exists, every relative link and anchor resolves, every code block says its
//! language (rustdoc would compile an unmarked block as Rust), every page with Rust
//! examples is compiled as doctests (`src/lib.rs`, module `book`), the README stays a
//! front page, and no file points outside the repository.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown file under `dir`, recursively, sorted.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The text outside fenced code blocks and inline code, line by line: links and
/// headings live there.
fn prose_lines(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Inline code may show link syntax as an example; drop it.
        let mut out = String::new();
        let mut code = false;
        for c in line.chars() {
            if c == '`' {
                code = !code;
                out.push('`');
            } else if !code {
                out.push(c);
            }
        }
        lines.push(out);
    }
    lines
}

/// mdBook's anchor for a heading: its text lowercased, spaces to `-`, and everything
/// but letters, digits, `-` and `_` dropped (markup such as backticks included).
fn slug(heading: &str) -> String {
    let text = strip_links(heading);
    text.chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().next().unwrap())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// `[text](target)` written as `text`.
fn strip_links(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|close| {
            after[close + 2..]
                .find(')')
                .map(|end| (close, close + 2 + end))
        }) {
            Some((close, end)) => {
                out.push_str(&after[..close]);
                rest = &after[end + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The anchors of a page's headings (ATX headings, outside code), as mdBook makes them.
fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut seen = BTreeSet::new();
    let mut out = BTreeSet::new();
    for line in text_lines_outside_fences(&text) {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') {
            let heading = trimmed.trim_start_matches('#').trim();
            let base = slug(heading);
            let mut id = base.clone();
            let mut n = 1;
            while !seen.insert(id.clone()) {
                id = format!("{base}-{n}");
                n += 1;
            }
            out.insert(id);
        }
    }
    out
}

fn text_lines_outside_fences(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// The targets of the Markdown links and images on a line: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        let target = after[..end].split_whitespace().next().unwrap_or("");
        targets.push(target.to_string());
        rest = &after[end + 1..];
    }
    targets
}

/// Checks every relative link of `file` (inside the repository, existing, and with an
/// existing anchor when it names one); returns the problems.
fn check_links(file: &Path, root: &Path, problems: &mut Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap();
    let root = root.canonicalize().unwrap();
    for (n, line) in prose_lines(&text).iter().enumerate() {
        for target in link_targets(line) {
            if target.is_empty()
                || target.starts_with("http://")
                || target.starts_with("https://")
                || target.starts_with("mailto:")
            {
                continue;
            }
            let at = format!("{}:{}", file.display(), n + 1);
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.to_path_buf()
            } else {
                file.parent().unwrap().join(path)
            };
            let Ok(resolved) = resolved.canonicalize() else {
                problems.push(format!("{at}: `{target}` does not exist"));
                continue;
            };
            if !resolved.starts_with(&root) {
                problems.push(format!("{at}: `{target}` is outside the repository"));
                continue;
            }
            if let Some(anchor) = anchor
                && resolved.extension().is_some_and(|e| e == "md")
                && !anchors(&resolved).contains(anchor)
            {
                problems.push(format!(
                    "{at}: `{target}`: no heading with anchor `{anchor}` in {}",
                    resolved.display()
                ));
            }
        }
    }
}

#[test]
fn every_page_is_in_the_summary_and_every_entry_exists() {
    let src = root().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = summary
        .lines()
        .flat_map(link_targets)
        .map(|t| src.join(t))
        .collect();
    for page in &listed {
        assert!(
            page.is_file(),
            "SUMMARY.md lists {}, which is missing",
            page.display()
        );
    }
    for page in markdown_files(&src) {
        if page.file_name().unwrap() != "SUMMARY.md" {
            assert!(
                listed.contains(&page),
                "{} is not in SUMMARY.md: mdBook would not build it",
                page.display()
            );
        }
    }
}

#[test]
fn every_relative_link_resolves() {
    let mut problems = Vec::new();
    let mut files = markdown_files(&root().join("docs/src"));
    for extra in [
        "README.md",
        "CHANGELOG.md",
        "analysis/README.md",
        "reports/README.md",
    ] {
        files.push(root().join(extra));
    }
    for file in &files {
        check_links(file, &root(), &mut problems);
    }
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_link_checker_finds_a_broken_link_and_anchor() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.md");
    std::fs::write(
        &page,
        "# A page\n\n## Two words\n\n[ok](#two-words) [bad](#three) [gone](missing.md)\n\
         `[not a link](nowhere.md)`\n```text\n[in code](nowhere.md)\n```\n",
    )
    .unwrap();
    let mut problems = Vec::new();
    check_links(&page, dir.path(), &mut problems);
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems[0].contains("#three"));
    assert!(problems[1].contains("missing.md"));
    assert_eq!(
        slug("`linkrev check` and [links](x.md)"),
        "linkrev-check-and-links"
    );
}

#[test]
fn every_code_block_names_its_language_and_rust_pages_are_doctested() {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let src = root().join("docs/src");
    for page in markdown_files(&src) {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut fenced = false;
        let mut rust = false;
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if let Some(info) = trimmed.strip_prefix("```") {
                if !fenced {
                    assert!(
                        !info.trim().is_empty(),
                        "{}:{}: a code block without a language (rustdoc would compile \
                         it as Rust): use ```text, ```sh, ```toml …",
                        page.display(),
                        n + 1
                    );
                    rust |= info.trim() == "rust" || info.starts_with("rust,");
                }
                fenced = !fenced;
            }
        }
        if rust {
            let relative = page.strip_prefix(&src).unwrap().to_str().unwrap();
            assert!(
                lib.contains(&format!("\"{relative}\"")),
                "{relative} has Rust examples but is not in src/lib.rs's `book` module, \
                 so they are never compiled"
            );
        }
    }
}

#[test]
fn the_readme_is_a_front_page_and_nothing_points_outside_the_repository() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; the book holds the rest"
    );
    let output = std::process::Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root())
        .output();
    // Without git (a source archive) there is no list of tracked files to search.
    let Ok(output) = output else { return };
    if !output.status.success() {
        return;
    }
    // Spelled in pieces, so that this file does not find itself.
    let outside = ["../", "shared/"].concat();
    let design = ["DESIGN", ".md"].concat();
    let mut found = Vec::new();
    for name in output.stdout.split(|&b| b == 0).filter(|n| !n.is_empty()) {
        let name = String::from_utf8_lossy(name);
        if name.starts_with(".ci/") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root().join(name.as_ref())) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if line.contains(&outside) || line.contains(&design) {
                found.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "references to files outside the repository:\n{}",
        found.join("\n")
    );
}
