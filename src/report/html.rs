//! The report page: plain HTML with inline CSS and inline SVG, no scripts and no
//! external resources, so it opens the same from a laptop, a cluster's file browser or
//! a paper's supplementary material, and renders without any console error.
//!
//! Safety comes first on the page: a wrong number is worse than a slow one, so runs
//! that violated a safety property, were stopped by the message-storm guard or lost a
//! token are counted at the top, in red when there are any.

use super::Experiment;
use super::figures::{Figure, column_text};

use crate::registry::Algorithm;
use crate::results::tables::tool_version;
use polars::prelude::*;
use std::fmt::Write as _;

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Run counts and health per experiment and algorithm, and the runs to look at.
pub struct Health {
    /// `data/_runs.csv`: experiment, algorithm, planned, stored, safety_violations,
    /// runs_with_violations, aborted_runs, tokens_lost, then per event table the events
    /// a run's end cut off ([`EventTable::unfinished_count`]: requests_unserved_at_end,
    /// censored_changes).
    pub table: DataFrame,
    pub safety_violations: u64,
    pub aborted_runs: u64,
    pub tokens_lost: u64,
    pub runs: u64,
    pub planned: u64,
    /// The runs with a violation, an abort or lost tokens, in order.
    pub incidents: Vec<Incident>,
}

/// A run to examine.
#[derive(Clone, Debug, PartialEq)]
pub struct Incident {
    /// Its experiment.
    pub experiment: String,
    /// Its run key.
    pub key: String,
    /// What happened (seed, violations, abort, tokens lost).
    pub what: String,
    /// For a run with a safety violation: the `linkrev replay` command that shows the
    /// ten seconds before its first violation and one after.
    pub replay: Option<String>,
}

/// The `linkrev replay` command for the run `key` of the sweep in `dir` (as the report
/// was given it: relative to where `linkrev report` ran), around its first violation at
/// `time_s`.
fn replay_command(dir: &std::path::Path, key: &str, time_s: Option<f64>) -> String {
    use crate::replay::{shell_quote, window_flags};
    let window = time_s
        .map(|t| format!(" {}", window_flags(t)))
        .unwrap_or_default();
    // The page is named after the key (its first 80 characters, as a file name).
    let file: String = key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(80)
        .collect();
    format!(
        "linkrev replay --results {} --run {}{window} -o {file}.html",
        shell_quote(&dir.display().to_string()),
        shell_quote(key)
    )
}

/// The time of a `first_violation` text (`kind at event N (T s), …`, written by
/// [`crate::results::tables`]; `tests/replay.rs` runs the command this feeds).
fn violation_time(text: &str) -> Option<f64> {
    let start = text.find(" (")? + 2;
    let end = start + text[start..].find(" s)")?;
    text[start..end].parse().ok()
}

/// How many incidents the page lists one by one (the rest are counted).
const MAX_INCIDENTS: usize = 20;

fn u64s(df: &DataFrame, column: &str) -> anyhow::Result<Vec<u64>> {
    let c = df.column(column)?.cast(&DataType::UInt64)?;
    Ok(c.u64()?.iter().map(|v| v.unwrap_or(0)).collect())
}

/// One row of the health table: an algorithm's runs in one experiment.
#[derive(Default)]
struct HealthRow {
    experiment: String,
    algorithm: String,
    planned: u64,
    stored: u64,
    safety_violations: u64,
    runs_with_violations: u64,
    aborted_runs: u64,
    tokens_lost: u64,
    /// Per [`crate::family::EVENT_TABLES`]: events a run's end cut off.
    unfinished: Vec<u64>,
}

