//! The command line itself: help, version, usage errors.

use crate::support::{TempProject, stable};

#[test]
fn help_names_every_command_and_shows_examples() {
    let project = TempProject::new();
    let run = project.host(&["--help"]);
    run.expect_code(0);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn run_help_explains_script_arguments() {
    let project = TempProject::new();
    let run = project.host(&["run", "--help"]);
    run.expect_code(0);
    insta::assert_snapshot!(run.stdout);
}

#[test]
fn version_is_the_crate_version() {
    let project = TempProject::new();
    let run = project.host(&["--version"]);
    run.expect_code(0);
    assert_eq!(run.stdout.trim(), format!("host {}", env!("CARGO_PKG_VERSION")));
}

#[test]
fn an_unknown_flag_is_a_usage_error() {
    let project = TempProject::new();
    project.write("scripts/ok.rhai", "let x = 1;\n");
    let run = project.host(&["run", "scripts/ok.rhai", "--bogus"]);
    run.expect_code(2);
    insta::assert_snapshot!(stable(&run.stderr, project.path()));
    assert!(!project.path().join("runs").exists(), "a usage error must not create a run");
}

#[test]
fn a_missing_script_is_an_input_error_naming_it() {
    let project = TempProject::new();
    let run = project.host(&["run", "scripts/nope.rhai"]);
    run.expect_code(2);
    insta::assert_snapshot!(stable(&run.stderr, project.path()));
}
