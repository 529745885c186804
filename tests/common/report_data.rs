//! Checks on a report's `data/*.csv` tables shared by the report tests.

use std::path::Path;

/// Asserts that every interval in the summary tables of a report's `data/` directory is
/// named (`interval`) and inside its metric's support: every interval whose table is
/// not a paired difference (those may have either sign) starts at zero or above, as the
/// metrics the shipped figures plot are all non-negative, and none of a fraction ends
/// above 1 (`ci_high` of a `wilson` or `clopper-pearson` interval). Returns the number
/// of intervals checked.
pub fn intervals_in_support(data: &Path) -> usize {
    let mut intervals = 0;
    for entry in std::fs::read_dir(data).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
        let column = |name: &str| header.iter().position(|c| *c == name);
        let (Some(low), Some(high), Some(method)) =
            (column("ci_low"), column("ci_high"), column("interval"))
        else {
            continue;
        };
        let paired = header.contains(&"mean_a");
        for line in lines {
            // Variant names hold no commas, so a plain split finds the columns.
            let cells: Vec<&str> = line.split(',').collect();
            let name = cells[method];
            assert!(!name.is_empty(), "{}: unnamed interval", path.display());
            if let (Ok(lo), Ok(hi)) = (cells[low].parse::<f64>(), cells[high].parse::<f64>()) {
                intervals += 1;
                assert!(paired || lo >= 0.0, "{}: {line}", path.display());
                let proportion = name == "wilson" || name == "clopper-pearson";
                assert!(!proportion || hi <= 1.0, "{}: {line}", path.display());
            }
        }
    }
    intervals
}
