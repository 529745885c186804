//! Atomic file output: a result file is either complete or absent, never half-written.
//!
//! Writes go to a temporary file in the destination's directory, are flushed and fsynced,
//! and then renamed over the destination, so an error or a kill mid-write leaves no
//! partial output behind (the temporary file is removed on drop).

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
    let mut temp = tempfile::Builder::new()
        .prefix(".linkrev-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    {
        let mut writer = BufWriter::new(temp.as_file_mut());
        fill(&mut writer)?;
        writer.flush()?;
    }
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
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
}
