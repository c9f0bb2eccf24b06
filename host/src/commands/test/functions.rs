//! Which functions of a compiled test file are tests: those named `test_*` that take no
//! parameters, in the order the file defines them (Rhai keeps functions by hash, not by place).

use rhai::AST;

/// The tests of one file, and the `test_*` functions passed over because they take parameters.
#[derive(Debug, Default, PartialEq)]
pub struct Found {
    pub tests: Vec<String>,
    pub with_parameters: Vec<String>,
}

pub fn tests(ast: &AST, text: &str) -> Found {
    let mut found = Found::default();
    let mut tests = Vec::new();
    for function in ast.iter_functions().filter(|function| function.name.starts_with("test_")) {
        if function.params.is_empty() {
            tests.push((defined_at(text, function.name), function.name.to_string()));
        } else {
            found.with_parameters.push(function.name.to_string());
        }
    }
    tests.sort();
    found.tests = tests.into_iter().map(|(_, name)| name).collect();
    found.with_parameters.sort();
    found
}

/// Where `fn <name>(` starts in `text`; after everything else when it cannot be found.
fn defined_at(text: &str, name: &str) -> usize {
    text.match_indices(name)
        .map(|(at, _)| at)
        .find(|&at| {
            let before = &text[..at];
            let after = text[at + name.len()..].trim_start();
            before.ends_with(char::is_whitespace) && before.trim_end().ends_with("fn") && after.starts_with('(')
        })
        .unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_come_in_definition_order_and_helpers_are_left_out() {
        let text =
            "fn test_zebra() {}\nfn helper() {}\nprivate fn test_apple () {}\nfn test_middle() { test_zebra() }\n";
        let ast = rhai::Engine::new().compile(text).unwrap();
        assert_eq!(tests(&ast, text).tests, ["test_zebra", "test_apple", "test_middle"]);
    }

    #[test]
    fn a_test_function_with_parameters_is_not_a_test() {
        let text = "fn test_one(x) {}\nfn test_two() {}\n";
        let ast = rhai::Engine::new().compile(text).unwrap();
        assert_eq!(
            tests(&ast, text),
            Found { tests: vec!["test_two".into()], with_parameters: vec!["test_one".into()] }
        );
    }
}
