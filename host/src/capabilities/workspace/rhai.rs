//! The Rhai namespace `workspace::` and the `Workspace` type it returns: a thin adapter that
//! decodes options and turns failures into catchable script errors, holding no policy.

use std::sync::Arc;

use rhai::{Array, Dynamic, Engine, EvalAltResult, Map, Module, NativeCallContext};

use super::{CreateOptions, WorkspaceError, Workspaces};
use crate::capabilities::docs::function;
use crate::capabilities::{script_error, script_options};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A workspace, as scripts hold it.
#[derive(Clone)]
pub struct Workspace(Arc<super::Workspace>);

pub fn register_types(engine: &mut Engine) {
    engine.register_type_with_name::<Workspace>("Workspace");
}

fn fail(context: &NativeCallContext, error: &WorkspaceError) -> Box<EvalAltResult> {
    script_error(context, error)
}

fn create(workspaces: &Workspaces, context: &NativeCallContext, options: CreateOptions) -> Result<Workspace> {
    workspaces.create(options).map(Workspace).map_err(|error| fail(context, &error))
}

pub fn module(workspaces: Arc<Workspaces>) -> Module {
    let mut module = Module::new();

    let registry = workspaces.clone();
    function(
        "create",
        &["options: Map", "Workspace"],
        "
Makes a throwaway directory for one unit of work, removed when the run ends (unless the run
keeps workspaces). Options: `name` (a label: letters, digits, `-`, `_`, `.`; `ws`), `from` (a
folder the script may read, or one inside a workspace made earlier in the run; copied with
executable bits and symlinks), `exclude` (names such
as `node_modules` or `*.log` matched anywhere, or relative paths such as `app/EVAL.ts`: not
copied, not in `diff()`), `under` (`temp`, the default, or `run`: the run directory's
`workspaces/`), `git` (false; true: a repository with one commit of the copied files, whose
hash depends only on them). An unknown option or a wrong type is a catchable error naming it.
Example: `let ws = workspace::create(#{ name: \"eval\", from: \"fixtures/app\", exclude: [\"node_modules\"], git: true });`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext, options: Map| -> Result<Workspace> {
        let options: CreateOptions = script_options(&context, "workspace::create", options)?;
        create(&registry, &context, options)
    });

    let registry = workspaces;
    function(
        "create",
        &["Workspace"],
        "
`workspace::create(#{})`: an empty workspace named `ws` in the temporary folder.
Example: `let ws = workspace::create(); ws.write(\"notes.md\", text);`",
    )
    .with_volatility(true)
    .set_into_module(&mut module, move |context: NativeCallContext| -> Result<Workspace> {
        create(&registry, &context, CreateOptions::default())
    });

    function(
        "path",
        &["workspace: &mut Workspace", "String"],
        "
The workspace's absolute path, to run programs in.
Example: `proc::run(#{ argv: [\"npm\", \"test\"], cwd: ws.path() });`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |workspace: &mut Workspace| workspace.0.path().display().to_string());

    function(
        "name",
        &["workspace: &mut Workspace", "String"],
        "The workspace's name: its label and a unique part (`eval-3fa9c1`).\nExample: `print(ws.name());`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |workspace: &mut Workspace| workspace.0.name().to_string());

    function(
        "write",
        &["workspace: &mut Workspace", "path: &str", "text: &str", "()"],
        "
Writes `text` to the file `path` (relative to the workspace), creating its folders. A path
that leaves the workspace (`..`, absolute, a symlink out) is a catchable error.
Example: `ws.write(\"app/EVAL.ts\", eval_source);`",
    )
    .in_global_namespace()
    .set_into_module(
        &mut module,
        |context: NativeCallContext, workspace: &mut Workspace, path: &str, text: &str| -> Result<()> {
            workspace.0.write(path, text).map_err(|error| fail(&context, &error))
        },
    );

    function(
        "read",
        &["workspace: &mut Workspace", "path: &str", "String"],
        "The file `path` (relative to the workspace) as text.\nExample: `let page = ws.read(\"app/page.tsx\");`",
    )
    .in_global_namespace()
    .set_into_module(
        &mut module,
        |context: NativeCallContext, workspace: &mut Workspace, path: &str| -> Result<String> {
            workspace.0.read(path).map_err(|error| fail(&context, &error))
        },
    );

    function(
        "exists",
        &["workspace: &mut Workspace", "path: &str", "bool"],
        "Whether `path` names a file or folder in the workspace.\nExample: `if ws.exists(\"package.json\") { ... }`",
    )
    .in_global_namespace()
    .set_into_module(
        &mut module,
        |context: NativeCallContext, workspace: &mut Workspace, path: &str| -> Result<bool> {
            workspace.0.exists(path).map_err(|error| fail(&context, &error))
        },
    );

    function(
        "list",
        &["workspace: &mut Workspace", "Array"],
        "
Every file in the workspace, recursively: sorted paths relative to its root, never `.git/`.
Example: `for file in ws.list() { print(file); }`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |context: NativeCallContext, workspace: &mut Workspace| -> Result<Array> {
        list(&context, workspace, "")
    });

    function(
        "list",
        &["workspace: &mut Workspace", "path: &str", "Array"],
        "
Every file below the folder `path`, recursively: sorted paths relative to the workspace root.
Example: `let tests = ws.list(\"tests\");`",
    )
    .in_global_namespace()
    .set_into_module(
        &mut module,
        |context: NativeCallContext, workspace: &mut Workspace, path: &str| -> Result<Array> {
            list(&context, workspace, path)
        },
    );

    function(
        "remove",
        &["workspace: &mut Workspace", "path: &str", "()"],
        "Removes the file or folder `path` (a symlink itself, not what it points to).\nExample: `ws.remove(\"node_modules\");`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |context: NativeCallContext, workspace: &mut Workspace, path: &str| -> Result<()> {
        workspace.0.remove(path).map_err(|error| fail(&context, &error))
    });

    function(
        "diff",
        &["workspace: &mut Workspace", "Map"],
        "
What changed since the workspace was made: `#{ added, modified, removed }`, sorted arrays of
paths, leaving out `.git/` and the `exclude` patterns.
Example: `let changed = ws.diff(); print(changed.modified.len());`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |context: NativeCallContext, workspace: &mut Workspace| -> Result<Dynamic> {
        let diff = workspace.0.diff().map_err(|error| fail(&context, &error))?;
        rhai::serde::to_dynamic(diff)
    });

    function(
        "commit",
        &["workspace: &mut Workspace", "message: &str", "()"],
        "
Commits every change in a workspace created with `git: true` (an empty commit when nothing
changed).
Example: `ws.commit(\"agent attempt 1\");`",
    )
    .in_global_namespace()
    .set_into_module(
        &mut module,
        |context: NativeCallContext, workspace: &mut Workspace, message: &str| -> Result<()> {
            workspace.0.commit(message).map_err(|error| fail(&context, &error))
        },
    );

    function(
        "cleanup",
        &["workspace: &mut Workspace", "()"],
        "
Removes the workspace now rather than at the end of the run; using it afterwards is an error.
Calling it twice does nothing.
Example: `ws.cleanup();`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |context: NativeCallContext, workspace: &mut Workspace| -> Result<()> {
        workspace.0.cleanup().map_err(|error| fail(&context, &error))
    });

    module
}

