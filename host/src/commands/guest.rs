//! `host guest list` and `host guest call`: the guest registry from the command line, for
//! trying a guest by hand before a script uses it.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::{Value, json};

use crate::cli::{GuestCallArgs, GuestCommand, GuestListArgs};
use crate::wasm::Registry;

use super::{Outcome, scratch_capabilities};

pub fn guest(command: &GuestCommand, verbose: bool) -> anyhow::Result<Outcome> {
    let root = project_root()?;
    let scratch = scratch_capabilities(&root, verbose)?;
    let registry = &scratch.capabilities.guests;
    match command {
        GuestCommand::List(args) => list(registry, args, &root),
        GuestCommand::Call(args) => call(registry, args),
    }
}

/// The nearest folder, from the working directory up, that holds `guests/`; else the working
/// directory itself.
fn project_root() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let found = cwd.ancestors().find(|dir| dir.join("guests").is_dir()).map(Path::to_path_buf);
    Ok(found.unwrap_or(cwd))
}

fn list(registry: &Registry, args: &GuestListArgs, root: &Path) -> anyhow::Result<Outcome> {
    let entries = registry.entries();
    let shown = |path: &Path| path.strip_prefix(root).unwrap_or(path).display().to_string();
    if args.json {
        let rows: Vec<Value> = entries
            .iter()
            .map(|entry| match &entry.manifest {
                Ok(manifest) => json!({
                    "name": entry.name,
                    "manifest": shown(&entry.manifest_path),
                    "description": manifest.description,
                    "extensions": manifest.extensions,
                    "capabilities": manifest.grants.capabilities,
                }),
                Err(error) => json!({ "name": entry.name, "manifest": shown(&entry.manifest_path), "error": error }),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(Outcome::Success);
    }
    if entries.is_empty() {
        let searched: Vec<String> = registry.search_dirs().iter().map(|dir| shown(dir)).collect();
        eprintln!("no guests in {}", searched.join(", "));
        return Ok(Outcome::Success);
    }
    let width = entries.iter().map(|entry| entry.name.len()).max().unwrap_or(4).max(4);
    println!("{:width$}  {:24}  {:12}  DESCRIPTION", "NAME", "EXTENSIONS", "GRANTS");
    let mut broken = false;
    for entry in &entries {
        match &entry.manifest {
            Ok(manifest) => {
                let extensions = manifest.extensions.join(" ");
                let grants = manifest.grants.capabilities.iter().cloned().collect::<Vec<_>>().join(" ");
                let grants = if grants.is_empty() { "-".to_string() } else { grants };
                println!("{:width$}  {:24}  {:12}  {}", entry.name, extensions, grants, manifest.description);
            }
            Err(error) => {
                broken = true;
                println!("{:width$}  error: {error}", entry.name);
            }
        }
    }
    Ok(if broken { Outcome::Failed } else { Outcome::Success })
}

fn call(registry: &Registry, args: &GuestCallArgs) -> anyhow::Result<Outcome> {
    let input = input(args)?;
    let guest = registry.load(&args.guest)?;
    let output = guest.call(&args.function, &input)?;
    println!("{}", serde_json::to_string_pretty(&output)?);
    Ok(Outcome::Success)
}

fn input(args: &GuestCallArgs) -> anyhow::Result<Value> {
    if let Some(path) = &args.source {
        let content =
            fs_err::read_to_string(path).with_context(|| format!("cannot read source file `{}`", path.display()))?;
        return Ok(json!({ "path": path.display().to_string(), "content": content }));
    }
    let (text, origin) = match args.input.as_deref() {
        None => return Ok(json!({})),
        Some("-") => {
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).context("cannot read the input from standard input")?;
            (text, "standard input".to_string())
        }
        Some(argument) => match argument.strip_prefix('@') {
            Some(file) => (
                fs_err::read_to_string(file).with_context(|| format!("cannot read input file `{file}`"))?,
                format!("`{file}`"),
            ),
            None => (argument.to_string(), "the INPUT argument".to_string()),
        },
    };
    serde_json::from_str(&text).with_context(|| {
        format!("{origin} is not valid JSON; hint: quote it for the shell, e.g. '{{\"path\": \"a.ts\"}}'")
    })
}
