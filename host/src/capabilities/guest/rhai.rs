//! The Rhai namespace `guest::` and the `Guest` type it returns.

use std::sync::Arc;

use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString, Map, Module, NativeCallContext};

use crate::capabilities::docs::function;
use crate::wasm::{self, Registry};

type Result<T> = std::result::Result<T, Box<EvalAltResult>>;

/// A loaded guest, as scripts hold it.
#[derive(Clone)]
pub struct Guest(Arc<wasm::Guest>);

pub fn register_types(engine: &mut Engine) {
    engine.register_type_with_name::<Guest>("Guest");
}

fn fail(context: &NativeCallContext, error: &(dyn std::error::Error + 'static)) -> Box<EvalAltResult> {
    crate::capabilities::script_error(context, error)
}

fn describe(entry: &wasm::Entry) -> Map {
    let mut map = Map::new();
    map.insert("name".into(), entry.name.clone().into());
    map.insert("manifest".into(), entry.manifest_path.display().to_string().into());
    match &entry.manifest {
        Ok(manifest) => {
            map.insert("description".into(), manifest.description.clone().into());
            let extensions: Array = manifest.extensions.iter().map(|e| Dynamic::from(e.clone())).collect();
            map.insert("extensions".into(), extensions.into());
            let grants: Array = manifest.grants.capabilities.iter().map(|c| Dynamic::from(c.clone())).collect();
            map.insert("capabilities".into(), grants.into());
        }
        Err(error) => {
            map.insert("error".into(), error.clone().into());
        }
    }
    map
}

/// A map's other fields and its string `content` (shared, not copied), which cross to the guest
/// apart; `None` for any other input.
fn split_content(input: &Dynamic) -> Option<(Dynamic, ImmutableString)> {
    let map = input.read_lock::<Map>()?;
    let content = map.get(::abi::RAW_FIELD)?.read_lock::<ImmutableString>()?.clone();
    let fields: Map = map
        .iter()
        .filter(|(name, _)| name.as_str() != ::abi::RAW_FIELD)
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    Some((fields.into(), content))
}

pub fn module(registry: Arc<Registry>) -> Module {
    let mut module = Module::new();

    let guests = registry.clone();
    function(
        "load",
        &["name: &str", "Guest"],
        "
Loads a guest module by name (a folder with a guest.toml under `guests/` or `HOST_GUEST_PATH`)
or by path (`.wasm`, `.wat`, a guest folder or its guest.toml). A guest built from source is
compiled on first use. It runs sandboxed: only what its manifest (and the scenario's `[guests]`)
grants, within its memory, deadline and fuel limits.
Example: `let ts = guest::load(\"lang-typescript\"); let out = ts.invoke(\"extract_imports\", #{ path: p, content: text });`",
    )
    .set_into_module(&mut module, move |context: NativeCallContext, name: &str| -> Result<Guest> {
        guests.load(name).map(Guest).map_err(|error| fail(&context, &error))
    });

    let guests = registry.clone();
    function(
        "for_path",
        &["path: &str", "?"],
        "
The guest whose manifest lists the extension of `path` (a language strategy for a source file),
or `()` when none does.
Example: `let strategy = guest::for_path(\"app/page.tsx\"); if strategy != () { ... }`",
    )
    .set_into_module(&mut module, move |context: NativeCallContext, path: &str| -> Result<Dynamic> {
        match guests.for_path(path) {
            Ok(Some(guest)) => Ok(Dynamic::from(Guest(guest))),
            Ok(None) => Ok(Dynamic::UNIT),
            Err(error) => Err(fail(&context, &error)),
        }
    });

    let guests = registry;
    function(
        "list",
        &["Array"],
        "
Every guest the registry can find: maps with `name`, `manifest`, `description`, `extensions`
and `capabilities` (or `error` for a manifest that does not parse).
Example: `for g in guest::list() { print(g.name); }`",
    )
    .set_into_module(&mut module, move || -> Array {
        guests.entries().iter().map(|entry| Dynamic::from(describe(entry))).collect()
    });

    function(
        "invoke",
        &["guest: &mut Guest", "function: &str", "input: ?", "?"],
        "
Calls a guest function with `input` (any value that is JSON: map, array, string, number, bool,
`()`) and returns its output. A failure the guest reports, and any sandbox violation (deadline,
memory, fuel, trap), is a catchable error naming the guest and the function. (Not `call`: Rhai
reserves `x.call(...)` for function pointers.)
Example: `let out = ts.invoke(\"extract_imports\", #{ path: \"a.ts\", content: \"import x from 'y'\" });`",
    )
    .in_global_namespace()
    .set_into_module(
        &mut module,
        |context: NativeCallContext, guest: &mut Guest, name: &str, input: Dynamic| -> Result<Dynamic> {
            let output = match split_content(&input) {
                // The script's string goes to the guest as it is, not through a JSON copy.
                Some((fields, content)) => {
                    let fields: serde_json::Map<String, serde_json::Value> = rhai::serde::from_dynamic(&fields)?;
                    let input = wasm::Input::with_content(&fields, &content).map_err(|error| fail(&context, &error))?;
                    guest.0.call_input(name, &input)
                }
                None => {
                    let input: serde_json::Value = rhai::serde::from_dynamic(&input)?;
                    guest.0.call(name, &input)
                }
            };
            rhai::serde::to_dynamic(output.map_err(|error| fail(&context, &error))?)
        },
    );

    function("name", &["guest: &mut Guest", "String"], "The guest's name.\nExample: `print(ts.name());`")
        .in_global_namespace()
        .set_into_module(&mut module, |guest: &mut Guest| guest.0.name().to_string());

    function(
        "functions",
        &["guest: &mut Guest", "Array"],
        "The functions the guest exports.\nExample: `print(ts.functions());`",
    )
    .in_global_namespace()
    .set_into_module(&mut module, |guest: &mut Guest| -> Array {
        guest.0.functions.iter().map(|name| Dynamic::from(name.clone())).collect()
    });

    module
}