impl Health {
    /// Counts the runs of every experiment, per algorithm, and lists the incidents.
    pub fn of(experiments: &[Experiment]) -> anyhow::Result<Health> {
        let mut rows: Vec<HealthRow> = Vec::new();
        let mut incidents = Vec::new();
        for e in experiments {
            let algorithm = column_text(&e.runs, "algorithm")?;
            let keys = column_text(&e.runs, "run_key")?;
            let seeds = column_text(&e.runs, "seed")?;
            let violations = u64s(&e.runs, "safety_violations")?;
            let first = column_text(&e.runs, "first_violation")?;
            let aborted = column_text(&e.runs, "aborted")?;
            let tokens = u64s(&e.runs, "tokens_lost")?;
            let unfinished: Vec<Vec<u64>> = crate::family::EVENT_TABLES
                .iter()
                .map(|t| u64s(&e.runs, t.unfinished_count().1))
                .collect::<anyhow::Result<_>>()?;
            for a in &e.plan.algorithms {
                let name = a.name();
                let mut row = HealthRow {
                    experiment: e.name.clone(),
                    algorithm: name.to_string(),
                    planned: match &e.sequential {
                        // Under a precision target, the runs its points need now.
                        Some(d) => d
                            .wanted
                            .iter()
                            .filter(|&&i| e.plan.runs.get(i).algorithm == *a)
                            .count() as u64,
                        None => e.plan.runs.iter().filter(|r| r.algorithm == *a).count() as u64,
                    },
                    unfinished: vec![0; unfinished.len()],
                    ..HealthRow::default()
                };
                for i in 0..e.runs.height() {
                    if algorithm[i].as_deref() != Some(name) {
                        continue;
                    }
                    row.stored += 1;
                    row.safety_violations += violations[i];
                    row.runs_with_violations += u64::from(violations[i] > 0);
                    row.aborted_runs += u64::from(aborted[i].is_some());
                    row.tokens_lost += tokens[i];
                    for (sum, counts) in row.unfinished.iter_mut().zip(&unfinished) {
                        *sum += counts[i];
                    }
                    let mut what = Vec::new();
                    if let Some(v) = &first[i] {
                        let n = violations[i];
                        let noun = if n == 1 { "violation" } else { "violations" };
                        what.push(format!("{n} safety {noun}, first: {v}"));
                    }
                    if let Some(a) = &aborted[i] {
                        what.push(format!("aborted: {a}"));
                    }
                    if tokens[i] > 0 {
                        what.push(format!("{} tokens lost", tokens[i]));
                    }
                    if !what.is_empty() {
                        let key = keys[i].clone().unwrap_or_default();
                        let replay = first[i]
                            .as_deref()
                            .map(|v| replay_command(&e.dir, &key, violation_time(v)));
                        incidents.push(Incident {
                            experiment: e.name.clone(),
                            key,
                            what: format!(
                                "seed {}: {}",
                                seeds[i].as_deref().unwrap_or("?"),
                                what.join("; ")
                            ),
                            replay,
                        });
                    }
                }
                rows.push(row);
            }
        }
        let text = |name: &str, f: &dyn Fn(&HealthRow) -> String| {
            Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
        };
        let count = |name: &str, f: &dyn Fn(&HealthRow) -> u64| {
            Column::new(name.into(), rows.iter().map(f).collect::<Vec<_>>())
        };
        let mut columns = vec![
            text("experiment", &|r| r.experiment.clone()),
            text("algorithm", &|r| r.algorithm.clone()),
            count("planned", &|r| r.planned),
            count("stored", &|r| r.stored),
            count("safety_violations", &|r| r.safety_violations),
            count("runs_with_violations", &|r| r.runs_with_violations),
            count("aborted_runs", &|r| r.aborted_runs),
            count("tokens_lost", &|r| r.tokens_lost),
        ];
        for (k, t) in crate::family::EVENT_TABLES.iter().enumerate() {
            columns.push(count(t.unfinished_count().0, &|r| r.unfinished[k]));
        }
        let table = DataFrame::new(rows.len(), columns)?;
        let sum = |f: &dyn Fn(&HealthRow) -> u64| rows.iter().map(f).sum::<u64>();
        Ok(Health {
            table,
            safety_violations: sum(&|r| r.safety_violations),
            aborted_runs: sum(&|r| r.aborted_runs),
            tokens_lost: sum(&|r| r.tokens_lost),
            runs: sum(&|r| r.stored),
            planned: sum(&|r| r.planned),
            incidents,
        })
    }
}

