//! The Parquet store of one experiment: `results/<experiment>/{runs,changes,requests}/`.
//!
//! Results arrive in batches; each batch becomes one chunk per table, named after the
//! batch's lowest run index (`chunk-00000042.parquet`), written atomically (temporary file,
//! fsync, rename). The `runs` chunk is written last and is the commit marker: a run counts
//! as done only once its `runs` row exists, and `changes`/`requests` chunks without a
//! `runs` chunk of the same name (a kill between the writes) are removed on open.
//!
//! Compaction concatenates each table's chunks, sorts rows by run index (stably, so rows
//! of one run keep their order) and writes one file per table. The result depends only on
//! which runs exist, never on how they were batched, threaded or sharded, so compacted
//! tables are byte-identical for the same spec.

use super::lock::DirLock;
use super::tables::{
    ParamSchema, RunRecord, event_frame, runs_frame, stored_rows_column, tool_version,
};
use crate::family::EventTable;
use crate::output::write_atomically;
use anyhow::{Context, bail};
use polars::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::fs::{self, File};
use std::path::{Path, PathBuf};

/// The table of one row per run; its chunk is written last and commits a batch.
pub const RUNS: &str = "runs";

/// Every table of a results directory: each family's per-event table, then `runs`.
pub fn tables() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = crate::family::EVENT_TABLES.map(EventTable::name).to_vec();
    names.push(RUNS);
    names
}

/// One experiment's result directory.
pub struct Store {
    dir: PathBuf,
    /// Runs per compacted file ([`PART_RUNS`] unless a test asks for fewer).
    part_runs: u64,
    /// Held by a store that writes (see [`DirLock`]): the directory's lock, and a
    /// shard's own index lock; none for a read-only store.
    _locks: Vec<DirLock>,
}

/// Removes `dir`'s temporary files of interrupted writes (`.linkrev-*.tmp`).
fn remove_temporaries(dir: &Path) -> anyhow::Result<()> {
    let listing = fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))?;
    for entry in listing {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with(".linkrev-") && name.ends_with(".tmp") && path.is_file() {
            fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

fn chunk_name(first_index: usize) -> String {
    format!("chunk-{first_index:08}.parquet")
}

fn write_parquet(path: &Path, df: &mut DataFrame) -> anyhow::Result<()> {
    // The encoder's error fails the atomic write, so no truncated file (a full disk)
    // is renamed into place.
    write_atomically(path, |w| {
        ParquetWriter::new(w)
            .set_parallel(false)
            .finish(df)
            .map(|_| ())
            .map_err(std::io::Error::other)
    })
    .with_context(|| format!("writing {}", path.display()))
}

fn read_parquet(path: &Path) -> anyhow::Result<DataFrame> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let df = ParquetReader::new(file).finish();
    anyhow::Context::with_context(df, || {
        format!("reading {} (corrupt chunk?)", path.display())
    })
}

/// The number of rows of a Parquet file, from its footer.
fn parquet_rows(path: &Path) -> anyhow::Result<usize> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    anyhow::Context::with_context(ParquetReader::new(file).num_rows(), || {
        format!("reading {}", path.display())
    })
}

