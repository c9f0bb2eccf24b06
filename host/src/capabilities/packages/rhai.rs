//! The Rhai namespace `packages::`.

use std::sync::Arc;

use rhai::{Array, Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use super::{GitSource, Packages};
use crate::capabilities::{docs::function, script_error, script_value};

pub fn module(packages: Arc<dyn Packages>) -> Module {
    let mut module = Module::new();
    let fetcher = packages.clone();
    function(
        "npm",
        &["spec: &str", "Map"],
        "
The npm package `spec` (`name@version`, an exact version), fetched once with `npm pack` into
host's cache and read from there ever after; the run's manifest records its name, version and
sha256 under `settings.packages`. Returns `#{ name, version, dir, archive, sha256, fetched }`,
`dir` being the unpacked package (its `package.json` folder). A spec that is not pinned, or a
package that cannot be fetched, is an error saying how to get it.
Example: `let next = packages::npm(\"next@16.2.0\"); let docs = `${next.dir}/dist/docs`;`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, spec: &str| -> Result<Map, Box<EvalAltResult>> {
            let package = fetcher.npm(spec).map_err(|error| script_error(&context, &error))?;
            let mut map = Map::new();
            map.insert("name".into(), package.name.into());
            map.insert("version".into(), package.version.into());
            map.insert("dir".into(), package.dir.display().to_string().into());
            map.insert("archive".into(), package.archive.display().to_string().into());
            map.insert("sha256".into(), package.sha256.into());
            map.insert("fetched".into(), Dynamic::from_bool(package.fetched));
            Ok(map)
        },
    );
    let cloner = packages.clone();
    function(
        "git",
        &["source: Map", "Map"],
        "
A git repository at a pinned revision, cloned once with `git` into host's cache and read from
there ever after: `#{ repo, rev, paths }`, `repo` a URL, a local clone or a bundle file, `rev` a
commit id, a tag or a branch (left out: the repository and revision last given for a repository
of the same name, its pin: a suite set up from a bundle file serves later calls that name its URL),
`paths` the folders to check out (all when left out). The manifest records repository, revision
and the full commit under `settings.packages`. Returns `#{ repo, rev, commit, dir, fetched }`,
`dir` being the work tree.
Example: `let suite = packages::git(#{ repo: \"https://github.com/vercel/next-evals-oss\", rev: \"98397f2\" }); let evals = `${suite.dir}/evals`;`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, source: Map| -> Result<Map, Box<EvalAltResult>> {
            let source: GitSource = script_value(&context, "git source", &source.into(), &serde_json::json!({}))?;
            let checkout = cloner.git(&source).map_err(|error| script_error(&context, &error))?;
            let mut map = Map::new();
            map.insert("repo".into(), checkout.repo.into());
            map.insert("rev".into(), checkout.rev.into());
            map.insert("commit".into(), checkout.commit.into());
            map.insert("dir".into(), checkout.dir.display().to_string().into());
            map.insert("fetched".into(), Dynamic::from_bool(checkout.fetched));
            Ok(map)
        },
    );
    let installer = packages.clone();
    function(
        "npm_install",
        &["spec: &str", "Map"],
        "
The npm package `spec` (an exact version) installed with its dependencies, once, by `npm install`
into host's cache, for a program that needs them to run; the manifest records it with the
sha256 of its `package-lock.json`. Returns `#{ name, version, dir, root, bin, lock_sha256,
fetched }`: `dir` is the package, `root` the install (its `node_modules/` holds every
dependency), `bin` its `node_modules/.bin` folder of programs.
Example: `let codemod = packages::npm_install(\"@next/codemod@16.4.3\"); proc::run(#{ argv: [\"node\", `${codemod.dir}/bin/next-codemod.js`, \"agents-md\", \"--output\", \"AGENTS.md\"], cwd: ws.path() });`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, spec: &str| -> Result<Map, Box<EvalAltResult>> {
            let installed = installer.npm_install(spec).map_err(|error| script_error(&context, &error))?;
            let mut map = Map::new();
            map.insert("name".into(), installed.name.into());
            map.insert("version".into(), installed.version.into());
            map.insert("dir".into(), installed.dir.display().to_string().into());
            map.insert("bin".into(), installed.root.join("node_modules/.bin").display().to_string().into());
            map.insert("root".into(), installed.root.display().to_string().into());
            map.insert("lock_sha256".into(), installed.lock_sha256.into());
            map.insert("fetched".into(), Dynamic::from_bool(installed.fetched));
            Ok(map)
        },
    );
    let pip = packages.clone();
    function(
        "pip_install",
        &["spec: &str", "Map"],
        "
The PyPI package `spec` (`name==version`, an exact version) installed with its dependencies,
once, by pip into a Python environment of its own in host's cache (`python3 -m venv`, then
`pip install`; pip's own configuration and index apply); the manifest records it with what pip
resolved (`pip freeze --all`) under `settings.packages`. Returns `#{ name, version, python,
root, lock, lock_sha256, fetched }`: `python` is the environment's Python (run modules with
`-m`, not the scripts in `bin/`), `root` the environment, `lock` the frozen `name==version` lines.
Example: `let env = packages::pip_install(\"mem0ai==2.2.1\"); proc::allow([\"python\"]); let r = proc::run(#{ argv: [env.python, \"-c\", \"import mem0\"] });`",
    )
    .with_volatility(true)
    .set_into_module(
        &mut module,
        move |context: NativeCallContext, spec: &str| -> Result<Map, Box<EvalAltResult>> {
            let env = pip.pip_install(spec).map_err(|error| script_error(&context, &error))?;
            let mut map = Map::new();
            map.insert("name".into(), env.name.into());
            map.insert("version".into(), env.version.into());
            map.insert("python".into(), env.python.display().to_string().into());
            map.insert("root".into(), env.root.display().to_string().into());
            let lock: Array = env.lock.into_iter().map(Dynamic::from).collect();
            map.insert("lock".into(), lock.into());
            map.insert("lock_sha256".into(), env.lock_sha256.into());
            map.insert("fetched".into(), Dynamic::from_bool(env.fetched));
            Ok(map)
        },
    );
    module
}
