//! Slurm batch scripts for a sweep: one array job whose task K runs shard K/N of the
//! plan with the cores Slurm gave it, and one merge job that checks and compacts the
//! results once every task has succeeded.
//!
//! The text is generated here, without touching the file system or Slurm, so that it can
//! be tested exactly; `linkrev slurm` (src/cli/slurm_cmd.rs) writes and submits it.
//!
//! Choices, and why:
//! - Every path in a script is absolute: the tasks run on other machines, in whatever
//!   directory the cluster starts them, with the linkrev binary that wrote the scripts
//!   (the results depend on the tool version, and `merge` refuses to mix versions).
//! - Paths are double-quoted, with `\`, `"`, `$` and `` ` `` escaped, so spaces and
//!   shell characters survive both bash and sbatch's own `#SBATCH` parser (which
//!   understands double quotes and backslashes the same way). `%` in a log path is
//!   doubled, since sbatch expands `%A`, `%a`, `%j` there.
//! - The merge job is submitted by the caller with `--dependency=afterok:<array>` and
//!   `--kill-on-invalid-dep=yes`: without the latter a failed task leaves the merge job
//!   pending forever (Slurm 22.05 ignores the cluster-wide `kill_invalid_depend`). These
//!   flags, and every `#SBATCH` option used here, exist in Slurm 22.05 to 24.x.
//! - A shard count of N tasks gives task K the runs whose plan index is K−1 modulo N
//!   (see [`super::execute::Shard`]), so each task gets a similar mix of points. The
//!   plan puts a point's algorithms side by side, so with A algorithms and N a multiple
//!   of A a task runs one algorithm only: its runs may take longer or shorter than
//!   another task's.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Folder inside the results directory that holds the scripts and their logs.
pub const SLURM_DIR: &str = "slurm";
/// Array job script, inside [`SLURM_DIR`].
pub const ARRAY_SCRIPT: &str = "array.sbatch";
/// Merge job script, inside [`SLURM_DIR`].
pub const MERGE_SCRIPT: &str = "merge.sbatch";
/// Log folder, inside [`SLURM_DIR`]; Slurm does not create it, so the writer must.
pub const LOG_DIR: &str = "logs";

/// Everything the two scripts depend on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Jobs {
    /// Experiment name (the job names derive from it).
    pub experiment: String,
    /// Absolute path of the linkrev executable the tasks run.
    pub exe: PathBuf,
    /// Absolute path of the spec.
    pub spec: PathBuf,
    /// Absolute results directory.
    pub results: PathBuf,
    /// Array tasks, one shard each (≥ 1).
    pub tasks: usize,
    /// Cores per array task; the task runs that many worker threads.
    pub cpus_per_task: usize,
    /// Slurm partition(s) for both jobs ([`check_partition`]); `None`: the default.
    pub partition: Option<String>,
    /// Wall-time limit per job, in a format Slurm accepts (checked by [`check_time`]).
    pub time: Option<String>,
    /// For a sweep with a precision target: the most waves it can take, after which
    /// the merge job stops resubmitting; `None` for a fixed plan.
    pub waves: Option<u32>,
}

impl Jobs {
    /// `<results>/slurm`: the scripts and their logs.
    pub fn slurm_dir(&self) -> PathBuf {
        self.results.join(SLURM_DIR)
    }

    /// `<results>/slurm/logs`: both jobs' output; must exist before submitting.
    pub fn log_dir(&self) -> PathBuf {
        self.slurm_dir().join(LOG_DIR)
    }

    /// Path of the array job script, `<results>/slurm/array.sbatch`.
    pub fn array_script_path(&self) -> PathBuf {
        self.slurm_dir().join(ARRAY_SCRIPT)
    }

    /// Path of the merge job script, `<results>/slurm/merge.sbatch`.
    pub fn merge_script_path(&self) -> PathBuf {
        self.slurm_dir().join(MERGE_SCRIPT)
    }