fn parquet_files(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    if dir.exists() {
        for entry in fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
            let path = entry?.path();
            if path.extension().is_some_and(|e| e == "parquet") {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

/// The first run index a chunk's file name records (`chunk-00000042.parquet` → 42).
fn chunk_index(path: &Path) -> Option<usize> {
    path.file_name()?
        .to_str()?
        .strip_prefix("chunk-")?
        .strip_suffix(".parquet")?
        .parse()
        .ok()
}

impl Store {
    /// Opens (creating) `dir` for a process that must be alone there, holding its lock
    /// ([`DirLock::exclusive`]) until the store is dropped. Cleans up what a kill left:
    /// temporary files of interrupted writes, chunks of batches that were never
    /// committed, and batches whose chunks are missing or short (reported by run key,
    /// and run again by the next sweep).
    pub fn open(dir: &Path) -> anyhow::Result<Self> {
        let lock = DirLock::exclusive(dir)?;
        Self::open_with(dir, None, vec![lock])
    }

    /// The same store compacting into files of `runs` runs instead of [`PART_RUNS`]:
    /// lets tests split small sweeps the way large ones are split.
    pub fn with_part_runs(mut self, runs: u64) -> Self {
        self.part_runs = runs.max(1);
        self
    }

    /// Opens `dir` for one shard of a plan while other shards may be writing to it at
    /// the same time (a Slurm array job), sharing the lock with them: cleans up only
    /// batches of the runs this shard `owns` (by run index) and leaves temporary files
    /// alone, since they may be another shard's writes in progress. `linkrev merge`,
    /// which runs alone, cleans up the rest.
    pub fn open_shard(
        dir: &Path,
        (index, count): (usize, usize),
        owns: &dyn Fn(usize) -> bool,
    ) -> anyhow::Result<Self> {
        let locks = DirLock::shard(dir, index, count)?;
        Self::open_with(dir, Some(owns), locks.into())
    }

    fn open_with(
        dir: &Path,
        owns: Option<&dyn Fn(usize) -> bool>,
        locks: Vec<DirLock>,
    ) -> anyhow::Result<Self> {
        for table in tables() {
            fs::create_dir_all(dir.join(table))
                .with_context(|| format!("creating {}", dir.join(table).display()))?;
        }
        if owns.is_none() {
            // Temporary files of writes a kill interrupted (never renamed into place):
            // chunks in the table directories, compacted tables at the top.
            let places =
                std::iter::once(dir.to_path_buf()).chain(tables().into_iter().map(|t| dir.join(t)));
            for place in places {
                remove_temporaries(&place)?;
            }
        }
        let store = Store {
            dir: dir.to_path_buf(),
            part_runs: PART_RUNS,
            _locks: locks,
        };
        store.drop_incomplete_batches(owns)?;
        let committed: Vec<_> = parquet_files(&dir.join(RUNS))?
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_owned()))
            .collect();
        for table in crate::family::EVENT_TABLES.map(EventTable::name) {
            for path in parquet_files(&dir.join(table))? {
                let mine = owns.is_none_or(|owns| chunk_index(&path).is_some_and(owns));
                if mine
                    && path
                        .file_name()
                        .is_some_and(|n| !committed.iter().any(|c| c == n))
                {
                    fs::remove_file(&path)
                        .with_context(|| format!("removing orphan {}", path.display()))?;
                }
            }
        }
        Ok(store)
    }

    /// Un-commits every batch (of the runs `owns`, or all) whose per-event chunks do not
    /// hold the rows its `runs` chunk recorded: a chunk deleted or truncated after the
    /// batch was written. Its `runs` chunk goes first, so the runs count as not stored
    /// and are run again; the note names them.
    fn drop_incomplete_batches(&self, owns: Option<&dyn Fn(usize) -> bool>) -> anyhow::Result<()> {
        for runs_chunk in parquet_files(&self.dir.join(RUNS))? {
            if owns.is_some_and(|owns| !chunk_index(&runs_chunk).is_some_and(owns)) {
                continue;
            }
            let runs = read_parquet(&runs_chunk)?;
            let Some(name) = runs_chunk.file_name() else {
                continue;
            };
            let mut problems = Vec::new();
            for table in crate::family::EVENT_TABLES {
                let Ok(recorded) = runs.column(&stored_rows_column(table)) else {
                    // Written before runs recorded their rows: `check_columns` refuses it.
                    return Ok(());
                };
                let recorded: u64 = recorded.u64()?.iter().flatten().sum();
                let chunk = self.dir.join(table.name()).join(name);
                let compacted = self.dir.join(format!("{}.parquet", table.name()));
                let problem = if !chunk.exists() && compacted.exists() {
                    // A compaction killed part way moved it there; `verify` checks it.
                    None
                } else if !chunk.exists() {
                    Some("is missing".to_string())
                } else {
                    match parquet_rows(&chunk) {
                        Ok(n) if n as u64 == recorded => None,
                        Ok(n) => Some(format!(
                            "holds {n} rows where the batch recorded {recorded}"
                        )),
                        Err(_) => Some("is unreadable (corrupt?)".to_string()),
                    }
                };
                if let Some(problem) = problem {
                    problems.push(format!("{} {problem}", chunk.display()));
                }
            }
            if problems.is_empty() {
                continue;
            }
            let keys: Vec<String> = runs
                .column("run_key")?
                .str()?
                .iter()
                .flatten()
                .map(str::to_string)
                .collect();
            fs::remove_file(&runs_chunk)
                .with_context(|| format!("removing {}", runs_chunk.display()))?;
            eprintln!(
                "warning: {}: {}; the {} run(s) of that batch are not counted as stored and \
                 will run again: {}",
                self.dir.display(),
                problems.join("; "),
                keys.len(),
                keys.join(", ")
            );
        }
        Ok(())
    }

    /// A results directory for reading only (a report): changes nothing a writer may
    /// still use, so it is safe while a sweep is still writing (it removes only this
    /// host's temporary files whose process is gone). Errors if `dir` holds no `runs`
    /// table.
    pub fn open_read_only(dir: &Path) -> anyhow::Result<Self> {
        if !dir.join(RUNS).is_dir() && !dir.join(format!("{RUNS}.parquet")).is_file() {
            bail!(
                "{} is not a results directory (no runs table): give the directory `linkrev \
                 sweep` wrote, e.g. results/<experiment>",
                dir.display()
            );
        }
        // The one change a reader makes: what killed writers of this host left (a
        // killed export's temporary CSV), which no one can still be writing.
        crate::output::remove_abandoned_temporaries(dir);
        Ok(Store {
            dir: dir.to_path_buf(),
            part_runs: PART_RUNS,
            _locks: Vec::new(),
        })
    }

    /// Whether this store was opened as one shard of an array job ([`Store::open_shard`]),
    /// beside other shards: it must not compact or clean up other shards' runs.
    pub fn is_shard(&self) -> bool {
        self._locks.first().is_some_and(|lock| !lock.is_exclusive())
    }

    /// The results directory (normally `results/<experiment>`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every run already stored: run key → tool version that produced it.
    pub fn completed(&self) -> anyhow::Result<BTreeMap<String, String>> {
        let mut done = BTreeMap::new();
        for path in self.table_files(RUNS)? {
            let df = read_parquet(&path)?;
            let keys = df.column("run_key")?.str()?.clone();
            let versions = df.column("tool_version")?.str()?.clone();
            for (k, v) in keys.iter().zip(versions.iter()) {
                if let (Some(k), Some(v)) = (k, v) {
                    done.insert(k.to_string(), v.to_string());
                }
            }
        }
        Ok(done)
    }

    /// Run keys stored more than once, with how many times, in key order: a shard run
    /// twice at once (a requeued Slurm task beside the one still running) can store the
    /// same runs in two batches. Compaction would keep both copies, so `merge` and
    /// `export` refuse such a directory before they write or remove anything.
    ///
    /// Chunks beside a compacted table that hold only runs it holds are not duplicates:
    /// they are what a compaction killed before it removed its chunks leaves, and the
    /// next compaction removes them. So copies are counted among the chunks and among
    /// the compacted files, each on its own.
    pub fn duplicate_runs(&self) -> anyhow::Result<Vec<(String, usize)>> {
        let mut in_chunks: BTreeMap<String, usize> = BTreeMap::new();
        let mut compacted: BTreeMap<String, usize> = BTreeMap::new();
        for path in self.table_files(RUNS)? {
            let times = if self.is_chunk(RUNS, &path) {
                &mut in_chunks
            } else {
                &mut compacted
            };
            let df = read_parquet(&path)?;
            for key in df.column("run_key")?.str()?.iter().flatten() {
                *times.entry(key.to_string()).or_default() += 1;
            }
        }
        let mut duplicates: BTreeMap<String, usize> = BTreeMap::new();
        for (key, n) in in_chunks
            .into_iter()
            .chain(compacted)
            .filter(|&(_, n)| n > 1)
        {
            let most = duplicates.entry(key).or_default();
            *most = (*most).max(n);
        }
        Ok(duplicates.into_iter().collect())
    }

    /// Fails, naming the first duplicated keys, if some run is stored more than once
    /// ([`Self::duplicate_runs`]).
    pub fn refuse_duplicates(&self) -> anyhow::Result<()> {
        let duplicates = self.duplicate_runs()?;
        if let Some((first, times)) = duplicates.first() {
            anyhow::bail!(
                "{}: {} runs are stored more than once (the first: {first}, {times} times), as \
                 when one shard ran twice at once; nothing was changed. Run the sweep again \
                 into a new results directory",
                self.dir.display(),
                duplicates.len()
            );
        }
        Ok(())
    }

    /// Refuses to add runs to a directory whose stored `runs` table has other columns
    /// than `expected` (results of a linkrev whose tables differ, e.g. before an
    /// algorithm gained a parameter): compaction could not join them.
    pub fn check_columns(&self, expected: &[&str]) -> anyhow::Result<()> {
        let stored = self.columns(RUNS)?;
        if stored.is_empty()
            || stored
                .iter()
                .map(String::as_str)
                .eq(expected.iter().copied())
        {
            return Ok(());
        }
        let missing: Vec<&str> = expected
            .iter()
            .copied()
            .filter(|c| !stored.iter().any(|s| s == c))
            .collect();
        let extra: Vec<&str> = stored
            .iter()
            .map(String::as_str)
            .filter(|s| !expected.contains(s))
            .collect();
        bail!(
            "{} holds runs whose table has other columns than this linkrev writes for this \
             spec (not stored there: {}; stored but not written now: {}): use another results \
             directory or remove that one, so that tables are not mixed",
            self.dir.display(),
            if missing.is_empty() {
                "none".to_string()
            } else {
                missing.join(", ")
            },
            if extra.is_empty() {
                "none".to_string()
            } else {
                extra.join(", ")
            },
        );
    }

    /// Refuses to mix versions: every stored run must come from this linkrev.
    pub fn check_version(&self) -> anyhow::Result<()> {
        let ours = tool_version();
        if let Some((key, theirs)) = self.completed()?.into_iter().find(|(_, v)| *v != ours) {
            bail!(
                "{} holds results from {theirs} (e.g. run {key}), this is {ours}: \
                 use another results directory or remove that one, so that versions are not mixed",
                self.dir.display()
            );
        }
        Ok(())
    }

    /// Writes one batch as one chunk per table (the `runs` chunk last). `records` must be
    /// sorted by run index; `schema` is the sweep's parameter columns.
    pub fn write_batch(&self, records: &[RunRecord], schema: &ParamSchema) -> anyhow::Result<()> {
        debug_assert!(
            records.windows(2).all(|w| w[0].run.index < w[1].run.index),
            "batch not sorted"
        );
        let Some(first) = records.first().map(|r| r.run.index) else {
            return Ok(());
        };
        let name = chunk_name(first);
        // The runs chunk last: it commits the batch (see `open_with`).
        for table in crate::family::EVENT_TABLES {
            let mut df = event_frame(table, records, schema)?;
            write_parquet(&self.dir.join(table.name()).join(&name), &mut df)?;
        }
        write_parquet(
            &self.dir.join(RUNS).join(&name),
            &mut runs_frame(records, schema)?,
        )?;
        Ok(())
    }

    /// Merges each table's chunks into `<table>.parquet`, sorted by run index, then
    /// removes the chunks. A table of more than [`PART_RUNS`] runs continues in
    /// `<table>.<first run, 8 digits>.parquet` files of that many runs each (see
    /// [`PART_RUNS`]).
    ///
    /// Streaming, so memory stays flat however large the sweep: chunks are read in order
    /// of their first run index, and each is sorted; once the next chunk starts at run
    /// `k`, every row of a run below `k` has been read and can be written. Rows are written
    /// in row groups of [`row_group_runs`] consecutive run indices, boundaries that depend
    /// on the plan only, so the file's bytes do not depend on how runs were batched.
    pub fn compact(&self) -> anyhow::Result<()> {
        self.compact_reporting(&|_| {})
    }

    /// [`Self::compact`], telling `report` before each chunk it merges (a large sweep's
    /// compaction takes minutes).
    pub fn compact_reporting(&self, report: &dyn Fn(CompactProgress<'_>)) -> anyhow::Result<()> {
        let mut written: Vec<(&str, Vec<PathBuf>)> = Vec::new();
        for table in tables() {
            let compacted = self.dir.join(format!("{table}.parquet"));
            let parts = parquet_files(&self.dir.join(table))?;
            if parts.is_empty() {
                continue;
            }
            if compacted.exists() {
                // A compaction killed after writing the compacted files but before
                // removing the chunks: finish it if the chunks hold nothing new.
                let mut done = std::collections::HashSet::new();
                for file in self.compacted_files(table)? {
                    done.extend(run_indices(&read_parquet(&file)?)?);
                }
                let mut stale = true;
                for p in &parts {
                    stale &= run_indices(&read_parquet(p)?)?
                        .iter()
                        .all(|i| done.contains(i));
                }
                if stale {
                    for p in &parts {
                        fs::remove_file(p).with_context(|| format!("removing {}", p.display()))?;
                    }
                    continue;
                }
                anyhow::bail!(
                    "{} exists beside new chunks in {}: the sweep was compacted before these runs were added",
                    compacted.display(),
                    self.dir.join(table).display()
                );
            }
            let layout = Layout {
                group_runs: row_group_runs(table).min(self.part_runs),
                part_runs: self.part_runs,
            };
            stream_sorted(&parts, layout, &self.dir, table, report)
                .with_context(|| format!("compacting {}", compacted.display()))?;
            written.push((table, parts));
            crate::memory::return_freed_memory();
        }
        // The chunks go only once the compacted tables are verified: tables that lack
        // rows (or hold a run twice) are removed instead, so the chunks, from which
        // they were made, are still there to look at and compact again.
        if written.is_empty() {
            return Ok(());
        }
        let missing = self.verify()?;
        if let Some(first) = missing.first() {
            for (table, _) in &written {
                for file in self.compacted_files(table)? {
                    fs::remove_file(&file)
                        .with_context(|| format!("removing {}", file.display()))?;
                }
            }
            bail!(
                "{}: the compacted tables would not hold the rows their runs recorded ({} \
                 run(s); the first: {first}); they were removed and the chunks kept",
                self.dir.display(),
                missing.len()
            );
        }
        for (_, parts) in written {
            for p in &parts {
                fs::remove_file(p).with_context(|| format!("removing {}", p.display()))?;
            }
        }
        Ok(())
    }

    /// Checks that every stored run's rows are all there: in each per-event table, the
    /// rows of each run the `runs` table holds equal the count its `runs` row recorded.
    /// Rows of runs not (yet) in the `runs` table are a batch in flight and not judged.
    pub fn verify(&self) -> anyhow::Result<Vec<MissingRows>> {
        let columns = self.columns(RUNS)?;
        let counted: Vec<String> = crate::family::EVENT_TABLES.map(stored_rows_column).to_vec();
        if columns.is_empty() || !counted.iter().all(|c| columns.contains(c)) {
            return Ok(Vec::new());
        }
        let mut wanted = vec!["run_key"];
        wanted.extend(counted.iter().map(String::as_str));
        let runs = self.read_columns(RUNS, &wanted)?;
        let index = run_indices(&runs)?;
        let keys = runs.column("run_key")?.str()?.clone();
        let mut missing = Vec::new();
        for (table, column) in crate::family::EVENT_TABLES.into_iter().zip(&counted) {
            let found = self.rows_per_run(table.name())?;
            let recorded = runs.column(column)?.u64()?;
            for (row, (&i, recorded)) in index.iter().zip(recorded.iter()).enumerate() {
                let recorded = recorded.unwrap_or(0);
                let found = found.get(&i).copied().unwrap_or(0);
                if found != recorded {
                    missing.push(MissingRows {
                        run_key: keys.get(row).unwrap_or("?").to_string(),
                        table: table.name(),
                        recorded,
                        found,
                    });
                }
            }
        }
        Ok(missing)
    }

    /// Rows per run index of a table, read one column a slice at a time: a per-event
    /// table of a large sweep holds hundreds of millions of rows, which read whole took
    /// gigabytes. Chunk rows of runs the compacted table holds are not counted, as
    /// [`without_compacted_runs`] drops them.
    fn rows_per_run(&self, table: &str) -> anyhow::Result<HashMap<u64, u64>> {
        let (mut in_compacted, mut in_chunks) = (HashMap::new(), HashMap::new());
        for part in self.table_files(table)? {
            let counts = if self.is_chunk(table, &part) {
                &mut in_chunks
            } else {
                &mut in_compacted
            };
            count_run_indices(&part, counts)?;
        }
        for (run, rows) in in_chunks {
            in_compacted.entry(run).or_insert(rows);
        }
        Ok(in_compacted)
    }

    /// [`Store::verify`] as an error naming the runs (at most ten of them), for the
    /// commands that must not go on with a table that lacks rows.
    pub fn refuse_missing_rows(&self, what_now: &str) -> anyhow::Result<()> {
        let missing = self.verify()?;
        if missing.is_empty() {
            return Ok(());
        }
        let runs: std::collections::BTreeSet<&str> =
            missing.iter().map(|m| m.run_key.as_str()).collect();
        let shown: Vec<String> = missing.iter().take(10).map(ToString::to_string).collect();
        bail!(
            "{}: the tables do not hold the rows {} stored run(s) recorded: {}{}; {what_now}",
            self.dir.display(),
            runs.len(),
            shown.join("; "),
            if missing.len() > 10 { "; …" } else { "" }
        );
    }

    /// A table read back whole (compacted file plus any chunks), sorted by run index.
    pub fn read_table(&self, table: &str) -> anyhow::Result<DataFrame> {
        self.read(table, None)
    }

    /// Only `columns` (and `run_index`) of a table, sorted by run index: the per-request
    /// table of a large sweep has millions of rows, and a figure needs two columns of it.
    pub fn read_columns(&self, table: &str, columns: &[&str]) -> anyhow::Result<DataFrame> {
        let mut wanted: Vec<String> = vec!["run_index".into()];
        for c in columns {
            if !wanted.iter().any(|w| w == c) {
                wanted.push(c.to_string());
            }
        }
        self.read(table, Some(wanted))
    }

    /// Hands the rows of a table to `each`, sorted by run index, in pieces of about
    /// `rows` rows: a compacted table is read a slice at a time, so exporting millions
    /// of request rows does not hold them all in memory. Tables not (fully) compacted
    /// are read whole, as [`Store::read_table`] does, and handed over in one piece.
    /// Returns the number of rows.
    pub fn for_each_piece(
        &self,
        table: &str,
        rows: usize,
        each: &mut dyn FnMut(&mut DataFrame) -> anyhow::Result<()>,
    ) -> anyhow::Result<usize> {
        let compacted = self.table_files(table)?;
        if compacted.is_empty() || compacted.iter().any(|p| self.is_chunk(table, p)) {
            let mut df = self.read_table(table)?;
            each(&mut df)?;
            return Ok(df.height());
        }
        let mut rows_handed = 0;
        for file in &compacted {
            let open = || File::open(file).with_context(|| format!("opening {}", file.display()));
            let total =
                anyhow::Context::with_context(ParquetReader::new(open()?).num_rows(), || {
                    format!("reading {}", file.display())
                })?;
            let mut offset = 0;
            while offset < total {
                let len = rows.max(1).min(total - offset);
                let piece = ParquetReader::new(open()?)
                    .with_slice(Some((offset, len)))
                    .finish();
                let mut piece = anyhow::Context::with_context(piece, || {
                    format!("reading {} (corrupt file?)", file.display())
                })?;
                each(&mut piece)?;
                offset += len;
            }
            rows_handed += total;
        }
        Ok(rows_handed)
    }

    /// The column names of a table (empty if it has no rows stored yet).
    pub fn columns(&self, table: &str) -> anyhow::Result<Vec<String>> {
        let Some(first) = self.table_files(table)?.into_iter().next() else {
            return Ok(Vec::new());
        };
        let file = File::open(&first).with_context(|| format!("opening {}", first.display()))?;
        let schema = anyhow::Context::with_context(ParquetReader::new(file).schema(), || {
            format!("reading the schema of {}", first.display())
        })?;
        Ok(schema.iter_names().map(|n| n.to_string()).collect())
    }

    /// Whether `path`, one of [`Self::table_files`], is a chunk (not a compacted file).
    /// Callers classify the one listing they took: listing again could see a
    /// compaction's files appear in between.
    fn is_chunk(&self, table: &str, path: &Path) -> bool {
        path.parent() == Some(self.dir.join(table).as_path())
    }

    /// A table's files: its chunks, then its compacted files.
    fn table_files(&self, table: &str) -> anyhow::Result<Vec<PathBuf>> {
        let mut parts = parquet_files(&self.dir.join(table))?;
        parts.extend(self.compacted_files(table)?);
        Ok(parts)
    }

    /// A table's compacted files in run order: none until `<table>.parquet` exists (it
    /// is renamed into place last), then it and the parts after it.
    fn compacted_files(&self, table: &str) -> anyhow::Result<Vec<PathBuf>> {
        let first = self.dir.join(format!("{table}.parquet"));
        if !first.exists() {
            return Ok(Vec::new());
        }
        let mut later = Vec::new();
        let listing =
            fs::read_dir(&self.dir).with_context(|| format!("listing {}", self.dir.display()))?;
        for entry in listing {
            let path = entry?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if let Some(first_run) = part_first_run(name, table) {
                later.push((first_run, path));
            }
        }
        later.sort();
        let mut files = vec![first];
        files.extend(later.into_iter().map(|(_, path)| path));
        Ok(files)
    }

    /// Refuses a directory whose runs are stored without one of the tables (every
    /// stored run writes every table, empty or not): one written by an older linkrev.
    pub fn check_tables(&self) -> anyhow::Result<()> {
        if self.table_files(RUNS)?.is_empty() {
            return Ok(());
        }
        for table in tables() {
            if self.table_files(table)?.is_empty() {
                bail!(
                    "{}: runs are stored but there is no `{table}` table: the directory was \
                     written by an older linkrev, whose tables this one cannot extend; run \
                     the sweep again into a new results directory",
                    self.dir.display()
                );
            }
        }
        Ok(())
    }

    fn read(&self, table: &str, columns: Option<Vec<String>>) -> anyhow::Result<DataFrame> {
        let parts = self.table_files(table)?;
        if parts.is_empty() && table != RUNS {
            self.check_tables()?;
        }
        let frames = parts
            .iter()
            .map(|p| match &columns {
                None => read_parquet(p),
                Some(columns) => {
                    let file = File::open(p).with_context(|| format!("opening {}", p.display()))?;
                    let df = ParquetReader::new(file)
                        .with_columns(Some(columns.clone()))
                        .finish();
                    anyhow::Context::with_context(df, || {
                        format!("reading {} (corrupt chunk?)", p.display())
                    })
                }
            })
            .collect::<anyhow::Result<Vec<_>>>()?;
        let compacted = parts.iter().filter(|p| !self.is_chunk(table, p)).count();
        let frames = without_compacted_runs(frames, compacted)?;
        if frames.is_empty() {
            // Nothing stored yet: no columns to sort by; callers say so.
            return Ok(DataFrame::empty());
        }
        let all = concat_frames(frames)?;
        Ok(all.sort(
            ["run_index"],
            SortMultipleOptions::default().with_maintain_order(true),
        )?)
    }
}

/// `frames` are the chunks, then the `compacted` files last. Chunk rows of runs the
/// compacted files already hold are dropped: compaction writes the compacted files
/// before it removes the chunks, so a kill in between (or a report reading during
/// compaction) sees both, and must not count those runs twice.
fn without_compacted_runs(
    mut frames: Vec<DataFrame>,
    compacted: usize,
) -> anyhow::Result<Vec<DataFrame>> {
    if compacted == 0 || frames.len() <= compacted {
        return Ok(frames);
    }
    let chunks = frames.len() - compacted;
    let mut done = std::collections::HashSet::new();
    for df in &frames[chunks..] {
        done.extend(run_indices(df)?);
    }
    for df in &mut frames[..chunks] {
        let mask: BooleanChunked = df
            .column("run_index")?
            .u64()?
            .iter()
            .map(|i| Some(i.is_none_or(|i| !done.contains(&i))))
            .collect();
        *df = df.filter(&mask)?;
    }
    Ok(frames)
}

/// A stored run whose rows in one per-event table differ from what it recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingRows {
    /// The run's key.
    pub run_key: String,
    /// The per-event table.
    pub table: &'static str,
    /// The rows its `runs` row recorded.
    pub recorded: u64,
    /// The rows the table holds.
    pub found: u64,
}

impl std::fmt::Display for MissingRows {
    /// Says which way the count is wrong: rows missing (a lost or truncated chunk), or
    /// rows beyond what the run recorded (the run stored twice, by two processes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (run, table, found, recorded) = (&self.run_key, self.table, self.found, self.recorded);
        if found < recorded {
            write!(
                f,
                "run {run} recorded {recorded} `{table}` rows but the table holds only \
                 {found} ({} missing)",
                recorded - found
            )
        } else {
            write!(
                f,
                "run {run} recorded {recorded} `{table}` rows but the table holds {found} \
                 ({} too many: the run is stored more than once)",
                found - recorded
            )
        }
    }
}

