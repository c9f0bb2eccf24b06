//! The registry is the whole list: every capability folder is in it, once, and the capabilities
//! guests may be granted are exactly the ones the guest SDK binds.

use std::collections::BTreeSet;
use std::path::Path;

use super::*;

/// Folders under `capabilities/` that hold shared infrastructure, not a capability.
const NOT_CAPABILITIES: [&str; 1] = ["batch"];

fn source(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

#[test]
fn every_capability_folder_is_registered_once_under_its_folders_name() {
    let registered: Vec<&str> = ALL.iter().map(|capability| capability.name).collect();
    let unique: BTreeSet<&str> = registered.iter().copied().collect();
    assert_eq!(unique.len(), registered.len(), "a name is registered twice: {registered:?}");

    let mut folders = BTreeSet::new();
    for entry in std::fs::read_dir(source("src/capabilities")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.join("mod.rs").is_file() && !NOT_CAPABILITIES.contains(&name.as_str()) {
            folders.insert(name);
        }
    }
    let registered: BTreeSet<String> = unique.into_iter().map(String::from).collect();
    assert_eq!(registered, folders, "capability folders and registry entries differ");
}

#[test]
fn guests_may_be_granted_exactly_the_capabilities_the_guest_sdk_binds() {
    let sdk = std::fs::read_to_string(source("../guest-sdk/src/ffi.rs")).unwrap();
    let bound: BTreeSet<&str> = sdk
        .split("wasm_import_module = \"host:")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .filter(|name| *name != "abi")
        .collect();
    let grantable: BTreeSet<&str> = grantable().collect();
    assert_eq!(grantable, bound);
    assert!(!grantable.contains("proc") && !grantable.contains("workspace"), "a guest never starts programs");
}

#[test]
fn every_capability_gives_scripts_a_namespace_with_functions() {
    let scratch = crate::commands::scratch_capabilities(&source(".."), false).unwrap();
    for capability in &ALL {
        let module = (capability.rhai)(&scratch.capabilities);
        assert!(module.count().1 > 0, "`{}::` has no functions", capability.name);
    }
}

#[test]
fn a_guest_calling_a_capability_it_cannot_be_granted_is_told_it_is_unsupported() {
    let scratch = crate::commands::scratch_capabilities(&source(".."), false).unwrap();
    let capabilities = &scratch.capabilities;
    let imports = GuestImports {
        log: capabilities.log.clone(),
        embed: capabilities.embed.clone(),
        llm: capabilities.llm.clone(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    match runtime.block_on(imports.call("proc", "a-guest", "run", b"{}")) {
        abi::Reply::Error(failure) => {
            assert_eq!(failure.kind, abi::FailureKind::Unsupported);
            assert!(failure.message.contains("no capability `proc`"), "{failure:?}");
        }
        other => panic!("a guest started a program: {other:?}"),
    }
}

#[test]
fn the_end_of_a_run_records_what_the_capabilities_hold_in_the_manifest() {
    let scratch = crate::commands::scratch_capabilities(&source(".."), false).unwrap();
    let capabilities = &scratch.capabilities;
    capabilities.run.units.take(&capabilities.run.sharding, 6, "the units' hash".into()).unwrap();
    let script = crate::run_record::FileRecord { path: "scripts/x.rhai".into(), sha256: "0".into() };
    let mut manifest = Manifest::new("an-id", "x", script, None);
    capabilities.finish(&mut manifest);
    let units: Vec<(usize, usize, usize)> =
        manifest.units.iter().map(|units| (units.total, units.first, units.count)).collect();
    assert_eq!(units, [(6, 0, 6)], "`run` records the units `run::shard` handed out");
    assert!(manifest.models.is_empty() && manifest.guests.is_empty() && manifest.workspaces.is_empty());
    assert!(manifest.processes.programs.is_empty(), "a run that started no program records none");
}

#[test]
fn where_scripts_run_without_a_run_capabilities_send_nothing_and_fetch_nothing() {
    let scratch = crate::commands::scratch_capabilities(&source(""), false).expect("scratch capabilities");
    let capabilities = &scratch.capabilities;
    let request = crate::capabilities::http::HttpRequest::new("get", "http://127.0.0.1:9/", None, Default::default());
    let response = capabilities.runtime.block_on(capabilities.http.send(request)).expect("a valid request");
    assert!(!response.ok);
    assert_eq!(response.error.as_deref(), Some("HTTP requests are not sent while checking a script"));
    assert!(capabilities.packages.npm("left-pad@1.3.0").is_err(), "no package registry is reached");
}