    /// Log of array task `task` of job `job` (what the `--output` pattern expands to).
    pub fn task_log(&self, job: &str, task: usize) -> PathBuf {
        self.log_dir().join(format!("array-{job}_{task}.out"))
    }

    /// Log of the merge job `job`.
    pub fn merge_log(&self, job: &str) -> PathBuf {
        self.log_dir().join(format!("merge-{job}.out"))
    }

    /// The array job: task K runs `linkrev sweep SPEC --shard K/N` with its own cores.
    pub fn array_script(&self) -> String {
        let mut s = self.header(
            &format!("linkrev-{}", self.experiment),
            &self.log_dir().join("array-%A_%a.out"),
            self.cpus_per_task,
        );
        let _ = writeln!(s, "#SBATCH --array=1-{}", self.tasks);
        let _ = writeln!(
            s,
            "\n# Task K of {n} runs shard K/{n} of the plan; shards write disjoint chunks\n\
             # into one results directory, and the merge job compacts them.",
            n = self.tasks
        );
        s.push_str("set -euo pipefail\n");
        let _ = writeln!(
            s,
            "exec {} sweep {} --results {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\" \
             --threads \"${{SLURM_CPUS_PER_TASK:-1}}\"",
            quote(&self.exe),
            quote(&self.spec),
            quote(&self.results),
            self.tasks
        );
        s
    }

    /// The merge job: checks every run is stored (exit 1 lists the missing ones) and
    /// compacts the tables. For a sweep with a precision target, runs missing after a
    /// wave are the next wave's (points short of their target): the job submits the
    /// array job again and itself after it, up to [`Jobs::waves`] times.
    pub fn merge_script(&self) -> String {
        let mut s = self.header(
            &format!("linkrev-{}-merge", self.experiment),
            &self.log_dir().join("merge-%j.out"),
            1,
        );
        s.push_str(
            "\n# Submitted with --dependency=afterok:<array job> --kill-on-invalid-dep=yes:\n\
             # runs once every array task has succeeded, is cancelled if one failed.\n",
        );
        s.push_str("set -euo pipefail\n");
        let Some(waves) = self.waves else {
            let _ = writeln!(
                s,
                "exec {} merge {}",
                quote(&self.exe),
                quote(&self.results)
            );
            return s;
        };
        let _ = writeln!(
            s,
            "\n# A sweep with a precision target runs in waves: `linkrev merge` exits 1 while\n\
             # points short of their target need more runs, and this job then submits the\n\
             # array job again and itself after it (at most {waves} waves in all).\n\
             wave=\"${{LINKREV_WAVE:-1}}\"\n\
             status=0\n\
             {exe} merge {results} || status=$?\n\
             if [ \"$status\" -ne 1 ]; then exit \"$status\"; fi\n\
             if [ \"$wave\" -ge {waves} ]; then\n\
             \x20   echo \"linkrev: runs still missing after $wave waves; the list is above\" >&2\n\
             \x20   exit 1\n\
             fi\n\
             array=$(sbatch --parsable {array})\n\
             array=\"${{array%%;*}}\"\n\
             merge=$(sbatch --parsable --dependency=afterok:\"$array\" --kill-on-invalid-dep=yes \\\n\
             \x20   --export=ALL,LINKREV_WAVE=$((wave + 1)) {merge})\n\
             echo \"wave $wave merged; wave $((wave + 1)): array job $array, merge job ${{merge%%;*}}\"",
            exe = quote(&self.exe),
            results = quote(&self.results),
            array = quote(&self.array_script_path()),
            merge = quote(&self.merge_script_path()),
        );
        s
    }