/// Runs per row group of a compacted table (see [`Store::compact`]). Compaction holds
/// about two row groups of rows (the open group and the next chunk), so the per-event
/// tables, thousands of rows of 30 columns per run, get groups of 4 runs (a 10,000-run
/// compaction peaked at 213 MB with 16, 174 MB with 8; on a later machine `linkrev
/// merge` of a 10,030-run sweep peaked at 193,148 kB with 8 and 185,120 kB with 4). The Parquet writer keeps each
/// column chunk's page records until it finishes the file (about 1.4 kB each), so the
/// `runs` table, one row per run and 78 columns, gets groups of 1,024 runs: in groups
/// of 16 rows its records took 116 MB of that compaction.
pub fn row_group_runs(table: &str) -> u64 {
    if table == RUNS { 1024 } else { 4 }
}

/// Where a compaction is.
#[derive(Clone, Copy, Debug)]
pub struct CompactProgress<'a> {
    /// The table being compacted.
    pub table: &'a str,
    /// Its chunks merged so far.
    pub chunks_done: usize,
    /// Its chunks in all.
    pub chunks: usize,
}

/// Runs per compacted file. The writer's page records (above) are freed only when a
/// file is finished, so one file per table made a compaction's memory grow with the
/// sweep; files of 2,048 runs bound it. Sweeps of at most this many runs keep one file
/// per table.
pub const PART_RUNS: u64 = 2048;

