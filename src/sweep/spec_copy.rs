//! The copy of its spec that a results directory keeps (`spec.toml`), and the plan
//! re-derived from it by `merge` and `report`.
//!
//! The copy is byte-identical to the spec the sweep ran, so a resumed or sharded sweep
//! can be checked against it. Trace paths in a spec are relative to the spec's own
//! directory, which the copy does not share, so the directory of the original spec is
//! kept beside it (`spec-origin.txt`) and paths are resolved from there.

use super::plan::Plan;
use super::specs;
use crate::output::write_atomically;
use anyhow::Context as _;
use std::path::{Path, PathBuf};

/// Name of the spec copy in a results directory.
pub const SPEC_COPY: &str = "spec.toml";
/// Name of the file holding the original spec's path (absolute where it could be
/// resolved), against which trace paths are resolved.
pub const SPEC_ORIGIN: &str = "spec-origin.txt";

/// Creates `dir` and keeps a copy of the plan's spec there, with its traces'
/// fingerprints ([`super::fingerprints`]); refuses a directory that holds results of a
/// different spec, or of a trace that has changed since.
pub fn keep(plan: &Plan, dir: &Path) -> anyhow::Result<()> {
    let spec_text = std::fs::read(&plan.spec_path)
        .with_context(|| format!("reading {}", plan.spec_path.display()))?;
    keep_text(&spec_text, &plan.spec_path, dir)?;
    super::fingerprints::record_or_check(plan, dir)
}

/// Refuses `dir` if it holds results of a different spec than the plan's, writing
/// nothing: the check a sweep makes before it takes the directory's lock.
pub fn refuse_other_spec(plan: &Plan, dir: &Path) -> anyhow::Result<()> {
    let spec_text = std::fs::read(&plan.spec_path)
        .with_context(|| format!("reading {}", plan.spec_path.display()))?;
    holds_copy_of(&spec_text, dir).map(|_| ())
}

/// Whether `dir` already holds a copy of `spec_text`; an error if it holds another.
fn holds_copy_of(spec_text: &[u8], dir: &Path) -> anyhow::Result<bool> {
    let copy = dir.join(SPEC_COPY);
    match std::fs::read(&copy) {
        Ok(existing) if existing != spec_text => anyhow::bail!(
            "{} holds results of a different spec ({}): use another --results directory",
            dir.display(),
            copy.display()
        ),
        Ok(_) => Ok(true),
        Err(_) => Ok(false),
    }
}

/// Like [`keep`], for spec text that came from `origin` (a file, or for built-in specs
/// a name whose directory anchors relative paths).
pub fn keep_text(spec_text: &[u8], origin: &Path, dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    if !holds_copy_of(spec_text, dir)? {
        write_atomically(&dir.join(SPEC_COPY), |w| w.write_all(spec_text))?;
    }
    let origin = std::path::absolute(origin).unwrap_or_else(|_| origin.to_path_buf());
    let origin_text = format!("{}\n", origin.display());
    write_atomically(&dir.join(SPEC_ORIGIN), |w| {
        w.write_all(origin_text.as_bytes())
    })?;
    Ok(())
}

/// The spec copy's text and the path it is parsed as: the original spec's path when
/// recorded (so relative trace paths resolve as they did for the sweep), else the copy.
pub fn read(dir: &Path) -> anyhow::Result<(String, PathBuf)> {
    let copy = dir.join(SPEC_COPY);
    let text = std::fs::read_to_string(&copy).with_context(|| {
        format!(
            "reading {} (a results directory keeps the spec it was run with)",
            copy.display()
        )
    })?;
    let origin = std::fs::read_to_string(dir.join(SPEC_ORIGIN))
        .ok()
        .map(|s| PathBuf::from(s.trim_end_matches('\n')))
        .filter(|p| !p.as_os_str().is_empty());
    Ok((text, origin.unwrap_or(copy)))
}

/// The plan of the sweep that wrote `dir`, from its spec copy.
pub fn plan(dir: &Path) -> anyhow::Result<Plan> {
    let (text, path) = read(dir)?;
    let spec = specs::parse_stored(&text, &path)
        .with_context(|| format!("re-reading the spec copy in {}", dir.display()))?;
    Ok(specs::expand(&spec)?)
}
