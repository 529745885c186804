//! Experiment specs: every class of bad input is refused before any run, naming the file,
//! the key path and the problem; expansion gives the documented run count, unique and
//! stable keys, and seeds shared across algorithms (common random numbers) but not across
//! replications; the shipped specs load; `linkrev sweep --dry-run` prints the plan.

use linkrev::registry::Algorithm;
use linkrev::sim::seeds::{self, Purpose};
use linkrev::sweep::plan::{MobilitySource, ParamValue, Plan};
use linkrev::sweep::specs;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const ME: &str = r#"
name = "t"
master_seed = 7
replications = 3
algorithms = ["me-rl", "me-raymond"]

[mobility]
nodes = 10
area = "500x500"
speed_min = 1.0
speed_max = [5.0, 10.0]
pause = 5.0
duration = 60.0

[workload]
rate = [0.01, 0.02, 0.05]
cs_time = 0.1
"#;

/// Writes `text` as `spec.toml` in a fresh directory (kept alive by the returned guard).
fn write_spec(text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spec.toml");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

fn plan(text: &str) -> Plan {
    let (_dir, path) = write_spec(text);
    specs::plan_from_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The error message for `text`, checked to start with the file and name `key_path`.
fn error(text: &str, key_path: &str) -> String {
    let (_dir, path) = write_spec(text);
    let err = specs::plan_from_file(&path).expect_err("the spec must be refused");
    let message = err.to_string();
    // `file:line: key.path: …`, or `file: key.path: …` for a key that is missing.
    let file = path.display().to_string();
    let rest = message
        .strip_prefix(&file)
        .unwrap_or_else(|| panic!("expected `{file}…`, got `{message}`"));
    let rest = match rest.strip_prefix(':') {
        Some(r) if r.starts_with(|c: char| c.is_ascii_digit()) => {
            r.trim_start_matches(|c: char| c.is_ascii_digit())
        }
        _ => rest,
    };
    assert!(
        rest.starts_with(&format!(": {key_path}: ")),
        "expected `{file}[:line]: {key_path}: …`, got `{message}`"
    );
    message
}

/// The line (from 1) of the first line of `text` that starts with `start`.
fn line_of(text: &str, start: &str) -> usize {
    1 + text
        .lines()
        .position(|l| l.trim_start().starts_with(start))
        .unwrap_or_else(|| panic!("no line starting with {start}"))
}

#[test]
fn spec_errors_give_the_line_of_the_value() {
    for (text, key_path, line) in [
        (
            ME.replace("pause = 5.0", "pause = \"long\""),
            "mobility.pause",
            "pause",
        ),
        (
            ME.replace("nodes = 10", "nodes = [10, 0]"),
            "mobility.nodes[1]",
            "nodes",
        ),
        // Found by the cross-key checks after parsing, still located.
        (
            ME.replace("speed_min = 1.0", "speed_min = [1.0, 7.0]"),
            "mobility.speed_max[0]",
            "speed_max",
        ),
        (
            ME.replace("master_seed = 7", "master_seed = -7"),
            "master_seed",
            "master_seed",
        ),
    ] {
        let (_dir, path) = write_spec(&text);
        let message = specs::plan_from_file(&path).unwrap_err().to_string();
        let expected = format!("{}:{}: {key_path}: ", path.display(), line_of(&text, line));
        assert!(
            message.starts_with(&expected),
            "expected `{expected}…`, got `{message}`"
        );
    }
}

fn contains(message: &str, what: &str) {
    assert!(message.contains(what), "`{message}` should say `{what}`");
}

#[test]
fn unknown_key_is_named_with_a_suggestion() {
    let m = error(
        &ME.replace("speed_max =", "sped_max ="),
        "mobility.sped_max",
    );
    contains(&m, "unknown key; did you mean `speed_max`?");
    let m = error(&ME.replace("[workload]", "[wrkload]"), "wrkload");
    contains(&m, "did you mean `workload`?");
    let m = error(&format!("{ME}\ncolour = \"blue\""), "workload.colour");
    contains(&m, "unknown key");
}

#[test]
fn a_key_in_the_wrong_table_says_where_it_belongs() {
    let m = error(
        &ME.replace(
            "[workload]",
            "[network]\nrouting = \"discovery\"\n\n[workload]",
        ),
        "network.routing",
    );
    contains(
        &m,
        "unknown key: `routing` is a parameter of me-raymond: put it under [params.me-raymond]",
    );
    let m = error(
        &ME.replace("duration = 60.0", "duration = 60.0\nrate = 0.1"),
        "mobility.rate",
    );
    contains(&m, "`rate` is a key of [workload]: put it there");
    let m = error(
        &ME.replace("cs_time = 0.1", "cs_time = 0.1\nrange = 100.0"),
        "workload.range",
    );
    contains(&m, "`range` is a key of [network]: put it there");
    let m = error(
        &ME.replace("cs_time = 0.1", "cs_time = 0.1\nreplications = 5"),
        "workload.replications",
    );
    contains(&m, "`replications` is a top-level key");
}

#[test]
fn wrong_type_is_named() {
    let m = error(
        &ME.replace("nodes = 10", "nodes = \"ten\""),
        "mobility.nodes",
    );
    contains(
        &m,
        "wrong type: expected a positive integer, got a string \"ten\"",
    );
    let m = error(
        &ME.replace("rate = [0.01, 0.02, 0.05]", "rate = [0.01, \"fast\"]"),
        "workload.rate[1]",
    );
    contains(&m, "wrong type");
    let m = error(&ME.replace("nodes = 10", "nodes = 10.5"), "mobility.nodes");
    contains(&m, "got a float 10.5");
    let m = error(
        &ME.replace("replications = 3", "replications = [3]"),
        "replications",
    );
    contains(&m, "expected an integer, got a list");
}

#[test]
fn empty_list_is_refused() {
    let m = error(
        &ME.replace("speed_max = [5.0, 10.0]", "speed_max = []"),
        "mobility.speed_max",
    );
    contains(&m, "empty list");
    let m = error(
        &ME.replace(r#"algorithms = ["me-rl", "me-raymond"]"#, "algorithms = []"),
        "algorithms",
    );
    contains(&m, "empty list");
}

#[test]
fn duplicate_values_in_a_list_are_refused() {
    let m = error(
        &ME.replace("rate = [0.01, 0.02, 0.05]", "rate = [0.01, 0.02, 0.01]"),
        "workload.rate[2]",
    );
    contains(&m, "duplicate value 0.01");
    // Equal after canonicalisation: 5 and 5.0 are one speed.
    let m = error(
        &ME.replace("speed_max = [5.0, 10.0]", "speed_max = [5, 5.0]"),
        "mobility.speed_max[1]",
    );
    contains(&m, "duplicate");
}

#[test]
fn vmin_above_vmax_is_refused_for_the_offending_combination() {
    let text = ME
        .replace("speed_min = 1.0", "speed_min = 6.0")
        .replace("speed_max = [5.0, 10.0]", "speed_max = [10.0, 5.0]");
    let m = error(&text, "mobility.speed_max[1]");
    contains(&m, "speed_min 6 is above speed_max 5");
    contains(&m, "speed_max = 5.0");
    // Equal bounds are a constant speed, which the generator supports.
    plan(&ME.replace("speed_min = 1.0", "speed_min = 5.0"));
}

#[test]
fn stationary_start_needs_a_positive_minimum_speed() {
    let m = error(
        &ME.replace("speed_min = 1.0", "speed_min = 0.0"),
        "mobility.speed_min",
    );
    contains(&m, "stationary start");
    plan(&ME.replace("speed_min = 1.0", "speed_min = 0.0\nstart = \"classic\""));
}

#[test]
fn non_positive_rates_are_refused() {
    let m = error(
        &ME.replace("rate = [0.01, 0.02, 0.05]", "rate = [0.01, -0.5]"),
        "workload.rate[1]",
    );
    contains(&m, "must be a finite number > 0, got -0.5");
    let m = error(
        &ME.replace("rate = [0.01, 0.02, 0.05]", "rate = 0"),
        "workload.rate",
    );
    contains(&m, "> 0");
    let m = error(&ME.replace("pause = 5.0", "pause = -1"), "mobility.pause");
    contains(&m, ">= 0");
}

#[test]
fn unknown_algorithm_is_refused_with_a_suggestion() {
    let m = error(
        &ME.replace(r#"["me-rl", "me-raymond"]"#, r#"["me-rl", "me-raymon"]"#),
        "algorithms[1]",
    );
    contains(
        &m,
        "unknown algorithm `me-raymon`; did you mean `me-raymond`?",
    );
}

#[test]
fn algorithm_parameter_sections_are_checked_against_the_registry() {
    let m = error(&format!("{ME}\n[params.me-raymon]\n"), "params.me-raymon");
    contains(
        &m,
        "unknown algorithm `me-raymon`; did you mean `me-raymond`?",
    );
    let m = error(&format!("{ME}\n[params.le-malpani]\n"), "params.le-malpani");
    contains(&m, "`le-malpani` is not in `algorithms`");
    let m = error(&format!("{ME}\n[params.me-rl]\nk = 2\n"), "params.me-rl.k");
    contains(&m, "unknown key (known: holder)");
    let m = error(
        &format!("{ME}\n[params.me-rl]\nholdr = 2\n"),
        "params.me-rl.holdr",
    );
    contains(&m, "did you mean `holder`?");
    let m = error(
        &format!("{ME}\n[params.me-rl]\nholder = \"two\"\n"),
        "params.me-rl.holder",
    );
    contains(&m, "wrong type");
    let m = error(
        &format!("{ME}\n[params.me-rl]\nholder = [0, -1]\n"),
        "params.me-rl.holder[1]",
    );
    contains(&m, "-1 is out of range");
    let m = error(
        &format!("{ME}\n[params.me-raymond]\nholder = [3, 3]\n"),
        "params.me-raymond.holder[1]",
    );
    contains(&m, "duplicate value 3");
    // Node ids are checked against every value of `nodes`.
    let m = error(
        &format!("{ME}\n[params.me-rl]\nholder = [2, 10]\n"),
        "params.me-rl.holder[1]",
    );
    contains(
        &m,
        "node 10 does not exist with nodes = 10: node ids run from 0 to 9",
    );
    let m = error(
        &format!(
            "{}\n[params.le-malpani]\nk = 1\n",
            ME.replace(r#"["me-rl", "me-raymond"]"#, r#"["me-rl", "le-malpani"]"#)
        ),
        "params.le-malpani.k",
    );
    contains(&m, "unknown parameter: le-malpani takes no parameters");
    let m = error(&format!("params = 3\n{ME}"), "params");
    contains(&m, "wrong type");
    let m = error(&format!("{ME}\n[params]\nme-rl = 3\n"), "params.me-rl");
    contains(&m, "wrong type");
    // An empty section for an algorithm without parameters is harmless.
    let runs = |p: Plan| p.runs.iter().collect::<Vec<_>>();
    assert_eq!(
        runs(plan(&format!("{ME}\n[params.me-rl]\n"))),
        runs(plan(ME))
    );
}

/// `[params.me-rl] holder = [0, 3]`: an axis of me-rl's runs only, in their keys and
/// the tables, but not in any seed (common random numbers across algorithms and values).
#[test]
fn an_algorithm_parameter_list_is_an_axis_of_that_algorithm_only() {
    let p = plan(&format!("{ME}\n[params.me-rl]\nholder = [0, 3]\n"));
    let base = plan(ME);
    let rl = |p: &Plan| {
        p.runs
            .iter()
            .filter(|r| r.algorithm == algo("me-rl"))
            .count()
    };
    let raymond = |p: &Plan| {
        p.runs
            .iter()
            .filter(|r| r.algorithm == algo("me-raymond"))
            .count()
    };
    assert_eq!(rl(&p), 2 * rl(&base));
    assert_eq!(raymond(&p), raymond(&base));
    assert!(p.axes.iter().any(|(n, v)| n == "holder" && v.len() == 2));
    for r in p.runs.iter() {
        let holder = r
            .params
            .iter()
            .find(|(n, _)| n == "holder")
            .map(|(_, v)| v.clone());
        if r.algorithm == algo("me-rl") {
            let h = holder.expect("me-rl runs carry holder");
            assert!(r.key.contains(&format!("/holder={h}/")), "{}", r.key);
            assert_eq!(r.algo_params.int("holder").to_string(), h.to_string());
            // Same seed as the Raymond run of the point: the parameter is not in it.
            let twin = p
                .runs
                .iter()
                .find(|q| q.algorithm == algo("me-raymond") && q.seed_text == r.seed_text)
                .expect("a raymond run of the same point");
            assert_eq!(twin.seed, r.seed);
        } else {
            // Raymond's own (default) holder, fixed: stored, not in the key.
            assert_eq!(holder, Some(ParamValue::Int(0)));
            assert!(!r.key.contains("holder"), "{}", r.key);
        }
    }
    // Adding the axis keeps the keys and seeds of the runs at its first value.
    let old: HashMap<String, u64> = base.runs.iter().map(|r| (r.key, r.seed)).collect();
    for r in p.runs.iter().filter(|r| r.algorithm == algo("me-raymond")) {
        assert_eq!(old.get(r.key.as_str()), Some(&r.seed), "{}", r.key);
    }
}

#[test]
fn every_run_carries_its_algorithms_parameters() {
    let p = plan(ME);
    for r in p.runs.iter() {
        let declared: Vec<&str> = r.algorithm.params().iter().map(|d| d.name).collect();
        let carried: Vec<&str> = r.algo_params.iter().map(|(n, _)| n).collect();
        assert_eq!(carried, declared, "{}", r.key);
        for (name, value) in r.algo_params.iter() {
            assert!(
                r.params.contains(&(name.to_string(), value.clone())),
                "{}",
                r.key
            );
        }
    }
}

#[test]
fn bad_delay_and_choice_strings_are_refused() {
    let m = error(
        &format!("{ME}\n[network]\ndelay = \"uniform:5ms\"\n"),
        "network.delay",
    );
    contains(&m, "expected const:D, uniform:MIN:MAX or exp:MIN:MEAN");
    let m = error(
        &format!("{ME}\n[network]\ndelay = [\"uniform:1ms:5ms\", \"uniform:9ms:5ms\"]\n"),
        "network.delay[1]",
    );
    contains(&m, "min <= max");
    let m = error(
        &format!("{ME}\n[network]\nchanges = \"serialise\"\n"),
        "network.changes",
    );
    contains(&m, "did you mean `serialize`?");
    let m = error(&ME.replace("\"500x500\"", "\"500\""), "mobility.area");
    contains(&m, "WIDTHxHEIGHT");
}

#[test]
fn missing_required_keys_are_named() {
    let m = error(&ME.replace("name = \"t\"", ""), "name");
    contains(&m, "missing required key");
    let m = error(&ME.replace("master_seed = 7", ""), "master_seed");
    contains(&m, "missing required key");
    let cut = &ME[..ME.find("[workload]").unwrap()];
    let m = error(cut, "workload");
    contains(&m, "missing required section");
    let m = error(
        &ME.replace("rate = [0.01, 0.02, 0.05]", ""),
        "workload.rate",
    );
    contains(&m, "missing required key");
    // A workload nobody uses is a mistake, not silently ignored.
    let m = error(
        &ME.replace(r#"["me-rl", "me-raymond"]"#, r#"["le-malpani"]"#),
        "workload",
    );
    contains(&m, "no algorithm");
}

#[test]
fn bad_experiment_name_is_refused() {
    let m = error(&ME.replace("name = \"t\"", "name = \"my exp/1\""), "name");
    contains(&m, "not a valid experiment name");
}

#[test]
fn missing_traces_and_mixed_mobility_are_refused() {
    let text = |mobility: &str| {
        format!(
            "name = \"t\"\nmaster_seed = 1\nreplications = 1\nalgorithms = \"le-malpani\"\n\
             [mobility]\n{mobility}\n"
        )
    };
    let m = error(&text("traces = [\"nope.tcl\"]"), "mobility.traces[0]");
    contains(&m, "does not exist");
    contains(&m, "nope.tcl");
    let m = error(
        &text("traces = [\"nope.tcl\"]\nnodes = 5"),
        "mobility.nodes",
    );
    contains(&m, "not both");
}

#[test]
fn toml_syntax_errors_give_the_line() {
    let (_dir, path) = write_spec("name = \"t\"\nmaster_seed = = 1\n");
    let m = specs::load(&path).unwrap_err().to_string();
    assert!(
        m.starts_with(&format!("{}:2: not valid TOML", path.display())),
        "{m}"
    );
}

#[test]
fn run_count_is_the_product_times_replications_times_algorithms() {
    let p = plan(ME);
    assert_eq!(p.runs.len(), 2 * 3 * 3 * 2);
    let names: Vec<&str> = p.axes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["rate", "speed_max"]);
    assert_eq!(p.algorithms, [algo("me-rl"), algo("me-raymond")]);
    for (i, r) in p.runs.iter().enumerate() {
        assert_eq!(r.index, i);
    }
}

#[test]
fn keys_are_unique_and_the_plan_is_stable() {
    let (_dir, path) = write_spec(ME);
    let p = specs::plan_from_file(&path).unwrap();
    let keys: HashSet<String> = p.runs.iter().map(|r| r.key).collect();
    assert_eq!(keys.len(), p.runs.len());
    assert!(
        p == specs::plan_from_file(&path).unwrap(),
        "same spec, same plan"
    );
    assert_eq!(
        p.runs.get(0).key,
        "t/algo=me-rl/rate=0.01/speed_max=5.0/rep=0"
    );
    // Params hold every parameter, sorted by name; the key only the axes.
    let first = p.runs.get(0);
    let names: Vec<&str> = first.params.iter().map(|(n, _)| n.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(names.contains(&"pause") && names.contains(&"delay"));
}

#[test]
fn seeds_are_shared_across_algorithms_and_differ_across_replications() {
    let p = plan(ME);
    let mut by_point: HashMap<(String, u32), HashSet<u64>> = HashMap::new();
    for r in p.runs.iter() {
        // The point without the algorithm's own parameters, which the seed ignores.
        let own = |name: &str| r.algorithm.params().iter().any(|d| d.name == name);
        let shared: Vec<_> = r.params.iter().filter(|(n, _)| !own(n)).collect();
        let point = format!("{shared:?}");
        by_point
            .entry((point, r.replication))
            .or_default()
            .insert(r.seed);
        assert_eq!(r.config.seed, r.seed);
        match &r.mobility {
            MobilitySource::Rwp(rwp) => {
                assert_eq!(rwp.seed, seeds::derive(r.seed, Purpose::Mobility));
                assert_eq!(rwp.nodes, 10);
            }
            other => panic!("expected RWP, got {other:?}"),
        }
    }
    assert!(
        by_point.values().all(|s| s.len() == 1),
        "one seed per point and replication"
    );
    let distinct: HashSet<u64> = by_point.values().flat_map(|s| s.iter().copied()).collect();
    assert_eq!(
        distinct.len(),
        by_point.len(),
        "points and replications differ in seed"
    );
}

#[test]
fn adding_an_axis_value_keeps_existing_keys_and_seeds() {
    let seeds_of = |p: &Plan| -> HashMap<String, u64> {
        p.runs.iter().map(|r| (r.key.clone(), r.seed)).collect()
    };
    let small = seeds_of(&plan(&ME.replace("[0.01, 0.02, 0.05]", "[0.01, 0.05]")));
    let big = seeds_of(&plan(ME));
    for (key, seed) in &small {
        assert_eq!(big.get(key), Some(seed), "{key}");
    }
    // A fixed value turned into a list holding it keeps its runs' seeds (keys gain it).
    let fixed = plan(&ME.replace("[0.01, 0.02, 0.05]", "0.02"));
    let listed = plan(&ME.replace("[0.01, 0.02, 0.05]", "[0.02, 0.05]"));
    let listed: HashMap<String, u64> = seeds_of(&listed);
    for r in fixed.runs.iter() {
        let key = r.key.replace("/speed_max", "/rate=0.02/speed_max");
        assert_eq!(listed.get(&key), Some(&r.seed), "{key}");
    }
    // Changing a fixed value changes the seeds.
    let other = seeds_of(&plan(&ME.replace("pause = 5.0", "pause = 6.0")));
    assert!(big.iter().all(|(k, s)| other[k] != *s));
}

#[test]
fn leader_election_runs_are_not_repeated_along_workload_axes() {
    let p = plan(&ME.replace(r#"["me-rl", "me-raymond"]"#, r#"["me-rl", "le-malpani"]"#));
    let le: Vec<_> = p
        .runs
        .iter()
        .filter(|r| r.algorithm == algo("le-malpani"))
        .collect();
    assert_eq!(le.len(), 2 * 3);
    assert_eq!(p.runs.len(), 2 * 3 * 3 + 2 * 3);
    assert!(
        le.iter()
            .all(|r| r.config.workload.is_none() && !r.key.contains("rate="))
    );
}

#[test]
fn trace_specs_resolve_paths_relative_to_the_spec() {
    let (dir, path) = write_spec(
        "name = \"tr\"\nmaster_seed = 1\nreplications = 2\nalgorithms = [\"le-malpani\"]\n\
         [mobility]\ntraces = [\"traces/a.tcl\", \"traces/b.tcl\"]\n",
    );
    std::fs::create_dir(dir.path().join("traces")).unwrap();
    for f in ["a.tcl", "b.tcl"] {
        std::fs::write(dir.path().join("traces").join(f), "").unwrap();
    }
    let p = specs::plan_from_file(&path).unwrap();
    assert_eq!(p.runs.len(), 4);
    assert_eq!(
        p.runs.get(0).key,
        "tr/algo=le-malpani/trace=traces%2Fa.tcl/rep=0"
    );
    assert_eq!(
        p.runs.get(0).mobility,
        MobilitySource::Trace {
            path: dir.path().join("traces/a.tcl"),
            activity: None
        }
    );
    assert_eq!(p.runs.get(0).duration, None);
    assert_eq!(
        p.axes[0].1,
        [
            ParamValue::Text("traces/a.tcl".into()),
            ParamValue::Text("traces/b.tcl".into())
        ]
    );
}

/// A node id above a trace's node count is refused before any run, naming the trace.
#[test]
fn node_ids_are_checked_against_every_trace() {
    let trace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces/setdest_v1_n20_p10_M10_t200_800x400.tcl");
    let text = |holder: &str| {
        format!(
            "name = \"tr\"\nmaster_seed = 1\nreplications = 1\nalgorithms = [\"me-rl\"]\n\
             [mobility]\ntraces = [\"{}\"]\n[workload]\nrate = 0.1\n\
             [params.me-rl]\nholder = {holder}\n",
            trace.display()
        )
    };
    let m = error(&text("[19, 20]"), "params.me-rl.holder[1]");
    contains(&m, "node 20 does not exist with trace");
    contains(&m, "(20 nodes): node ids run from 0 to 19");
    assert_eq!(plan(&text("19")).runs.get(0).algo_params.int("holder"), 19);
}

fn analysis_specs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("analysis");
    let mut specs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        // Figure specs sit beside the experiment specs (tested in tests/report.rs).
        .filter(|p| !p.to_string_lossy().ends_with(".figures.toml"))
        .collect();
    specs.sort();
    specs
}

#[test]
fn shipped_specs_load() {
    let specs = analysis_specs();
    assert!(specs.len() >= 2);
    for path in specs {
        let p = specs::plan_from_file(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            !p.runs.is_empty() && !p.axes.is_empty(),
            "{}",
            path.display()
        );
    }
}

#[test]
fn dry_run_prints_the_plan_and_bad_values_are_refused() {
    let (_dir, path) = write_spec(ME);
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["sweep", path.to_str().unwrap(), "--dry-run"])
        .current_dir(path.parent().unwrap())
        .output()
        .unwrap();
    assert!(
        !path.parent().unwrap().join("results").exists(),
        "a dry run writes nothing"
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.contains("runs          36\n"), "{stdout}");
    assert!(stdout.contains("rate = [0.01, 0.02, 0.05]"), "{stdout}");
    assert!(stdout.contains("node-seconds"), "{stdout}");

    let (_dir, bad) = write_spec(&ME.replace("rate = [0.01, 0.02, 0.05]", "rate = [0.01, -1]"));
    let out = Command::new(env!("CARGO_BIN_EXE_linkrev"))
        .args(["sweep", bad.to_str().unwrap(), "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:16: workload.rate[1]:", bad.display())),
        "{stderr}"
    );
}

fn algo(name: &str) -> Algorithm {
    Algorithm::parse(name).expect("registered")
}
