//! Directories linkrev writes whole (a report): built beside their destination, moved
//! into place in one rename, and replaced later only while they hold nothing but what
//! linkrev wrote.
//!
//! The proof is a manifest, [`MANIFEST`], written last into the directory: every file
//! (with its size) and every subdirectory linkrev put there. A directory is replaced
//! only if it is absent, empty, or holds exactly what its manifest lists at the listed
//! sizes; anything else (a file of the user's dropped into a report, an `index.html`
//! the user wrote, a report edited by hand) makes linkrev refuse, naming the first path
//! it cannot account for. An older report without a manifest is refused too: nothing
//! proves that every file in it came from linkrev.
//!
//! Leftovers of killed processes (the staging directory, or the previous report moved
//! aside) are named `.linkrev-<kind>-<host>-<pid>-…`; the next run on the same host
//! removes those whose process is gone.

use anyhow::{Context as _, bail};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The manifest's file name inside a directory linkrev wrote.
pub const MANIFEST: &str = ".linkrev-manifest";

const HEADER: &str = "# linkrev: what this directory holds, as linkrev wrote it. linkrev \
                      replaces the directory only while it holds exactly this.";

/// What a directory holds: relative paths (`/`-separated) with `Some(size)` for a file
/// and `None` for a directory; anything else (a symlink, a socket) is `Err(path)`.
fn contents(root: &Path) -> anyhow::Result<Result<BTreeMap<String, Option<u64>>, String>> {
    let mut found = BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = stack.pop() {
        for entry in
            std::fs::read_dir(&dir).with_context(|| format!("listing {}", dir.display()))?
        {
            let entry = entry.with_context(|| format!("listing {}", dir.display()))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let relative = format!("{prefix}{name}");
            let kind = entry
                .file_type()
                .with_context(|| format!("reading {}", entry.path().display()))?;
            if kind.is_dir() {
                found.insert(relative.clone(), None);
                stack.push((entry.path(), format!("{relative}/")));
            } else if kind.is_file() {
                let size = entry
                    .metadata()
                    .with_context(|| format!("reading {}", entry.path().display()))?
                    .len();
                found.insert(relative, Some(size));
            } else {
                return Ok(Err(relative));
            }
        }
    }
    Ok(Ok(found))
}

/// The manifest's text for `entries` (manifest itself left out).
fn render(entries: &BTreeMap<String, Option<u64>>) -> String {
    let mut text = format!("{HEADER}\n");
    for (path, size) in entries {
        match size {
            Some(size) => text.push_str(&format!("{size} {path}\n")),
            None => text.push_str(&format!("- {path}/\n")),
        }
    }
    text
}

fn parse(text: &str) -> Option<BTreeMap<String, Option<u64>>> {
    let mut entries = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (size, path) = line.split_once(' ')?;
        match size {
            "-" => entries.insert(path.strip_suffix('/')?.to_string(), None),
            _ => entries.insert(path.to_string(), Some(size.parse().ok()?)),
        };
    }
    Some(entries)
}

/// Writes the manifest of everything `dir` holds now.
fn write_manifest(dir: &Path) -> anyhow::Result<()> {
    let entries = match contents(dir)? {
        Ok(entries) => entries,
        Err(odd) => bail!("{}: {odd} is not a file or directory", dir.display()),
    };
    let path = dir.join(MANIFEST);
    crate::output::write_atomically(&path, |w| w.write_all(render(&entries).as_bytes()))
        .with_context(|| format!("writing {}", path.display()))
}

/// Refuses (naming what it cannot account for) unless `out` may be replaced: absent,
/// empty, or holding exactly what its manifest lists. Called before any work, so that a
/// wrong `--out` fails at once, and again just before the replacement.
pub fn check_replaceable(out: &Path) -> anyhow::Result<()> {
    let meta = match std::fs::symlink_metadata(out) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", out.display())),
    };
    if !meta.is_dir() {
        bail!(
            "{} exists and is not a directory: choose another --out",
            out.display()
        );
    }
    let mut found = match contents(out)? {
        Ok(found) => found,
        Err(odd) => bail!(
            "{} holds {odd}, which linkrev did not write (not a plain file or directory): \
             choose another --out, or move it out",
            out.display()
        ),
    };
    if found.is_empty() {
        return Ok(());
    }
    let Some(size) = found.remove(MANIFEST) else {
        bail!(
            "{} exists and was not written whole by this linkrev (it has no {MANIFEST}): \
             linkrev replaces only directories it can prove it wrote; choose another --out, \
             or remove it yourself",
            out.display()
        );
    };
    let manifest = out.join(MANIFEST);
    let listed = std::fs::read_to_string(&manifest)
        .ok()
        .filter(|_| size.is_some())
        .and_then(|text| parse(&text))
        .with_context(|| format!("{} is not a linkrev manifest", manifest.display()))?;
    for (path, size) in &found {
        match listed.get(path) {
            Some(was) if was == size => {}
            Some(_) => bail!(
                "{} was changed after linkrev wrote it: linkrev will not replace {}; choose \
                 another --out, or move the file out",
                out.join(path).display(),
                out.display()
            ),
            None => bail!(
                "{} was not written by linkrev: linkrev will not replace {}, which holds it; \
                 choose another --out, or move it out",
                out.join(path).display(),
                out.display()
            ),
        }
    }
    Ok(())
}

/// A directory being built beside its destination.
pub struct Staged {
    dir: tempfile::TempDir,
    out: PathBuf,
    /// Where the previous `out` moves while the new one takes its place.
    aside: PathBuf,
}