/// The compacted files of a sweep of `runs` runs, for messages: `runs.parquet, …`, and
/// how the tables continue when they are split.
pub fn compacted_summary(runs: usize) -> String {
    let names: Vec<String> = tables().iter().map(|t| format!("{t}.parquet")).collect();
    let mut summary = names.join(", ");
    if runs as u64 > PART_RUNS {
        summary.push_str(&format!(
            " (a table with rows past run {} continues in files of {PART_RUNS} runs: {}, …)",
            PART_RUNS - 1,
            part_name("requests", PART_RUNS)
        ));
    }
    summary
}

/// The name of the compacted file of `table` that starts at run `first`.
fn part_name(table: &str, first: u64) -> String {
    if first == 0 {
        format!("{table}.parquet")
    } else {
        format!("{table}.{first:08}.parquet")
    }
}

/// The first run of a compacted file after the first, from its name
/// (`requests.00002048.parquet` → 2048), if `name` is one of `table`'s (eight digits, more
/// from run 100,000,000 on).
fn part_first_run(name: &str, table: &str) -> Option<u64> {
    let digits = name
        .strip_prefix(table)?
        .strip_prefix('.')?
        .strip_suffix(".parquet")?;
    if digits.len() < 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&first| first > 0)
}

/// How compacted rows are cut into row groups and files (runs per each); both depend
/// on run indices only, so the files do not depend on how runs were batched.
#[derive(Clone, Copy)]
struct Layout {
    group_runs: u64,
    part_runs: u64,
}

