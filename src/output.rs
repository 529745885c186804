//! Atomic file output: a result file is either complete or absent, never half-written,
//! and what a killed writer leaves behind is named so that it can be cleaned up.
//!
//! Writes go to a temporary file in the destination's directory, are flushed and fsynced,
//! and then renamed over the destination, so an error or a kill mid-write leaves no
//! partial output behind (the temporary file is removed on drop).
//!
//! Temporary files and directories are private (0600/0700) by default; results are
//! shared with a group on clusters and read by web servers, so ours are created with the
//! permissions of an ordinary file (0666, or 0777 for a directory, less the umask), and
//! keep them when renamed into place.

use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes `path` atomically with the content produced by `fill`.
pub fn write_atomically<F>(path: &Path, fill: F) -> io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> io::Result<()>,
{
    let mut temp = temporary_file_in(parent_dir(path))?;
    {
        let mut writer = BufWriter::new(temp.as_file_mut());
        fill(&mut writer)?;
        writer.flush()?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A temporary file in `dir` with the permissions of an ordinary file, named
/// `.linkrev-HOST-PID-….tmp`: the results store removes any such file it finds when it
/// opens a directory alone, and any command that reads the directory removes the ones
/// of this host whose process is gone ([`remove_abandoned_temporaries`]).
pub fn temporary_file_in(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    let prefix = format!("{}{}-", leftover_prefix("tmp"), std::process::id());
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(ordinary_permissions(0o666));
    builder.tempfile_in(dir)
}

/// The host's name, as the kernel (or `HOSTNAME`) gives it: names the process that
/// holds a lock or left a temporary file behind.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown-host".to_string())
}

/// The name prefix of this host's leftovers of `kind` (`tmp`, `report`):
/// `.linkrev-KIND-HOST-`, followed by the writer's pid and `-`.
pub fn leftover_prefix(kind: &str) -> String {
    let host: String = host_name()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!(".linkrev-{kind}-{host}-")
}

/// Whether process `pid` of this host is gone (`false` where that cannot be told).
fn process_gone(pid: u32) -> bool {
    cfg!(target_os = "linux")
        && Path::new("/proc/self").exists()
        && !Path::new(&format!("/proc/{pid}")).exists()
}

/// The entries of `dir` named by [`leftover_prefix`]`(kind)` whose process is gone:
/// what a kill left behind on this host. Other hosts' entries are never listed (their
/// processes cannot be seen from here and may still be writing).
pub fn abandoned(dir: &Path, kind: &str) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let prefix = leftover_prefix(kind);
    entries
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.strip_prefix(&prefix)
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| pid != std::process::id() && process_gone(pid))
        })
        .map(|entry| entry.path())
        .collect()
}

/// Removes the temporary files in `dir` that killed processes of this host left.
pub fn remove_abandoned_temporaries(dir: &Path) {
    for path in abandoned(dir, "tmp") {
        if path.is_file() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Creates `dir` if needed and proves that a file can be written in it, so that a
/// command whose work takes minutes fails at once on an unwritable destination rather
/// than after the work.
pub fn ensure_writable_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    temporary_file_in(dir).map(drop)
}

/// [`ensure_writable_dir`] for the directory a file `path` will be written into.
pub fn ensure_writable_parent(path: &Path) -> io::Result<()> {
    ensure_writable_dir(parent_dir(path))
}

/// The directory `path` lies in: its parent, or `.` for a bare name.
pub fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `mode` less the umask, as `open(2)` and `mkdir(2)` apply it to what tempfile creates.
#[cfg(unix)]
pub fn ordinary_permissions(mode: u32) -> std::fs::Permissions {
    std::os::unix::fs::PermissionsExt::from_mode(mode)
}

/// A staging directory in `parent` (removed on drop unless kept), with the permissions
/// of an ordinary directory.
pub fn staging_dir(parent: &Path, prefix: &str) -> io::Result<tempfile::TempDir> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(prefix);
    #[cfg(unix)]
    builder.permissions(ordinary_permissions(0o777));
    builder.tempdir_in(parent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failed_write_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.txt");
        let err = write_atomically(&target, |w| {
            w.write_all(b"partial")?;
            Err(io::Error::other("boom"))
        });
        assert!(err.is_err());
        assert!(!target.exists());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomically(&target, |w| w.write_all(b"whole")).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "whole");
    }

    #[cfg(unix)]
    #[test]
    fn outputs_get_the_permissions_of_ordinary_files_and_directories() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        // What the umask makes of a plain create: the reference, whatever the umask is.
        let plain = dir.path().join("plain");
        std::fs::write(&plain, b"x").unwrap();
        let ours = dir.path().join("ours");
        write_atomically(&ours, |w| w.write_all(b"x")).unwrap();
        assert_eq!(mode(&ours), mode(&plain));
        let plain_dir = dir.path().join("plain-dir");
        std::fs::create_dir(&plain_dir).unwrap();
        let staged = staging_dir(dir.path(), ".s").unwrap();
        assert_eq!(mode(staged.path()), mode(&plain_dir));
    }
}