pub struct PageInput<'a> {
    pub experiments: &'a [Experiment],
    pub figures: &'a [(usize, Figure)],
    /// Rendered SVG of each panel of each figure.
    pub svgs: &'a [Vec<String>],
    /// (name, text) of the figure spec, when one was given.
    pub figure_text: Option<&'a (String, String)>,
    pub health: &'a Health,
    /// [`precision_table`], for sweeps with a precision target.
    pub precision: Option<&'a DataFrame>,
}

/// One row per point of every experiment with a precision target: its replications,
/// whether it met the target, and its least precise interval. `None` when no
/// experiment has a target.
pub fn precision_table(experiments: &[Experiment]) -> anyhow::Result<Option<DataFrame>> {
    let mut columns: [Vec<String>; 6] = Default::default();
    let mut n: Vec<u32> = Vec::new();
    let (mut mean, mut half_width, mut allowed) = (Vec::new(), Vec::new(), Vec::new());
    let mut any = false;
    for e in experiments {
        let Some(d) = &e.sequential else { continue };
        any = true;
        for p in &d.points {
            let status = p.status_words();
            let (m, h, a, target, metric, algorithm) = match &p.worst {
                Some(w) => (
                    Some(w.estimate).filter(|x| x.is_finite()),
                    Some(w.half_width).filter(|x| x.is_finite()),
                    Some(w.target.allowed(w.estimate)).filter(|x| x.is_finite()),
                    w.target.words(),
                    w.metric.clone(),
                    w.algorithm.clone(),
                ),
                None => Default::default(),
            };
            let row = [
                e.name.clone(),
                p.label.clone(),
                status,
                metric,
                algorithm,
                target,
            ];
            for (c, v) in columns.iter_mut().zip(row) {
                c.push(v);
            }
            n.push(p.n);
            mean.push(m);
            half_width.push(h);
            allowed.push(a);
        }
    }
    if !any {
        return Ok(None);
    }
    // Each row's interval furthest from its target: its mean and half-width, the
    // target as the spec gives it, and the widest half-width it allows at that mean.
    let [experiment, point, status, metric, algorithm, target] = columns;
    Ok(Some(DataFrame::new(
        n.len(),
        vec![
            Column::new("experiment".into(), experiment),
            Column::new("point".into(), point),
            Column::new("n".into(), n),
            Column::new("status".into(), status),
            Column::new("widest_metric".into(), metric),
            Column::new("widest_algorithm".into(), algorithm),
            Column::new("mean".into(), mean),
            Column::new("half_width".into(), half_width),
            Column::new("target".into(), target),
            Column::new("allowed_half_width".into(), allowed),
        ],
    )?))
}

const STYLE: &str = "\
body{font-family:'DejaVu Sans',Verdana,sans-serif;max-width:1200px;margin:2em auto;\
padding:0 1em;color:#222;line-height:1.4}\
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;font-size:.85em;margin:.5em 0;max-width:100%}\
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right}td.t{overflow-wrap:anywhere}\
th{overflow-wrap:normal;word-break:keep-all;hyphens:manual}\
th{background:#f3f3f3}td.t,th.t{text-align:left}\
.ok{background:#e8f5e9;border:2px solid #2e7d32;padding:.6em 1em}\
.bad{background:#ffebee;border:2px solid #c62828;padding:.6em 1em}\
.panels{display:flex;flex-wrap:wrap;gap:1em}\
.panel{margin:0 0 1em 0;max-width:100%}.panel.one{width:482px}.panel.two{width:962px}\
.panel svg{width:100%;height:auto;border:1px solid #eee}\
figcaption{font-size:.85em;color:#444}\
pre{background:#f7f7f7;border:1px solid #ddd;padding:.8em;overflow-x:auto;font-size:.8em}\
.files a{margin-right:.6em;font-size:.85em}details{overflow-x:auto}";

