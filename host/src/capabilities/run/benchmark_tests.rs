//! `run::benchmark`, the skeleton every benchmark fills in: a run works on its block of the
//! units and reports; a report of runs already made only reports, over every unit.

use std::sync::Arc;

use ::rhai::{Dynamic, Engine};

use super::{RunInfo, Shard, Sharding, Units, UnitsRecord, rhai::module};

fn engine(sharding: Sharding) -> (Engine, Units) {
    let units = Units::default();
    let info = RunInfo {
        id: "run-1".into(),
        script: "scripts/example.rhai".into(),
        experiment: "example".into(),
        dir: std::env::temp_dir(),
        args: serde_json::json!({}),
        argv: Vec::new(),
        scenario: None,
        git: None,
        sharding,
        units: units.clone(),
    };
    let mut engine = Engine::new();
    engine.register_static_module("run", module(Arc::new(info)).into());
    (engine, units)
}

/// What the script saw: the units `work` got and those `report` got, as `"work:[…] report:[…]"`
/// (`work:none` when the work was skipped).
fn trace(sharding: Sharding) -> (String, Vec<UnitsRecord>) {
    let script = r#"
        let worked = "none";
        let told = run::benchmark(#{
            units: [1, 2, 3, 4, 5],
            work: |mine| { worked = mine; },
            report: |all| `work:${worked} report:${all}`,
        });
        told
    "#;
    let (engine, units) = engine(sharding);
    let told = engine.eval::<String>(script).unwrap_or_else(|error| panic!("{error}"));
    (told, units.records())
}

#[test]
fn a_whole_run_works_on_every_unit_then_reports_them() {
    let (told, records) = trace(Sharding::Whole);
    assert_eq!(told, "work:[1, 2, 3, 4, 5] report:[1, 2, 3, 4, 5]");
    assert_eq!(records.len(), 1, "the units are recorded once, for the manifest");
    assert_eq!((records[0].total, records[0].first, records[0].count), (5, 0, 5));
}

#[test]
fn a_shard_works_on_and_reports_its_own_block() {
    let (told, records) = trace(Sharding::Part(Shard { index: 2, count: 2 }));
    assert_eq!(told, "work:[4, 5] report:[4, 5]");
    assert_eq!((records[0].first, records[0].count), (3, 2));
}

#[test]
fn a_merge_skips_the_work_and_reports_every_unit_of_the_shards() {
    let (_, shard_records) = trace(Sharding::Part(Shard { index: 1, count: 2 }));
    let expected = vec![UnitsRecord { first: 0, count: 5, ..shard_records[0].clone() }];
    let (told, _) = trace(Sharding::Report { expected, part: None });
    assert_eq!(told, "work:none report:[1, 2, 3, 4, 5]");
}

#[test]
fn a_merge_of_shards_that_split_other_units_is_an_error_before_anything_runs() {
    let record = UnitsRecord { total: 5, first: 0, count: 5, sha256: "not these units".into() };
    let (engine, _) = engine(Sharding::Report { expected: vec![record], part: None });
    let script =
        r#"run::benchmark(#{ units: [1, 2, 3, 4, 5], work: |mine| throw "worked", report: |all| throw "reported" })"#;
    let error = engine.eval::<Dynamic>(script).expect_err("the units differ").to_string();
    assert!(error.contains("the units differ from the ones the shards split"), "{error}");
}

#[test]
fn missing_mistyped_or_unknown_parts_are_errors_naming_the_part() {
    let (engine, _) = engine(Sharding::Whole);
    let cases = [
        (r#"#{ units: [1], work: |u| 1 }"#, "`report` is missing"),
        (r#"#{ units: "prompts", work: |u| 1, report: |u| 1 }"#, "`units` must be an array, got string"),
        (r#"#{ units: [1], work: 3, report: |u| 1 }"#, "`work` must be a function, got i64"),
        (r#"#{ units: [1], work: |u| 1, report: |u| 1, phases: [] }"#, "unknown `phases`"),
    ];
    for (parts, wanted) in cases {
        let error = engine.eval::<Dynamic>(&format!("run::benchmark({parts})")).expect_err(parts).to_string();
        assert!(error.contains("invalid parts for `run::benchmark`"), "{parts}: {error}");
        assert!(error.contains(wanted), "{parts}: {error}");
    }
}

#[test]
fn an_error_in_the_work_stops_the_benchmark_before_its_report() {
    let (engine, _) = engine(Sharding::Whole);
    let script = r#"
        let reported = false;
        try { run::benchmark(#{ units: [1], work: |u| throw "the model is down", report: |u| { reported = true; } }); } catch (error) {}
        reported
    "#;
    assert!(!engine.eval::<bool>(script).expect("runs"), "the report did not run");
}
