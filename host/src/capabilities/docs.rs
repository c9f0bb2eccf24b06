//! Registering Rhai functions with their documentation, so that `host api` and the API
//! snapshot show every function with its parameters and a doc comment.

use rhai::FuncRegistration;

/// A function registration carrying `signature` (parameter names and types, then the return
/// type) and `doc` (plain text, one or more lines, with an example).
pub(crate) fn function(name: &str, signature: &[&str], doc: &str) -> FuncRegistration {
    let comment =
        doc.trim().lines().map(|line| format!("/// {line}").trim_end().to_string()).collect::<Vec<_>>().join("\n");
    FuncRegistration::new(name).with_params_info(signature).with_comments([comment])
}