/// A compacted file being written: a temporary file renamed into place once every file
/// of the table is complete.
struct OpenPart {
    first: u64,
    temp: tempfile::NamedTempFile,
    out: SharedOut,
    writer: polars::io::parquet::write::BatchedWriter<SharedOut>,
}

/// A buffered file the Parquet writer writes to and this module flushes (the writer
/// keeps its output until it is dropped and would flush it silently).
#[derive(Clone)]
struct SharedOut(std::rc::Rc<std::cell::RefCell<std::io::BufWriter<File>>>);

impl std::io::Write for SharedOut {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().write(bytes)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.0.borrow_mut().flush()
    }
}

impl OpenPart {
    fn start(dir: &Path, first: u64, schema: &Schema) -> anyhow::Result<Self> {
        let temp = crate::output::temporary_file_in(dir)
            .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
        let file = temp.reopen()?;
        let out = SharedOut(std::rc::Rc::new(std::cell::RefCell::new(
            std::io::BufWriter::new(file),
        )));
        let writer = ParquetWriter::new(out.clone())
            .set_parallel(false)
            .batched(schema)?;
        Ok(Self {
            first,
            temp,
            out,
            writer,
        })
    }

    /// Writes the footer and syncs the file; it is renamed into place later.
    fn finish(mut self) -> anyhow::Result<(u64, tempfile::NamedTempFile)> {
        use std::io::Write;
        self.writer.finish()?;
        drop(self.writer);
        self.out.flush()?;
        self.temp.as_file().sync_all()?;
        Ok((self.first, self.temp))
    }
}

