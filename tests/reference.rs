//! The reference pages in `docs/src/reference/` are what the code generates now
//! (`linkrev reference --out docs/src/reference` writes them): a changed flag, metric
//! or algorithm parameter fails here until the pages are regenerated.

use std::path::Path;

#[test]
fn the_reference_pages_match_the_code() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/src/reference");
    let pages = linkrev::cli::reference::pages();
    assert_eq!(pages.len(), 3);
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
