//! `guest.toml`: what the host knows about a guest before loading it (name, the file extensions
//! it serves, where its module comes from) and what it may do (grants and limits). The guest's
//! own code never decides what it is granted: the manifest is written by whoever installs it,
//! and a scenario can only add to it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Whether a guest can be granted the capability `name` (the import module `host:<name>`): the
/// capabilities that declare a guest call in the registry. Never `proc` or `workspace`: a guest
/// does not start programs.
pub fn grantable(name: &str) -> bool {
    crate::capabilities::registry::grantable().any(|grantable| grantable == name)
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// File extensions (without the dot) routed to this guest by `guest::for_path`.
    #[serde(default)]
    pub extensions: Vec<String>,
    /// A prebuilt module, relative to the manifest. Without it the guest is built from the
    /// Cargo crate in the manifest's folder.
    #[serde(default)]
    pub wasm: Option<PathBuf>,
    /// Instances are reused across calls (the default); `false` gives every call a fresh one.
    #[serde(default = "yes")]
    pub stateless: bool,
    #[serde(default)]
    pub grants: Grants,
    #[serde(default)]
    pub limits: Limits,
}

fn yes() -> bool {
    true
}

/// What a guest may reach beyond its own memory. Nothing by default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Grants {
    /// Host capabilities, each [`grantable`].
    #[serde(default)]
    pub capabilities: BTreeSet<String>,
    /// Host directories, preopened read-only under the same path relative to the project
    /// (`fixtures/docs` is `/fixtures/docs` inside the guest).
    #[serde(default)]
    pub dirs: BTreeSet<PathBuf>,
    /// Environment variables passed through by name, when set.
    #[serde(default)]
    pub env: BTreeSet<String>,
    /// The real wall and monotonic clocks; without it both read a fixed instant.
    #[serde(default)]
    pub clock: bool,
    /// Real randomness; without it the guest's random source is a fixed sequence, so runs are
    /// reproducible.
    #[serde(default)]
    pub random: bool,
}

impl Grants {
    /// Everything in `self` or `more`.
    pub fn union(&self, more: &Grants) -> Grants {
        Grants {
            capabilities: self.capabilities.union(&more.capabilities).cloned().collect(),
            dirs: self.dirs.union(&more.dirs).cloned().collect(),
            env: self.env.union(&more.env).cloned().collect(),
            clock: self.clock || more.clock,
            random: self.random || more.random,
        }
    }
}

/// What one call may consume before it is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Linear memory, in MiB.
    #[serde(default = "Limits::default_memory_mib")]
    pub memory_mib: u32,
    /// Wall-clock time per call, host calls included, in milliseconds.
    #[serde(default = "Limits::default_deadline_ms")]
    pub deadline_ms: u64,
    /// Instructions' worth of fuel per call: a deterministic limit, at some cost in speed.
    #[serde(default)]
    pub fuel: Option<u64>,
    /// The largest input or reply, in MiB.
    #[serde(default = "Limits::default_output_mib")]
    pub output_mib: u32,
}

impl Limits {
    fn default_memory_mib() -> u32 {
        256
    }

    fn default_deadline_ms() -> u64 {
        10_000
    }

    fn default_output_mib() -> u32 {
        16
    }

    pub fn memory_bytes(&self) -> usize {
        (self.memory_mib as usize) << 20
    }

    pub fn output_bytes(&self) -> usize {
        (self.output_mib as usize) << 20
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            memory_mib: Self::default_memory_mib(),
            deadline_ms: Self::default_deadline_ms(),
            fuel: None,
            output_mib: Self::default_output_mib(),
        }
    }
}

/// Why a manifest was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read `{}`", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("`{}` is not a valid guest manifest", path.display())]
    Parse { path: PathBuf, source: toml::de::Error },
    #[error("`{}`: {problem}", path.display())]
    Invalid { path: PathBuf, problem: String },
}