/// Adds the rows of each run index in the parquet file `path` to `counts`, reading the
/// `run_index` column a million rows at a time.
fn count_run_indices(path: &Path, counts: &mut HashMap<u64, u64>) -> anyhow::Result<()> {
    const SLICE_ROWS: usize = 1 << 20;
    let open = || File::open(path).with_context(|| format!("opening {}", path.display()));
    let total = anyhow::Context::with_context(ParquetReader::new(open()?).num_rows(), || {
        format!("reading {}", path.display())
    })?;
    let mut offset = 0;
    while offset < total {
        let len = SLICE_ROWS.min(total - offset);
        let piece = ParquetReader::new(open()?)
            .with_columns(Some(vec!["run_index".to_string()]))
            .with_slice(Some((offset, len)))
            .finish();
        let piece = anyhow::Context::with_context(piece, || {
            format!("reading {} (corrupt file?)", path.display())
        })?;
        for run in piece.column("run_index")?.u64()?.iter() {
            *counts.entry(run.unwrap_or(0)).or_default() += 1;
        }
        offset += len;
    }
    Ok(())
}

fn run_indices(df: &DataFrame) -> anyhow::Result<Vec<u64>> {
    Ok(df
        .column("run_index")?
        .u64()?
        .iter()
        .map(|v| v.unwrap_or(0))
        .collect())
}

