//! Where a command's output goes can fail: a reader that closes the pipe early
//! (`linkrev algorithms --json | head -c1`) ends the command quietly, as it ends
//! `ls | head`; a full device is a clean error, exit 2. Neither is a panic (exit 101,
//! "failed printing to stdout").

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// Commands that print, each quick.
const COMMANDS: &[&[&str]] = &[
    &["algorithms", "--json"],
    &["algorithms"],
    &["run", "--algo", "me-rl", "--rwp", "nodes=5,duration=20"],
    &["sweep", "analysis/me_load.toml", "--dry-run"],
    &[
        "trace",
        "stats",
        "traces/setdest_v1_n20_p10_M10_t200_800x400.tcl",
    ],
];

fn linkrev(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_linkrev"));
    command
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(Stdio::piped());
    command
}

#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    for args in COMMANDS {
        let mut child = linkrev(args).stdout(Stdio::piped()).spawn().unwrap();
        // The reader is gone before the command writes anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        // SIGPIPE's default action, as for `ls | head`.
        assert_eq!(out.status.signal(), Some(13), "{args:?}: {stderr}");
    }
}

#[test]
fn a_full_device_is_a_clean_error() {
    for args in COMMANDS {
        let full = std::fs::File::create("/dev/full").unwrap();
        let out = linkrev(args).stdout(full).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot write to standard output: No space left on device"),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