impl Manifest {
    pub fn read(path: &Path) -> Result<Manifest, ManifestError> {
        let text =
            std::fs::read_to_string(path).map_err(|source| ManifestError::Read { path: path.to_path_buf(), source })?;
        let manifest: Manifest =
            toml::from_str(&text).map_err(|source| ManifestError::Parse { path: path.to_path_buf(), source })?;
        manifest.validate().map_err(|problem| ManifestError::Invalid { path: path.to_path_buf(), problem })?;
        Ok(manifest)
    }

    fn validate(&self) -> Result<(), String> {
        let name_ok =
            !self.name.is_empty() && self.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !name_ok {
            return Err(format!("field `name`: `{}` must be letters, digits, `-` or `_`", self.name));
        }
        validate_grants(&self.grants).map_err(|problem| format!("field `grants.{problem}"))?;
        if self.limits.memory_mib == 0 || self.limits.memory_mib > 4096 {
            return Err(format!("field `limits.memory_mib`: {} must be between 1 and 4096", self.limits.memory_mib));
        }
        if self.limits.deadline_ms == 0 {
            return Err("field `limits.deadline_ms`: must be at least 1".into());
        }
        if self.limits.output_mib == 0 {
            return Err("field `limits.output_mib`: must be at least 1".into());
        }
        if let Some(extension) = self.extensions.iter().find(|extension| extension.starts_with('.')) {
            return Err(format!("field `extensions`: write `{}` without the dot", extension));
        }
        Ok(())
    }
}

/// Checks grants from a manifest or a scenario; the error starts with the offending field.
pub fn validate_grants(grants: &Grants) -> Result<(), String> {
    if let Some(unknown) = grants.capabilities.iter().find(|name| !grantable(name)) {
        let names: Vec<&str> = crate::capabilities::registry::grantable().collect();
        return Err(format!(
            "capabilities`: unknown capability `{unknown}`; hint: guests can be granted {}",
            names.join(", ")
        ));
    }
    if let Some(dir) = grants.dirs.iter().find(|dir| dir.is_absolute() || dir.components().any(is_parent)) {
        return Err(format!("dirs`: `{}` must be a path inside the project, without `..`", dir.display()));
    }
    Ok(())
}

fn is_parent(component: std::path::Component<'_>) -> bool {
    matches!(component, std::path::Component::ParentDir)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("guest.toml");
        std::fs::write(&path, text).unwrap();
        Manifest::read(&path).map_err(|error| crate::capabilities::error_chain(&error))
    }

    #[test]
    fn a_minimal_manifest_grants_nothing_and_takes_default_limits() {
        let manifest = parse("name = \"lang-x\"").unwrap();
        assert_eq!(manifest.grants, Grants::default());
        assert_eq!(manifest.limits, Limits::default());
        assert!(manifest.stateless);
    }

    #[test]
    fn an_unknown_capability_is_refused_with_the_list_of_known_ones() {
        let error = parse("name = \"x\"\n[grants]\ncapabilities = [\"fs\"]").unwrap_err();
        assert!(error.contains("field `grants.capabilities`: unknown capability `fs`"), "{error}");
        assert!(error.contains("guests can be granted log, llm, embed"), "{error}");
    }

    #[test]
    fn a_misspelt_field_names_its_line() {
        let error = parse("name = \"x\"\n[limits]\nmemory_mb = 3").unwrap_err();
        assert!(error.contains("line 3"), "{error}");
        assert!(error.contains("memory_mb"), "{error}");
    }

    #[test]
    fn a_granted_directory_must_stay_inside_the_project() {
        let error = parse("name = \"x\"\n[grants]\ndirs = [\"../secrets\"]").unwrap_err();
        assert!(error.contains("field `grants.dirs`"), "{error}");
    }

    #[test]
    fn grants_from_a_scenario_add_to_the_manifest() {
        let mine = Grants { capabilities: ["log".to_string()].into(), ..Grants::default() };
        let more = Grants { capabilities: ["llm".to_string()].into(), clock: true, ..Grants::default() };
        let both = mine.union(&more);
        assert_eq!(both.capabilities, ["llm".to_string(), "log".to_string()].into());
        assert!(both.clock && !both.random);
    }
}