fn list(context: &NativeCallContext, workspace: &Workspace, path: &str) -> Result<Array> {
    let files = workspace.0.list(path).map_err(|error| fail(context, &error))?;
    Ok(files.into_iter().map(Dynamic::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::fs::{ReadPolicy, SandboxFiles};
    use crate::capabilities::workspace::WorkspaceSettings;

    struct NoGit;

    impl super::super::Git for NoGit {
        fn run(&self, _cwd: &std::path::Path, args: &[&str]) -> std::result::Result<(), String> {
            Err(format!("no git in this test: {args:?}"))
        }
    }

    fn engine(dir: &std::path::Path) -> Engine {
        std::fs::create_dir_all(dir.join("project/app")).expect("project");
        std::fs::write(dir.join("project/app/page.ts"), "export {}").expect("page");
        let files = SandboxFiles::new(ReadPolicy::new(&dir.join("project")).expect("policy"));
        let settings = WorkspaceSettings { run_id: "r1".into(), run_dir: dir.join("run"), keep: false };
        let workspaces = Arc::new(Workspaces::new(settings, Arc::new(files), Arc::new(NoGit)));
        let mut engine = Engine::new();
        engine.register_static_module("workspace", module(workspaces).into());
        register_types(&mut engine);
        engine
    }

    #[test]
    fn a_script_copies_edits_and_diffs_a_workspace() {
        let dir = tempfile::tempdir().expect("temp dir");
        let engine = engine(dir.path());
        let script = r#"
            let ws = workspace::create(#{ name: "eval", from: "app", under: "run" });
            ws.write("page.ts", "changed");
            ws.write("new/file.ts", "new");
            let diff = ws.diff();
            let listed = ws.list();
            let out = [ws.name().sub_string(0, 5), ws.read("new/file.ts"), ws.exists("page.ts"), listed, diff.added, diff.modified];
            ws.cleanup();
            out
        "#;
        let out: Array = engine.eval(script).expect("script runs");
        let shown: Vec<String> = out.iter().map(|value| value.to_string()).collect();
        assert_eq!(
            shown,
            ["eval-", "new", "true", r#"["new/file.ts", "page.ts"]"#, r#"["new/file.ts"]"#, r#"["page.ts"]"#]
        );
    }

    #[test]
    fn bad_options_and_escaping_paths_are_catchable_errors_naming_them() {
        let dir = tempfile::tempdir().expect("temp dir");
        let engine = engine(dir.path());
        let caught = |script: &str| -> String {
            let wrapped =
                format!("let caught = \"no error\"; try {{ {script}; }} catch (error) {{ caught = error; }} caught");
            engine.eval::<String>(&wrapped).expect("script runs")
        };
        assert!(caught(r#"workspace::create(#{ nmae: "x" })"#).contains("unknown field `nmae`"));
        assert!(
            caught(r#"workspace::create(#{ git: "yes" })"#)
                .starts_with("invalid options for `workspace::create`: `git`")
        );
        assert!(caught(r#"workspace::create(#{ under: "tmp" })"#).contains("unknown variant `tmp`"));
        let exclude = caught(r#"workspace::create(#{ name: "x", exclude: "node_modules" })"#);
        assert!(
            exclude.starts_with("invalid options for `workspace::create`: `exclude`: invalid type: string"),
            "{exclude}"
        );
        let escape = caught(r#"let ws = workspace::create(#{ name: "e", under: "run" }); ws.read("../x")"#);
        assert!(escape.starts_with("path `../x` leaves workspace `e-"), "{escape}");
        let closed = caught(r#"let ws = workspace::create(#{ under: "run" }); ws.cleanup(); ws.cleanup(); ws.list()"#);
        assert!(closed.contains("was cleaned up"), "{closed}");
    }
}