/// Writes the rows of `parts` (each sorted by run index, in order of first run index) to
/// `table`'s compacted files in `dir`, sorted by run index, holding only the rows not
/// yet known to be final and one file's page records.
fn stream_sorted(
    parts: &[PathBuf],
    layout: Layout,
    dir: &Path,
    table: &str,
    report: &dyn Fn(CompactProgress<'_>),
) -> anyhow::Result<()> {
    // Every chunk of one sweep has the same columns (the plan's schema).
    let first = read_parquet(&parts[0])?;
    let schema = first.schema().clone();
    // The first file exists even when the table has no rows (it carries the columns).
    let mut open = OpenPart::start(dir, 0, &schema)?;
    let mut done_files = Vec::new();
    let mut pending = Some(first);
    let mut carry: Option<DataFrame> = None;
    for k in 0..parts.len() {
        report(CompactProgress {
            table,
            chunks_done: k,
            chunks: parts.len(),
        });
        let df = match pending.take() {
            Some(df) => df,
            None => read_parquet(&parts[k])?,
        };
        let mut all = match carry.take() {
            Some(mut c) => {
                c.vstack_mut(&df)?;
                c
            }
            None => df,
        };
        // Batches usually hold consecutive runs, so the rows are mostly in order already:
        // sorting them anyway copied every column.
        if !run_indices(&all)?.is_sorted() {
            all = all.sort(
                ["run_index"],
                SortMultipleOptions::default().with_maintain_order(true),
            )?;
        }
        // Rows below `final_below` can no longer be joined by rows of a later part.
        let final_below = match parts.get(k + 1).and_then(|p| chunk_index(p)) {
            Some(next) => (next as u64 / layout.group_runs) * layout.group_runs,
            None => u64::MAX,
        };
        let idx = run_indices(&all)?;
        let done = idx.partition_point(|&i| i < final_below);
        let mut start = 0;
        while start < done {
            let (group, part) = (
                idx[start] / layout.group_runs,
                idx[start] / layout.part_runs,
            );
            let end = start
                + idx[start..done].partition_point(|&i| {
                    i / layout.group_runs == group && i / layout.part_runs == part
                });
            let part_first = part * layout.part_runs;
            if part_first != open.first {
                let next = OpenPart::start(dir, part_first, &schema)?;
                done_files.push(std::mem::replace(&mut open, next).finish()?);
                crate::memory::return_freed_memory();
            }
            let mut piece = all.slice(start as i64, end - start);
            piece.rechunk_mut();
            open.writer.write_batch(&piece)?;
            start = end;
        }
        carry = Some(all.slice(done as i64, all.height() - done));
    }
    done_files.push(open.finish()?);
    // The first file last: its presence says the table is compacted.
    done_files.sort_by_key(|&(first, _)| std::cmp::Reverse(first));
    for (first, temp) in done_files {
        let path = dir.join(part_name(table, first));
        temp.persist(&path)
            .map_err(|e| e.error)
            .with_context(|| format!("renaming into {}", path.display()))?;
    }
    Ok(())
}

fn concat_frames(frames: Vec<DataFrame>) -> anyhow::Result<DataFrame> {
    let mut iter = frames.into_iter();
    let Some(mut all) = iter.next() else {
        return Ok(DataFrame::empty());
    };
    for df in iter {
        all.vstack_mut(&df)?;
    }
    Ok(all)
}
