//! `host test`: Rhai unit tests beside experiment code, run in a throwaway project.

use crate::support::{TempProject, stable};

const MODULE: &str = "\
fn double(x) { x * 2 }

fn half(x) {
    if x % 2 != 0 { throw `cannot halve the odd number ${x}`; }
    x / 2
}
";

const TESTS: &str = "\
import \"lib/math\" as math;

fn test_double_doubles() { assert_eq(math::double(2), 4); }

fn test_a_wrong_expectation_names_both_values() { assert_eq(math::double(2), 5); }

fn test_a_failure_inside_the_module_shows_both_places() { math::half(3); }

fn test_an_assertion_with_a_message() { assert(math::half(4) == 3, \"half of 4 is 3\"); }

fn test_helpers_with_parameters_are_not_tests(x) { throw \"never run\"; }

fn helper() { throw \"never run\"; }

fn test_runs_after_the_failures_before_it() { assert_ne(math::half(8), 3); }
";

fn math_project() -> TempProject {
    let project = TempProject::new();
    project.write("scripts/lib/math.rhai", MODULE).write("scripts/lib/math_test.rhai", TESTS);
    project
}

#[test]
fn each_test_gets_a_line_failures_show_their_place_and_values_and_the_count_closes() {
    let project = math_project();
    let run = project.host(&["test"]);
    run.expect_code(1);
    insta::assert_snapshot!(stable(&run.stdout, project.path()));
    assert!(run.stdout.contains("ok   scripts/lib/math_test.rhai  test_double_doubles\n"), "{}", run.stdout);
    assert!(run.stdout.contains("assert_eq failed: actual 4, expected 5"), "{}", run.stdout);
    assert!(run.stdout.contains("--> scripts/lib/math_test.rhai:5:"), "the failing call's place\n{}", run.stdout);
    assert!(run.stdout.contains("--> scripts/lib/math.rhai:4:"), "the place inside the module\n{}", run.stdout);
    assert!(run.stdout.contains("at scripts/lib/math_test.rhai:7:"), "where the module was called\n{}", run.stdout);
    assert!(run.stdout.ends_with("\n2 passed, 3 failed\n"), "{}", run.stdout);
    assert!(!run.stdout.contains("never run"), "helpers and functions with parameters are not tests");
    assert!(
        run.stderr
            .contains("`test_helpers_with_parameters_are_not_tests` in `scripts/lib/math_test.rhai` takes parameters")
    );
}

#[test]
fn all_tests_passing_exits_0_and_filter_picks_tests_by_name() {
    let project = math_project();
    let run = project.host(&["test", "scripts/lib", "--filter", "double"]);
    run.expect_code(0);
    assert_eq!(run.stdout, "ok   scripts/lib/math_test.rhai  test_double_doubles\n1 passed, 0 failed\n");
}

#[test]
fn a_syntax_error_names_file_line_and_column_and_fails_only_its_file() {
    let project = math_project();
    project.write("scripts/broken_test.rhai", "fn test_x() {\n    let = 1;\n}\n");
    let run = project.host(&["test", "scripts/broken_test.rhai", "scripts/lib/math_test.rhai", "--filter", "double"]);
    run.expect_code(1);
    assert!(run.stdout.starts_with("FAIL scripts/broken_test.rhai  (the file does not compile)\n"), "{}", run.stdout);
    assert!(
        run.stdout.contains("syntax error") && run.stdout.contains("--> scripts/broken_test.rhai:2:9"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("ok   scripts/lib/math_test.rhai  test_double_doubles\n1 passed, 1 failed\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_missing_import_fails_its_file_with_the_place_of_the_import() {
    let project = TempProject::new();
    project.write("scripts/lib/gone_test.rhai", "import \"lib/gone\" as gone;\n\nfn test_x() { gone::f(); }\n");
    let run = project.host(&["test"]);
    run.expect_code(1);
    assert!(run.stdout.starts_with("FAIL scripts/lib/gone_test.rhai  (its top-level code)\n"), "{}", run.stdout);
    assert!(run.stdout.contains("--> scripts/lib/gone_test.rhai:1:"), "{}", run.stdout);
    assert!(run.stdout.ends_with("0 passed, 1 failed\n"), "{}", run.stdout);
}

#[test]
fn a_missing_path_or_no_test_files_is_an_input_error_naming_the_paths() {
    let project = TempProject::new();
    let missing = project.host(&["test", "scripts/nope"]);
    missing.expect_code(2);
    assert!(missing.stderr.contains("path `scripts/nope` does not exist"), "{}", missing.stderr);
    project.write("scripts/lib/plain.rhai", "fn f() { 1 }\n");
    let none = project.host(&["test"]);
    none.expect_code(2);
    assert!(none.stderr.contains("no `*_test.rhai` files under `scripts`"), "{}", none.stderr);
    assert_eq!(none.stdout, "");
}