    fn header(&self, name: &str, output: &Path, cpus: usize) -> String {
        let mut s = String::from("#!/bin/bash\n");
        let _ = writeln!(s, "# Written by `linkrev slurm` for {}.", quote(&self.spec));
        let _ = writeln!(s, "#SBATCH --job-name={name}");
        let _ = writeln!(
            s,
            "#SBATCH --output={}",
            quote_str(&output.display().to_string().replace('%', "%%"))
                // The job-id patterns, doubled above with the rest, are meant.
                .replace("%%A", "%A")
                .replace("%%a", "%a")
                .replace("%%j", "%j")
        );
        // The job's working directory: the results directory, which every node sees.
        let _ = writeln!(s, "#SBATCH --chdir={}", quote(&self.results));
        let _ = writeln!(s, "#SBATCH --ntasks=1");
        let _ = writeln!(s, "#SBATCH --cpus-per-task={cpus}");
        if let Some(p) = &self.partition {
            let _ = writeln!(s, "#SBATCH --partition={p}");
        }
        if let Some(t) = &self.time {
            let _ = writeln!(s, "#SBATCH --time={t}");
        }
        s
    }
}

/// A path as one double-quoted word for bash and for `#SBATCH` lines.
pub fn quote(path: &Path) -> String {
    quote_str(&path.display().to_string())
}

fn quote_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// A path the scripts can carry: a newline would end a `#SBATCH` line or a command.
pub fn check_path(path: &Path) -> Result<(), String> {
    if path.display().to_string().contains(['\n', '\r']) {
        Err(format!(
            "{:?}: a path with a line break cannot go into a batch script",
            path
        ))
    } else {
        Ok(())
    }
}

/// Slurm's time formats: `M`, `M:S`, `H:M:S`, `D-H`, `D-H:M`, `D-H:M:S` (digits only).
pub fn check_time(text: &str) -> Result<String, String> {
    let bad = || {
        format!("`{text}` is not a Slurm time limit: use HH:MM:SS (or M, M:S, D-H, D-H:M, D-H:M:S)")
    };
    let (days, clock) = match text.split_once('-') {
        Some((d, rest)) => (Some(d), rest),
        None => (None, text),
    };
    let fields: Vec<&str> = clock.split(':').collect();
    let digits = |f: &str| !f.is_empty() && f.chars().all(|c| c.is_ascii_digit());
    let ok = days.is_none_or(digits) && fields.iter().all(|f| digits(f)) && fields.len() <= 3;
    if ok { Ok(text.to_string()) } else { Err(bad()) }
}

/// A partition name (or comma-separated list) safe to put on an `#SBATCH` line.
pub fn check_partition(text: &str) -> Result<String, String> {
    if !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ','))
    {
        Ok(text.to_string())
    } else {
        Err(format!(
            "`{text}` is not a partition name: use letters, digits, `_`, `-`, `.` (`,` between names)"
        ))
    }
}