/// Formats a table cell: numbers to 4 significant digits, empty for null.
fn cell(v: AnyValue<'_>) -> (String, bool) {
    match v {
        AnyValue::Null => (String::new(), false),
        AnyValue::String(s) => (s.to_string(), true),
        AnyValue::StringOwned(s) => (s.to_string(), true),
        AnyValue::Float64(x) => (significant(x), false),
        AnyValue::Float32(x) => (significant(f64::from(x)), false),
        other => {
            let text = other.to_string();
            let numeric = text.parse::<f64>().is_ok();
            (text.trim_matches('"').to_string(), !numeric)
        }
    }
}

/// Four significant digits, no exponent for everyday magnitudes.
fn significant(x: f64) -> String {
    if !x.is_finite() || x == 0.0 {
        return format!("{x}");
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..7).contains(&mag) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    format!("{x:.decimals$}")
}

/// A DataFrame as an HTML table (text left-aligned, numbers right-aligned).
fn table_html(df: &DataFrame, out: &mut String) {
    out.push_str("<table><tr>");
    for name in df.get_column_names() {
        // Long column names (`runs_with_violations`) may break after an underscore, so
        // a wide table fits the page instead of scrolling sideways.
        let _ = write!(out, "<th>{}</th>", escape(name).replace('_', "_<wbr>"));
    }
    out.push_str("</tr>\n");
    let columns = df.columns();
    for row in 0..df.height() {
        out.push_str("<tr>");
        for c in columns {
            let (text, is_text) = c.get(row).map(cell).unwrap_or_default();
            let class = if is_text { " class=\"t\"" } else { "" };
            let _ = write!(out, "<td{class}>{}</td>", escape(&text));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
}

/// The whole page.
pub fn page(input: &PageInput<'_>) -> anyhow::Result<String> {
    let names: Vec<&str> = input.experiments.iter().map(|e| e.name.as_str()).collect();
    let title = format!("linkrev report: {}", names.join(", "));
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        escape(&title),
        escape(&title)
    );
    let mut versions: Vec<String> = Vec::new();
    for e in input.experiments {
        for v in column_text(&e.runs, "tool_version")?.into_iter().flatten() {
            if !versions.contains(&v) {
                versions.push(v);
            }
        }
    }
    let h = input.health;
    let _ = writeln!(
        out,
        "<p>Report written by {}; results simulated by {}. {} of {} planned runs stored.</p>",
        escape(&tool_version()),
        escape(&versions.join(", ")),
        h.runs,
        h.planned
    );

    // Safety first.
    let clean = h.safety_violations == 0 && h.aborted_runs == 0 && h.tokens_lost == 0;
    let _ = write!(
        out,
        "<div id=\"safety\" class=\"{}\"><strong>Safety: {} safety violations, {} runs \
         stopped by the message-storm guard, {} tokens lost</strong> in {} runs.",
        if clean { "ok" } else { "bad" },
        h.safety_violations,
        h.aborted_runs,
        h.tokens_lost,
        h.runs
    );
    // Algorithms with known flaws say so next to their incidents (registry caveats).
    let flagged: Vec<Algorithm> = Algorithm::all()
        .filter(|a| {
            let part = format!("/algo={}/", a.name());
            a.caveat().is_some() && h.incidents.iter().any(|i| i.key.contains(&part))
        })
        .collect();
    if !flagged.is_empty() {
        out.push_str("<br>Runs are shown as they happened, never filtered.");
        for a in flagged {
            let caveat = a.caveat().unwrap_or_default();
            let _ = write!(out, " <code>{}</code> {}", escape(a.name()), escape(caveat));
        }
    }
    if !h.incidents.is_empty() {
        out.push_str(
            "<details><summary>Runs to examine</summary>Each run is named by its key; \
             <code>linkrev run --results DIR --run KEY</code> reproduces it alone, and \
             the command shown under a run with a violation writes a page that animates \
             the seconds around it (<code>linkrev replay</code>).<ul>\n",
        );
        for incident in h.incidents.iter().take(MAX_INCIDENTS) {
            let _ = write!(
                out,
                "<li><code>{}</code> ({}): {}",
                escape(&incident.key),
                escape(&incident.experiment),
                escape(&incident.what)
            );
            if let Some(command) = &incident.replay {
                let _ = write!(
                    out,
                    "<br>replay: <code class=\"replay\">{}</code>",
                    escape(command)
                );
            }
            out.push_str("</li>\n");
        }
        if h.incidents.len() > MAX_INCIDENTS {
            let _ = writeln!(
                out,
                "<li>… and {} more</li>",
                h.incidents.len() - MAX_INCIDENTS
            );
        }
        out.push_str("</ul></details>");
    }
    out.push_str("</div>\n<h2 id=\"runs\">Runs</h2>\n");
    table_html(&h.table, &mut out);
    let notes: Vec<String> = crate::family::EVENT_TABLES
        .iter()
        .map(|t| {
            let (column, _, meaning) = t.unfinished_count();
            format!("{column}: {meaning}")
        })
        .collect();
    let _ = writeln!(out, "<p>{}.</p>", notes.join("; "));
    if let Some(table) = input.precision {
        out.push_str(
            "<h2 id=\"precision\">Precision</h2>\n<p>Replications were added to each \
             point a batch at a time until every targeted interval met the target (Law &amp; \
             Kelton's sequential procedure; a relative target γ is met when the half-width \
             is at most γ/(1+γ) of the mean), or until the most allowed. Under the guarded \
             rule (the default) a point is met only with at least the runs each metric \
             needs, at two looks in a row, and with no run holding the spread. Points \
             marked <em>stopped at max, short</em> did not meet it: their intervals are \
             wider than the target; <em>held back</em> ones were narrow enough, and the \
             reason given is why that did not count.</p>\n",
        );
        table_html(table, &mut out);
    }

    out.push_str("<h2 id=\"figures\">Figures</h2>\n");
    if input.figures.is_empty() {
        out.push_str("<p>No figures: no numeric sweep axis to plot against.</p>\n");
    }
    for ((experiment, figure), svgs) in input.figures.iter().zip(input.svgs) {
        let e = &input.experiments[*experiment];
        let _ = write!(
            out,
            "<section id=\"fig-{}\">\n<h3>{}</h3>\n<div class=\"panels\">\n",
            escape(&figure.spec.name),
            escape(&figure.spec.name)
        );
        for (panel, svg) in figure.panels.iter().zip(svgs) {
            let stem = escape(&panel.stem);
            let _ = write!(
                out,
                "<figure class=\"panel {}\">\n{svg}\n<figcaption>{} Experiment <code>{}</code>. \
                 <span class=\"files\">\
                 <a href=\"figures/{stem}.svg\">SVG</a><a href=\"figures/{stem}.png\">PNG</a>\
                 <a href=\"figures/{stem}.csv\">plotted CSV</a>\
                 <a href=\"figures/{stem}.tex\">pgfplots</a>\
                 <a href=\"figures/{stem}.caption.txt\">caption</a>\
                 <a href=\"data/{stem}.csv\">table CSV</a></span></figcaption>\n\
                 <details><summary>Table</summary>\n",
                match panel.chart.size {
                    crate::plot::FigureSize::OneColumn => "one",
                    crate::plot::FigureSize::TwoColumn => "two",
                },
                escape(&panel.note),
                escape(&e.name)
            );
            table_html(&panel.table, &mut out);
            out.push_str("</details>\n</figure>\n");
        }
        out.push_str("</div>\n</section>\n");
    }

    out.push_str("<h2 id=\"specs\">Specs</h2>\n");
    for e in input.experiments {
        let _ = write!(
            out,
            "<h3>Experiment <code>{}</code> ({})</h3>\n<pre>{}</pre>\n",
            escape(&e.name),
            escape(&e.dir.display().to_string()),
            escape(&e.spec_text)
        );
    }
    match input.figure_text {
        Some((name, text)) => {
            let _ = write!(
                out,
                "<h3>Figures ({})</h3>\n<pre>{}</pre>\n",
                escape(name),
                escape(text)
            );
        }
        None => out.push_str(
            "<p>Figures: linkrev's defaults (every main metric against every numeric sweep \
             axis); give <code>--figures FILE</code> to choose.</p>\n",
        ),
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}
