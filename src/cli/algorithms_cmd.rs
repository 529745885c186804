//! `linkrev algorithms`: the registry as a table or JSON: every algorithm with its
//! family, description and parameters (type, range, default).

use super::Outcome;
use crate::registry::Algorithm;
use clap::Args;
use serde::Serialize;

#[derive(Debug, Args)]
pub struct AlgorithmsArgs {
    /// Print the registry as JSON.
    #[arg(long, conflicts_with = "markdown")]
    pub json: bool,
    /// Print the registry as a Markdown table (the book's algorithms reference page).
    #[arg(long)]
    pub markdown: bool,
}

#[derive(Serialize)]
struct Entry {
    name: &'static str,
    /// What figure legends call it by default.
    legend: &'static str,
    family: &'static str,
    description: &'static str,
    needs_workload: bool,
    params: Vec<Param>,
}

#[derive(Serialize)]
struct Param {
    name: &'static str,
    description: &'static str,
    kind: String,
    default: crate::protocol::ParamValue,
}

/// The registry as a Markdown table: the book's algorithms reference page.
pub fn markdown() -> String {
    let mut out = String::from(
        "| algorithm | in legends | family | description | parameters (`--param`, `[params.NAME]`) |\n\
         |---|---|---|---|---|\n",
    );
    for e in entries() {
        let params = if e.params.is_empty() {
            "none".to_string()
        } else {
            e.params
                .iter()
                .map(|p| {
                    format!(
                        "`{}`: {} ({}, default {})",
                        p.name, p.description, p.kind, p.default
                    )
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {params} |\n",
            e.name, e.legend, e.family, e.description
        ));
    }
    out
}

fn entries() -> Vec<Entry> {
    Algorithm::all()
        .map(|a| Entry {
            name: a.name(),
            legend: a.legend(),
            family: a.family().name(),
            description: a.description(),
            needs_workload: a.family().needs_workload(),
            params: a
                .params()
                .iter()
                .map(|p| Param {
                    name: p.name,
                    description: p.description,
                    kind: p.kind_text(),
                    default: p.default_value(),
                })
                .collect(),
        })
        .collect()
}

pub fn run(args: AlgorithmsArgs) -> anyhow::Result<Outcome> {
    if args.markdown {
        out!("{}", markdown());
        return Ok(Outcome::Success);
    }
    let entries = entries();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&entries)?);
        return Ok(Outcome::Success);
    }
    let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    for e in &entries {
        outln!("{:<width$}  {:<16}  {}", e.name, e.family, e.description);
        for p in &e.params {
            outln!(
                "{:<width$}    --param {}=…  {} ({}, default {})",
                "",
                p.name,
                p.description,
                p.kind,
                p.default
            );
        }
    }
    Ok(Outcome::Success)
}
