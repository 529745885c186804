//! One writer per results directory: the lock file `<dir>/.linkrev.lock`.
//!
//! Two processes writing one directory (a double-clicked sweep, a resubmitted job, a
//! merge beside a running sweep) can remove each other's chunks and compact a table
//! without another process's rows. So every command that writes a results directory
//! holds its lock for as long as it writes:
//!
//! - **exclusive** (`sweep` of a whole plan, `merge`, `export`): the file records the
//!   holder's pid, host, command and start time, which a refused process prints;
//! - **shared** (`sweep --shard`): shards of one Slurm array job write disjoint runs
//!   side by side, so they share the lock; no exclusive writer may run beside them.
//!   Each shard also holds its own index's lock (`.linkrev.shard-K-of-N.lock`,
//!   exclusive, recording its holder), so the same shard twice at once is refused, and
//!   so is a shard of another split (`1/3` beside `1/2`), whose runs overlap.
//!
//! The lock is an OS file lock (`flock`) on the file, which the kernel releases when its
//! holder dies however it dies, so a lock left by a killed process is never in the way:
//! the next writer takes it over, and says whose it was. The file itself stays (removing
//! it would race with a process that has just opened it); only its contents are cleared
//! when the holder finishes.

use anyhow::{Context, bail};
use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The lock file's name inside a results directory.
pub const LOCK_FILE: &str = ".linkrev.lock";

/// Start of the name of a shard's own lock file, `.linkrev.shard-2-of-8.lock`.
pub const SHARD_LOCK_PREFIX: &str = ".linkrev.shard-";

/// A held lock on a results directory; released when dropped.
#[derive(Debug)]
pub struct DirLock {
    file: File,
    path: PathBuf,
    exclusive: bool,
}

/// Who holds (or last held) a lock, as its file records it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Holder {
    /// The holder's process id.
    pub pid: u32,
    /// The host it ran on.
    pub host: String,
    /// What it was doing (e.g. `linkrev sweep analysis/me_load.toml`).
    pub command: String,
    /// When it took the lock (seconds since the Unix epoch).
    pub since: u64,
}