/// The job id `sbatch --parsable` prints: `ID` or `ID;CLUSTER`.
pub fn parse_job_id(stdout: &str) -> Option<String> {
    let line = stdout.lines().map(str::trim).rfind(|l| !l.is_empty())?;
    let id = line.split(';').next()?.trim();
    (!id.is_empty() && id.chars().all(|c| c.is_ascii_digit())).then(|| id.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs() -> Jobs {
        Jobs {
            experiment: "me-load".into(),
            exe: "/opt/linkrev/bin/linkrev".into(),
            spec: "/home/a b/analysis/me_load.toml".into(),
            results: "/scratch/res $x/me-load".into(),
            tasks: 8,
            cpus_per_task: 4,
            partition: None,
            time: None,
            waves: None,
        }
    }

    #[test]
    fn array_script_runs_one_shard_per_task_with_its_cores() {
        let text = jobs().array_script();
        let expected = r#"#!/bin/bash
# Written by `linkrev slurm` for "/home/a b/analysis/me_load.toml".
#SBATCH --job-name=linkrev-me-load
#SBATCH --output="/scratch/res \$x/me-load/slurm/logs/array-%A_%a.out"
#SBATCH --chdir="/scratch/res \$x/me-load"
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --array=1-8

# Task K of 8 runs shard K/8 of the plan; shards write disjoint chunks
# into one results directory, and the merge job compacts them.
set -euo pipefail
exec "/opt/linkrev/bin/linkrev" sweep "/home/a b/analysis/me_load.toml" --results "/scratch/res \$x/me-load" --shard "${SLURM_ARRAY_TASK_ID}/8" --threads "${SLURM_CPUS_PER_TASK:-1}"
"#;
        assert_eq!(text, expected);
    }

    #[test]
    fn merge_script_merges_the_results_directory() {
        let mut j = jobs();
        j.partition = Some("short".into());
        j.time = Some("01:30:00".into());
        let text = j.merge_script();
        assert!(text.starts_with("#!/bin/bash\n"));
        for line in [
            "#SBATCH --job-name=linkrev-me-load-merge",
            r#"#SBATCH --output="/scratch/res \$x/me-load/slurm/logs/merge-%j.out""#,
            "#SBATCH --cpus-per-task=1",
            "#SBATCH --partition=short",
            "#SBATCH --time=01:30:00",
            r#"exec "/opt/linkrev/bin/linkrev" merge "/scratch/res \$x/me-load""#,
        ] {
            assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
        }
        assert!(!text.contains("--array"));
        // Options after the first command are ignored by sbatch: all come first.
        let first_command = text.lines().position(|l| l.starts_with("set ")).unwrap();
        assert!(
            text.lines()
                .skip(first_command)
                .all(|l| !l.starts_with("#SBATCH"))
        );
    }

    #[test]
    fn a_sequential_merge_submits_the_next_wave_and_is_valid_bash() {
        let jobs = Jobs {
            waves: Some(5),
            ..jobs()
        };
        let text = jobs.merge_script();
        for needed in [
            "wave=\"${LINKREV_WAVE:-1}\"",
            "merge \"/scratch/res \\$x/me-load\" || status=$?",
            "if [ \"$status\" -ne 1 ]; then exit \"$status\"; fi",
            "if [ \"$wave\" -ge 5 ]; then",
            "array=$(sbatch --parsable \"/scratch/res \\$x/me-load/slurm/array.sbatch\")",
            "--dependency=afterok:\"$array\" --kill-on-invalid-dep=yes",
            "--export=ALL,LINKREV_WAVE=$((wave + 1))",
        ] {
            assert!(text.contains(needed), "no `{needed}` in\n{text}");
        }
        // bash parses it (`-n`: read, do not run).
        let checked = std::process::Command::new("bash")
            .arg("-n")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                child
                    .stdin
                    .take()
                    .expect("piped")
                    .write_all(text.as_bytes())?;
                child.wait()
            });
        assert!(
            checked.is_ok_and(|s| s.success()),
            "bash -n refuses\n{text}"
        );
    }

    #[test]
    fn quoting_escapes_shell_characters_and_log_paths_keep_only_job_patterns() {
        assert_eq!(
            quote(Path::new(r#"/a "b"/c\d/`e`"#)),
            r#""/a \"b\"/c\\d/\`e\`""#
        );
        let mut j = jobs();
        j.results = "/r/100%/x".into();
        let text = j.array_script();
        assert!(text.contains(r#"--output="/r/100%%/x/slurm/logs/array-%A_%a.out""#));
        assert!(check_path(Path::new("/a\nb")).is_err());
        assert!(check_path(Path::new("/a b")).is_ok());
    }

    #[test]
    fn times_partitions_and_job_ids() {
        for ok in ["30", "10:00", "01:30:00", "2-12", "2-12:30", "2-12:30:00"] {
            assert_eq!(check_time(ok).as_deref(), Ok(ok));
        }
        for bad in ["", "1:2:3:4", "1h", "-1", "1-", "1:", "1;rm", "1 0"] {
            assert!(check_time(bad).is_err(), "{bad}");
        }
        assert!(check_partition("debug,long").is_ok());
        assert!(check_partition("").is_err());
        assert!(check_partition("a b").is_err());
        assert!(check_partition("a\n#SBATCH").is_err());
        assert_eq!(parse_job_id("1234\n").as_deref(), Some("1234"));
        assert_eq!(parse_job_id("1234;cluster\n").as_deref(), Some("1234"));
        assert_eq!(parse_job_id("Submitted batch job 12"), None);
        assert_eq!(parse_job_id(""), None);
    }
}
