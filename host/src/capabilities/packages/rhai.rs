//! The Rhai namespace `packages::`.

use std::sync::Arc;

use rhai::{Dynamic, EvalAltResult, Map, Module, NativeCallContext};

use super::Packages;
use crate::capabilities::{docs::function, script_error};

pub fn module(packages: Arc<dyn Packages>) -> Module {
    let mut module = Module::new();
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
            let package = packages.npm(spec).map_err(|error| script_error(&context, &error))?;
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
    module
}
