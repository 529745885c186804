//! Trace fingerprints: what each trace file held when a results directory's runs were
//! made, so runs of two versions of a trace are never mixed.
//!
//! A trace regenerated between a kill and the resume (same path, new content) used to
//! be read by the resumed runs while the stored ones came from the old file: 48 runs of
//! one trace and 192 of another, and `merge` called the directory complete. The first
//! sweep into a directory now records, in `traces.fingerprints`, each trace file's
//! size and 64-bit FNV-1a hash of its bytes (a change detector, not a cryptographic
//! seal). A resumed sweep, a shard and `merge` compare the files with the record and
//! refuse a changed one, naming it. A file that is gone is refused where runs still
//! need it (a sweep) and ignored where they do not (`merge`, `report`: stored runs need
//! no trace).

use super::plan::{Plan, RunList};
use super::specs::{FNV_OFFSET, fnv1a64_more, trace_files};
use crate::output::write_atomically;
use anyhow::{Context as _, bail};
use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The record's file name in a results directory.
pub const FINGERPRINTS: &str = "traces.fingerprints";

/// One trace file's size and content hash.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fingerprint {
    /// The file as the spec names it (`../traces/a.tcl`, or `activity file of …`).
    name: String,
    /// Bytes.
    size: u64,
    /// FNV-1a 64 of the bytes.
    hash: u64,
}

impl Fingerprint {
    /// The file's fingerprint, read a megabyte at a time.
    fn of(name: &str, path: &Path) -> anyhow::Result<Fingerprint> {
        let mut file = std::fs::File::open(path)
            .with_context(|| format!("opening the trace {}", path.display()))?;
        let (mut hash, mut size) = (FNV_OFFSET, 0u64);
        let mut buffer = vec![0u8; 1 << 20];
        loop {
            let n = file
                .read(&mut buffer)
                .with_context(|| format!("reading the trace {}", path.display()))?;
            if n == 0 {
                break;
            }
            hash = fnv1a64_more(hash, &buffer[..n]);
            size += n as u64;
        }
        Ok(Fingerprint {
            name: name.to_string(),
            size,
            hash,
        })
    }

    fn line(&self) -> String {
        format!("{:016x} {} {}\n", self.hash, self.size, self.name)
    }

    fn parse(line: &str) -> Option<Fingerprint> {
        let mut parts = line.splitn(3, ' ');
        let hash = u64::from_str_radix(parts.next()?, 16).ok()?;
        let size = parts.next()?.parse().ok()?;
        Some(Fingerprint {
            name: parts.next()?.to_string(),
            size,
            hash,
        })
    }
}

/// The plan's trace files, as written and resolved (none for generated mobility).
fn files(plan: &Plan) -> Vec<(String, PathBuf)> {
    match &plan.runs {
        RunList::Expanded(e) => trace_files(&e.spec),
        RunList::Listed(_) => Vec::new(),
    }
}

/// The recorded fingerprints of `dir`, if it has a record.
fn recorded(dir: &Path) -> anyhow::Result<Option<Vec<Fingerprint>>> {
    let path = dir.join(FINGERPRINTS);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    let mut prints = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some(print) = Fingerprint::parse(line) else {
            bail!(
                "{}:{}: not a trace fingerprint: `{line}`",
                path.display(),
                i + 1
            );
        };
        prints.push(print);
    }
    Ok(Some(prints))
}

/// For a sweep (whole, resumed or one shard) about to run `plan` into `dir`: records
/// the traces' fingerprints in a directory that has none, or refuses if a trace now
/// differs from the one the stored runs were made with, or is gone.
pub fn record_or_check(plan: &Plan, dir: &Path) -> anyhow::Result<()> {
    let files = files(plan);
    if files.is_empty() {
        return Ok(());
    }
    match recorded(dir)? {
        Some(old) => compare(&old, &files, dir, true),
        None => {
            let mut text = String::new();
            for (name, path) in &files {
                text.push_str(&Fingerprint::of(name, path)?.line());
            }
            write_atomically(&dir.join(FINGERPRINTS), |w| w.write_all(text.as_bytes()))
                .with_context(|| format!("writing {}", dir.join(FINGERPRINTS).display()))
        }
    }
}

/// For `merge`: refuses if a trace that still exists differs from the recorded one. A
/// trace that is gone is no reason to refuse: stored runs need none.
pub fn check_present(plan: &Plan, dir: &Path) -> anyhow::Result<()> {
    match recorded(dir)? {
        Some(old) => compare(&old, &files(plan), dir, false),
        None => Ok(()),
    }
}

fn compare(
    old: &[Fingerprint],
    files: &[(String, PathBuf)],
    dir: &Path,
    need_all: bool,
) -> anyhow::Result<()> {
    for (name, path) in files {
        let Some(was) = old.iter().find(|f| f.name == *name) else {
            // A trace the record does not know: the spec is the same (the spec copy
            // says so), so the record was written by a version without this file.
            continue;
        };
        if !path.exists() {
            if need_all {
                bail!(
                    "the trace {} ({name} in the spec) is gone, but runs stored in {} were \
                     made from it and others still need it: restore it",
                    path.display(),
                    dir.display()
                );
            }
            continue;
        }
        let now = Fingerprint::of(name, path)?;
        if now != *was {
            bail!(
                "the trace {} ({name} in the spec) has changed since the runs stored in {} \
                 were made from it ({} bytes, fingerprint {:016x}; now {} bytes, {:016x}): \
                 mixing runs of both would be wrong; restore the file, or run the sweep \
                 into a new --results directory",
                path.display(),
                dir.display(),
                was.size,
                was.hash,
                now.size,
                now.hash
            );
        }
    }
    Ok(())
}
