//! Atomic file output: a result file is either complete or absent, never half-written.
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
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut temp = temporary_file_in(dir)?;
    {
        let mut writer = BufWriter::new(temp.as_file_mut());
        fill(&mut writer)?;
        writer.flush()?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// A temporary file in `dir` with the permissions of an ordinary file, named so that
/// the results store removes it if a kill leaves it behind (`.linkrev-*.tmp`).
pub fn temporary_file_in(dir: &Path) -> io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".linkrev-").suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(ordinary_permissions(0o666));
    builder.tempfile_in(dir)
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