impl Holder {
    fn me() -> Holder {
        Holder {
            pid: std::process::id(),
            host: host_name(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            since: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    /// A complete record only: all four keys and the final newline, so that a record
    /// read while it is being written (`pid=12` of `pid=1234`) is no record.
    fn parse(text: &str) -> Option<Holder> {
        if !text.ends_with('\n') {
            return None;
        }
        let mut holder = Holder::default();
        let mut seen = 0;
        for line in text.lines() {
            let (key, value) = line.split_once('=')?;
            match key {
                "pid" => holder.pid = value.parse().ok()?,
                "host" => holder.host = value.to_string(),
                "command" => holder.command = value.to_string(),
                "since" => holder.since = value.parse().ok()?,
                _ => continue,
            }
            seen += 1;
        }
        (holder.pid != 0 && seen == 4).then_some(holder)
    }

    fn render(&self) -> String {
        format!(
            "pid={}\nhost={}\ncommand={}\nsince={}\n",
            self.pid,
            self.host,
            self.command.replace('\n', " "),
            self.since
        )
    }

    fn describe(&self) -> String {
        format!(
            "pid {} on host {} (`{}`, since {})",
            self.pid,
            self.host,
            self.command,
            format_time(self.since)
        )
    }
}

/// `YYYY-MM-DD HH:MM:SS UTC` of a Unix time, without a date crate.
fn format_time(secs: u64) -> String {
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

// This machine's name: what a lock records so that a refused user can find the holder.
use crate::output::host_name;

impl DirLock {
    /// Takes `dir`'s lock for a process that must be alone there (a whole-plan sweep, a
    /// merge, an export). Errors (exit code 2) naming the holder when another process
    /// has it; takes over, with a message on stderr, a lock whose holder has died.
    pub fn exclusive(dir: &Path) -> anyhow::Result<DirLock> {
        Self::take(dir, true)
    }

    /// Takes `dir`'s lock shared, for one shard of an array job: shards run beside each
    /// other, but not beside an exclusive writer.
    pub fn shared(dir: &Path) -> anyhow::Result<DirLock> {
        Self::take(dir, false)
    }

    /// Takes the lock of shard `index` of `count` in `dir`, besides the shared lock of
    /// the directory ([`DirLock::shared`]): the same shard run twice at once (a requeued
    /// Slurm task beside the one still running, a "failed" shard rerun by hand) would
    /// store its runs twice and clean up the other's chunks, so the second is refused,
    /// naming the first. Shards that split the plan another way (`1/3` beside `1/2`)
    /// own overlapping runs and are refused too.
    pub fn shard(dir: &Path, index: usize, count: usize) -> anyhow::Result<[DirLock; 2]> {
        let shared = Self::take(dir, false)?;
        let name = format!("{SHARD_LOCK_PREFIX}{index}-of-{count}.lock");
        let own = Self::take_file(dir, &name, true).map_err(|e| {
            anyhow::anyhow!(
                "{e}\n(shard {index}/{count} is already running there: two copies of one \
                 shard would store its runs twice)"
            )
        })?;
        // Any shard of another split that is running now.
        let listing =
            std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
        for entry in listing {
            let path = entry?.path();
            let Some(other) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let Some(split) = other
                .strip_prefix(SHARD_LOCK_PREFIX)
                .and_then(|rest| rest.strip_suffix(".lock"))
                .and_then(|rest| rest.split_once("-of-"))
            else {
                continue;
            };
            if split.1 == count.to_string() {
                continue;
            }
            let Ok(mut file) = File::open(&path) else {
                continue;
            };
            if let (Err(TryLockError::WouldBlock), recorded) = try_lock_settled(&mut file, false) {
                let who = recorded.map_or_else(|| "another shard".to_string(), |h| h.describe());
                bail!(
                    "{} is being written by shard {}/{} ({who}): shards of one results \
                     directory must split the plan the same way (all K/{}, or wait for it \
                     to finish)",
                    dir.display(),
                    split.0,
                    split.1,
                    split.1
                );
            }
            let _ = file.unlock();
        }
        Ok([shared, own])
    }

    fn take(dir: &Path, exclusive: bool) -> anyhow::Result<DirLock> {
        Self::take_file(dir, LOCK_FILE, exclusive)
    }

    fn take_file(dir: &Path, name: &str, exclusive: bool) -> anyhow::Result<DirLock> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let path = dir.join(name);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("opening the lock file {}", path.display()))?;
        let (attempt, recorded) = try_lock_settled(&mut file, exclusive);
        match attempt {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(in_use_error(dir, recorded.as_ref())),
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("locking {}", path.display()));
            }
        }
        if exclusive {
            if let Some(old) = recorded {
                if old.host != host_name() {
                    // The lock is free here, but on a shared file system the holder may
                    // run on a host whose locks this one cannot see.
                    bail!(
                        "{} was locked by {} and not released; linkrev cannot tell from \
                         this host whether that process still runs: if it does not, remove \
                         {} and run this command again",
                        dir.display(),
                        old.describe(),
                        path.display()
                    );
                }
                eprintln!(
                    "note: taking over the lock of {}, which ended without releasing it \
                     (killed?); its unfinished writes are cleaned up",
                    old.describe()
                );
            }
            file.set_len(0)
                .and_then(|()| file.seek(SeekFrom::Start(0)).map(|_| ()))
                .and_then(|()| file.write_all(Holder::me().render().as_bytes()))
                .and_then(|()| file.sync_all())
                .with_context(|| format!("writing the lock file {}", path.display()))?;
        }
        Ok(DirLock {
            file,
            path,
            exclusive,
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this process holds the lock alone (not as one shard of several).
    pub fn is_exclusive(&self) -> bool {
        self.exclusive
    }
}

/// How long a process waits for a lock that is held but records no holder before it
/// takes the lock to be held without a record (by shards of an array job, which record
/// nothing): an exclusive holder leaves its file empty, or partly written, for a moment
/// while it starts (before its record is complete) and while it finishes (after it
/// clears the record, before the kernel lock goes), and a process arriving in that
/// moment must not blame shards. So a writer refused beside running shards waits half a
/// second before it says so.
const SETTLE_ATTEMPTS: u32 = 50;
const SETTLE_PAUSE: std::time::Duration = std::time::Duration::from_millis(10);

/// Tries the lock; while it is held without a recorded holder, tries again for up to
/// half a second (see [`SETTLE_ATTEMPTS`]). Returns the last attempt and the holder
/// the file recorded at that attempt.
fn try_lock_settled(
    file: &mut File,
    exclusive: bool,
) -> (Result<(), TryLockError>, Option<Holder>) {
    let mut attempt = 0;
    loop {
        let result = if exclusive {
            file.try_lock()
        } else {
            file.try_lock_shared()
        };
        let recorded = read_holder(file);
        attempt += 1;
        let settling = matches!(result, Err(TryLockError::WouldBlock)) && recorded.is_none();
        if !settling || attempt >= SETTLE_ATTEMPTS {
            return (result, recorded);
        }
        std::thread::sleep(SETTLE_PAUSE);
    }
}

fn read_holder(file: &mut File) -> Option<Holder> {
    let mut text = String::new();
    file.seek(SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    Holder::parse(&text)
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Cleared, not removed: a process that has just opened the file must lock the
        // same file as the next one. The OS lock goes with the file handle.
        if self.exclusive {
            let _ = self.file.set_len(0);
        }
        let _ = self.file.unlock();
    }
}

/// The error of a writer refused because `dir` is in use by `holder` (or, with no
/// record, by shards).
fn in_use_error(dir: &Path, holder: Option<&Holder>) -> anyhow::Error {
    let who = match holder {
        Some(holder) => holder.describe(),
        None => "the shards of an array job (`linkrev sweep --shard`)".to_string(),
    };
    anyhow::anyhow!(
        "{} is in use by {who}: wait for it to finish (or stop it), then run this command \
         again; two processes writing one results directory could lose rows",
        dir.display()
    )
}

/// The error a writer would get if `dir` is in use right now, found without taking the
/// lock as a writer does: the probe records no holder, so a process starting at the
/// same instant waits for it to pass (see [`SETTLE_ATTEMPTS`]) instead of failing.
pub fn in_use(dir: &Path) -> Option<anyhow::Error> {
    let mut file = File::open(dir.join(LOCK_FILE)).ok()?;
    match try_lock_settled(&mut file, true) {
        (Ok(()), _) => {
            let _ = file.unlock();
            None
        }
        (Err(TryLockError::WouldBlock), recorded) => Some(in_use_error(dir, recorded.as_ref())),
        (Err(TryLockError::Error(_)), _) => None,
    }
}

/// Who holds `dir`'s lock right now, if anyone (for a reader, e.g. a report, to say
/// that the tables are still being written).
pub fn current_holder(dir: &Path) -> Option<String> {
    let mut file = File::open(dir.join(LOCK_FILE)).ok()?;
    match try_lock_settled(&mut file, false) {
        (Ok(()), _) => {
            let _ = file.unlock();
            None
        }
        (Err(TryLockError::WouldBlock), recorded) => Some(match recorded {
            Some(holder) => holder.describe(),
            None => "another linkrev process".to_string(),
        }),
        (Err(TryLockError::Error(_)), _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `merge` on a directory a shard is just creating looked for a holder by taking
    /// the exclusive lock, which recorded it as the holder: the shard starting at that
    /// instant was refused. The probe records nothing, so shards starting beside it all
    /// get their lock, and it still names shards that hold one.
    #[test]
    fn probing_for_a_holder_never_refuses_a_shard_starting_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        drop(DirLock::shard(dir.path(), 1, 2).unwrap());
        assert!(in_use(dir.path()).is_none());
        let stop = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = in_use(dir.path());
                }
            });
            for _ in 0..300 {
                let locks = DirLock::shard(dir.path(), 1, 2);
                assert!(locks.is_ok(), "{}", locks.err().unwrap());
            }
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let held = DirLock::shard(dir.path(), 2, 2).unwrap();
        let err = in_use(dir.path()).expect("shards hold it").to_string();
        assert!(err.contains("shards of an array job"), "{err}");
        drop(held);
        let sweep = DirLock::exclusive(dir.path()).unwrap();
        let err = in_use(dir.path()).expect("a sweep holds it").to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(sweep);
    }

    #[test]
    fn a_second_exclusive_lock_is_refused_naming_the_holder() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::exclusive(dir.path()).unwrap();
        let err = DirLock::exclusive(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        assert!(err.contains(&host_name()), "{err}");
        assert!(DirLock::shared(dir.path()).is_err());
        assert!(current_holder(dir.path()).is_some());
        drop(first);
        assert!(current_holder(dir.path()).is_none());
        DirLock::exclusive(dir.path()).unwrap();
    }

    #[test]
    fn shards_share_the_lock_and_keep_an_exclusive_writer_out() {
        let dir = tempfile::tempdir().unwrap();
        let a = DirLock::shared(dir.path()).unwrap();
        let b = DirLock::shared(dir.path()).unwrap();
        let err = DirLock::exclusive(dir.path()).unwrap_err().to_string();
        assert!(err.contains("shards"), "{err}");
        drop((a, b));
        DirLock::exclusive(dir.path()).unwrap();
    }

    /// A holder's file is empty for a moment as it starts and as it finishes. A process
    /// arriving then must wait for the record (or the release), not blame shards: CI
    /// once saw "in use by the shards of an array job" beside a sweep taking its lock.
    #[test]
    fn a_holder_starting_or_finishing_is_not_mistaken_for_shards() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LOCK_FILE);
        let hold_empty = || {
            let file = File::create(&path).unwrap();
            file.try_lock().unwrap();
            file
        };
        // Finishing: the record is cleared, the kernel lock goes 50 ms later.
        let finishing = hold_empty();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            drop(finishing);
        });
        DirLock::exclusive(dir.path()).expect("the lock, once released");
        release.join().unwrap();
        // Starting: the holder has written half of its record; the rest comes 50 ms
        // later.
        let mut starting = hold_empty();
        starting.write_all(b"pid=42").unwrap();
        let record = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            starting
                .write_all(b"42\nhost=h\ncommand=c\nsince=0\n")
                .unwrap();
            starting
        });
        let err = DirLock::exclusive(dir.path()).unwrap_err().to_string();
        assert!(err.contains("in use by pid 4242"), "{err}");
        drop(record.join().unwrap());
    }

    #[test]
    fn a_lock_left_by_a_dead_process_on_this_host_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let dead = Holder {
            pid: 999_999_999,
            host: host_name(),
            command: "linkrev sweep x.toml".into(),
            since: 0,
        };
        std::fs::write(dir.path().join(LOCK_FILE), dead.render()).unwrap();
        let lock = DirLock::exclusive(dir.path()).unwrap();
        let text = std::fs::read_to_string(lock.path()).unwrap();
        assert_eq!(Holder::parse(&text).unwrap().pid, std::process::id());
    }

    #[test]
    fn a_lock_recorded_by_another_host_is_not_taken_over_silently() {
        let dir = tempfile::tempdir().unwrap();
        let other = Holder {
            pid: 42,
            host: format!("{}-elsewhere", host_name()),
            command: "linkrev sweep x.toml".into(),
            since: 0,
        };
        std::fs::write(dir.path().join(LOCK_FILE), other.render()).unwrap();
        let err = DirLock::exclusive(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("-elsewhere") && err.contains("remove"),
            "{err}"
        );
    }

    #[test]
    fn times_are_rendered_as_utc_dates() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_time(1_796_112_000), "2026-12-01 08:00:00 UTC");
    }
}
