//! One line per property of a check report, for the tests that compare two searches'
//! verdicts (`check_partial_order.rs`, `check_quotients.rs`, `check_gaps.rs`): a
//! violation with its length, since both searches must find a shortest one.

use linkrev::check::{CheckReport, Verdict};

/// `name: verdict`, a violation as `name: violated in N`.
pub fn verdicts(report: &CheckReport) -> Vec<String> {
    report
        .properties
        .iter()
        .map(|p| match &p.verdict {
            Verdict::Violated { path, .. } => format!("{}: violated in {}", p.name, path.len()),
            v => format!("{}: {v:?}", p.name),
        })
        .collect()
}
