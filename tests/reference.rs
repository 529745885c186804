//! The reference pages in `docs/src/reference/` are what the code generates now
//! (`linkrev reference --out docs/src/reference` writes them): a changed flag, metric
//! or algorithm parameter fails here until the pages are regenerated.

use std::path::Path;

#[test]
fn the_reference_pages_match_the_code() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/reference");
    let pages = linkrev::cli::reference::pages();
    assert_eq!(pages.len(), 5);
    for (name, generated) in pages {
        let path = dir.join(name);
        let stored =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            stored == generated,
            "{} differs from what the code generates: run `cargo run -- reference --out \
             docs/src/reference` and commit the result",
            path.display()
        );
    }
    // Every family's metrics are on the metrics page, with their support.
    let metrics = std::fs::read_to_string(dir.join("metrics.md")).unwrap();
    for family in linkrev::family::ALL {
        for m in family.metrics() {
            assert!(
                metrics.contains(&format!("| `{}` |", m.column)),
                "{}",
                m.column
            );
        }
    }
}

/// Every column of every table a sweep writes is on a reference page: a run's identity,
/// outcome and metrics on the metrics page, a parameter on the spec-keys page. A sweep
/// of all three families, each with one algorithm, writes every table.
#[test]
fn every_stored_column_is_in_the_reference() {
    use polars::prelude::{ParquetReader, SerReader};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/reference");
    let metrics = std::fs::read_to_string(dir.join("metrics.md")).unwrap();
    let spec_keys = std::fs::read_to_string(dir.join("spec-keys.md")).unwrap();
    let algorithms = std::fs::read_to_string(dir.join("algorithms.md")).unwrap();
    let work = tempfile::tempdir().unwrap();
    let spec = work.path().join("columns.toml");
    std::fs::write(
        &spec,
        "name = \"columns\"\nmaster_seed = 3\nreplications = 1\n\
         algorithms = [\"le-malpani\", \"me-rl\", \"gb-full\"]\n\
         [mobility]\nnodes = 6\narea = \"400x400\"\nspeed_max = [5.0, 10.0]\nduration = 20.0\n\
         [workload]\nrate = 0.5\n",
    )
    .unwrap();
    let results = work.path().join("results");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["sweep", spec.to_str().unwrap(), "--results"])
        .arg(&results)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let mut tables = 0;
    for entry in std::fs::read_dir(&results).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "parquet") {
            continue;
        }
        tables += 1;
        let frame = ParquetReader::new(std::fs::File::open(&path).unwrap())
            .finish()
            .unwrap();
        for column in frame.get_column_names() {
            let documented = metrics.contains(&format!("| `{column}` |"))
                || metrics.contains(&format!("| `{column}` — "))
                || spec_keys.contains(&format!(".{column}` |"))
                || (column.as_str() == "trace" && spec_keys.contains("mobility.traces"))
                || algorithms.contains(&format!("`{column}`: "));
            assert!(
                documented,
                "{}: column `{column}` is on no reference page",
                path.display()
            );
        }
    }
    assert!(
        tables >= 4,
        "runs and three per-event tables, found {tables}"
    );
}