/// Removes the leftovers of killed processes on this host beside `out`: staging
/// directories and previous directories moved aside.
fn remove_leftovers(parent: &Path, kind: &str) {
    for path in crate::output::abandoned(parent, kind) {
        if path.is_dir() {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// Starts a directory of `kind` (`report`) that will replace `out`: refuses an `out`
/// linkrev cannot replace, clears leftovers of killed runs, and creates the staging
/// directory beside `out`.
pub fn stage(out: &Path, kind: &str) -> anyhow::Result<Staged> {
    check_replaceable(out)?;
    let parent = crate::output::parent_dir(out);
    std::fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    remove_leftovers(parent, kind);
    // `.linkrev-KIND-HOST-PID-`: what a later run recognises as a leftover of ours.
    let mine = format!(
        "{}{}-",
        crate::output::leftover_prefix(kind),
        std::process::id()
    );
    let dir = crate::output::staging_dir(parent, &mine)
        .with_context(|| format!("creating a staging directory in {}", parent.display()))?;
    Ok(Staged {
        dir,
        out: out.to_path_buf(),
        aside: parent.join(format!("{mine}old")),
    })
}

impl Staged {
    /// Where to write the directory's files.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes the manifest and moves the directory into place, replacing `out` (checked
    /// again: it may have changed while the directory was built).
    pub fn commit(self) -> anyhow::Result<()> {
        write_manifest(self.dir.path())?;
        check_replaceable(&self.out)?;
        let staged = self.dir.keep();
        let old = match std::fs::rename(&self.out, &self.aside) {
            Ok(()) => Some(&self.aside),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&staged);
                return Err(e)
                    .with_context(|| format!("moving the previous {} aside", self.out.display()));
            }
        };
        if let Err(e) = std::fs::rename(&staged, &self.out) {
            let _ = std::fs::remove_dir_all(&staged);
            if let Some(old) = &old {
                let _ = std::fs::rename(old, &self.out);
            }
            return Err(e)
                .with_context(|| format!("moving the new {} into place", self.out.display()));
        }
        if let Some(old) = old {
            std::fs::remove_dir_all(old)
                .with_context(|| format!("removing the previous {}", old.display()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(out: &Path, files: &[(&str, &str)]) -> anyhow::Result<()> {
        let staged = stage(out, "test")?;
        for (name, text) in files {
            let path = staged.path().join(name);
            std::fs::create_dir_all(path.parent().unwrap())?;
            std::fs::write(path, text)?;
        }
        staged.commit()
    }

    #[test]
    fn a_directory_it_wrote_is_replaced_and_nothing_is_left_beside_it() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("site");
        build(&out, &[("index.html", "one"), ("figures/a.svg", "<svg/>")]).unwrap();
        build(&out, &[("index.html", "two")]).unwrap();
        assert_eq!(
            std::fs::read_to_string(out.join("index.html")).unwrap(),
            "two"
        );
        assert!(!out.join("figures").exists());
        let beside: Vec<_> = std::fs::read_dir(root.path()).unwrap().flatten().collect();
        assert_eq!(beside.len(), 1, "{beside:?}");
    }

    #[test]
    fn a_directory_holding_anything_else_is_refused_and_untouched() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("site");
        // The reproduction: an index.html of the user's, and more.
        std::fs::create_dir_all(out.join("photos")).unwrap();
        std::fs::write(out.join("index.html"), "mine").unwrap();
        std::fs::write(out.join("precious.txt"), "mine").unwrap();
        std::fs::write(out.join("photos/cat.jpg"), "mine").unwrap();
        let err = build(&out, &[("index.html", "report")]).unwrap_err();
        assert!(err.to_string().contains(MANIFEST), "{err}");
        assert_eq!(
            std::fs::read_to_string(out.join("precious.txt")).unwrap(),
            "mine"
        );
        assert!(out.join("photos/cat.jpg").is_file());
        // A report of linkrev's with a user's file added, or one of its files edited.
        let report = root.path().join("report");
        build(&report, &[("index.html", "report")]).unwrap();
        std::fs::write(report.join("notes.txt"), "mine").unwrap();
        let err = build(&report, &[("index.html", "again")]).unwrap_err();
        assert!(err.to_string().contains("notes.txt"), "{err}");
        std::fs::remove_file(report.join("notes.txt")).unwrap();
        std::fs::write(report.join("index.html"), "edited by hand").unwrap();
        let err = build(&report, &[("index.html", "again")]).unwrap_err();
        assert!(err.to_string().contains("changed"), "{err}");
        assert_eq!(
            std::fs::read_to_string(report.join("index.html")).unwrap(),
            "edited by hand"
        );
    }

    #[test]
    fn an_empty_or_absent_directory_is_used() {
        let root = tempfile::tempdir().unwrap();
        let out = root.path().join("empty");
        std::fs::create_dir(&out).unwrap();
        build(&out, &[("index.html", "x")]).unwrap();
        build(&root.path().join("new/deeper"), &[("index.html", "x")]).unwrap();
    }

    #[test]
    fn leftovers_of_a_dead_process_are_removed_and_others_kept() {
        let root = tempfile::tempdir().unwrap();
        let prefix = crate::output::leftover_prefix("test");
        // A pid above the kernel's maximum is never alive.
        let dead = root.path().join(format!("{prefix}4294967294-abc"));
        let alive = root
            .path()
            .join(format!("{prefix}{}-abc", std::process::id()));
        let foreign = root.path().join(".linkrev-test-otherhost-4294967294-abc");
        for dir in [&dead, &alive, &foreign] {
            std::fs::create_dir(dir).unwrap();
        }
        build(&root.path().join("site"), &[("index.html", "x")]).unwrap();
        assert_eq!(dead.exists(), !cfg!(target_os = "linux"));
        assert!(alive.exists());
        assert!(foreign.exists());
    }
}
