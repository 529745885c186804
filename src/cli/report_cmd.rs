//! `linkrev report RESULTS_DIR... [--figures SPEC] [--labels FILE] --out reports/NAME`.

use super::Outcome;
use crate::report::{self, FigureSource};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Results directories written by `linkrev sweep` (one per experiment).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Figure spec (TOML, `[[figure]]` tables), e.g. analysis/me_load.figures.toml.
    /// Without it: every main metric against every numeric sweep axis.
    #[arg(long)]
    pub figures: Option<PathBuf>,
    /// Series labels and styles for every figure of the report (TOML: `[labels]` and
    /// `[styles]` tables, keyed as in a figure spec), e.g. `"me-rl" = "RL (ours)"`. A
    /// figure spec file's own tables, and each figure's, win over it.
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Report directory (default: reports/<first experiment>). A previous report there
    /// is replaced while it holds only what linkrev wrote (its `.linkrev-manifest`);
    /// any other non-empty directory is refused.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: ReportArgs) -> anyhow::Result<Outcome> {
    let out = match &args.out {
        Some(out) => out.clone(),
        None => {
            crate::results::store::Store::open_read_only(&args.dirs[0])?;
            let plan = crate::sweep::spec_copy::plan(&args.dirs[0])?;
            PathBuf::from("reports").join(plan.experiment)
        }
    };
    let source = match &args.figures {
        Some(path) => FigureSource::File(path),
        None => FigureSource::Defaults,
    };
    let summary = report::write_report(&args.dirs, source, args.labels.as_deref(), &out)?;
    eprintln!(
        "{} figures ({} panels) from {} runs; {} safety violations",
        summary.figures, summary.panels, summary.runs, summary.safety_violations
    );
    outln!("{}", summary.index.display());
    Ok(Outcome::Success)
}
