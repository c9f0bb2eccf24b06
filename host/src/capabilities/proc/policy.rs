//! Which programs may run and with what environment: the `[proc]` section of a scenario plus the
//! script's own `proc::allow`, turned into a [`Launch`]. It decides; it starts nothing.
//!
//! A child's environment starts empty. It gets a few variables every program expects ([`BASE`]),
//! the names the scenario lists under `[proc] env`, the names the call lists in `pass_env`, and
//! the call's own `env`. Values of variables named like secrets, and everything passed by
//! `pass_env`, are kept as secrets: masked wherever a call is recorded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use serde::Deserialize;

use super::{Launch, ProcError, ProcRequest, mask};
use crate::capabilities::fs::Files;

/// Host variables every child gets, when the host has them.
pub const BASE: [&str; 13] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "TZ",
    "TMPDIR",
    "TERM",
];

/// Parts of a variable name that mark its value as secret.
const SECRET_MARKS: [&str; 7] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"];

/// Host secrets shorter than this are not masked in arguments (`AUTH_ENABLED=true` is no secret
/// worth turning every `true` into `***`); secrets a call names are masked at any length.
const MIN_MASKED_HOST_SECRET: usize = 8;

/// The scenario's `[proc]` section.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScenarioProc {
    /// Programs that may run: a name (`git`) matches the program's file name however it is
    /// called; a path (`tools/run.sh`) matches that file, relative to the project root.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Host variables every child gets, in addition to [`BASE`].
    #[serde(default)]
    pub env: Vec<String>,
}

impl ScenarioProc {
    /// The `[proc]` section of a scenario (as JSON), if any.
    pub fn from_scenario(scenario: Option<&serde_json::Value>) -> Result<Self, String> {
        match scenario.and_then(|scenario| scenario.get("proc")) {
            None => Ok(ScenarioProc::default()),
            Some(section) => serde_json::from_value(section.clone()).map_err(|error| format!("`[proc]`: {error}")),
        }
    }
}

/// The run's rules for starting programs.
pub struct ProcPolicy {
    /// Allowed entries, each with where it was declared (`scenario` or `script`).
    allowed: RwLock<BTreeMap<String, &'static str>>,
    scenario_env: Vec<String>,
    /// How hints name the scenario: its path, or a suggestion to make one.
    scenario_shown: String,
    files: Arc<dyn Files>,
    host_env: BTreeMap<String, String>,
}

impl std::fmt::Debug for ProcPolicy {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("ProcPolicy").field("allowed", &self.allowed()).finish_non_exhaustive()
    }
}

impl ProcPolicy {
    /// `scenario_path` is the scenario file as the user knows it, if one is loaded; `host_env`
    /// is the host's environment (`std::env::vars()`, or a fixed map in tests).
    pub fn new(
        scenario: ScenarioProc,
        scenario_path: Option<&str>,
        files: Arc<dyn Files>,
        host_env: BTreeMap<String, String>,
    ) -> Self {
        let allowed = scenario.allow.iter().map(|entry| (entry.clone(), "scenario")).collect();
        let scenario_shown =
            scenario_path.map_or_else(|| "the scenario (`--scenario FILE`)".into(), |p| format!("`{p}`"));
        ProcPolicy { allowed: RwLock::new(allowed), scenario_env: scenario.env, scenario_shown, files, host_env }
    }

    /// The script's own declaration: these programs may run too.
    pub fn allow(&self, programs: &[String]) {
        if let Ok(mut allowed) = self.allowed.write() {
            for program in programs {
                allowed.entry(program.clone()).or_insert("script");
            }
        }
    }

    /// Every allowed entry and where it was declared, for the manifest.
    pub fn allowed(&self) -> Vec<(String, String)> {
        let allowed = self.allowed.read().map(|allowed| allowed.clone()).unwrap_or_default();
        allowed.into_iter().map(|(entry, origin)| (entry, origin.to_string())).collect()
    }

    /// Checks `request` against the rules and decides everything the child gets.
    pub fn prepare(&self, request: ProcRequest) -> Result<Launch, ProcError> {
        let launch = self.launch(request)?;
        let name = launch.argv.first().map(String::as_str).unwrap_or_default();
        if !self.is_allowed(name, &launch.program) {
            return Err(ProcError::NotAllowed {
                program: mask(name, &launch.secrets),
                scenario: self.scenario_shown.clone(),
            });
        }
        Ok(launch)
    }

    /// [`Self::prepare`] for a program the host itself runs for a capability (git for
    /// `workspace::`): the same environment rules, without the allow-list the script answers to.
    pub fn launch(&self, request: ProcRequest) -> Result<Launch, ProcError> {
        let Some(name) = request.argv.first().filter(|name| !name.is_empty()).cloned() else {
            return Err(ProcError::EmptyArgv);
        };
        if !(request.grace_s.is_finite() && request.grace_s > 0.0) {
            return Err(ProcError::Seconds { field: "grace_s", value: request.grace_s });
        }
        let output_limit_bytes = usize::try_from(request.output_limit_kib.saturating_mul(1024)).unwrap_or(usize::MAX);
        if output_limit_bytes == 0 {
            return Err(ProcError::OutputLimit);
        }
        let cwd = match &request.cwd {
            None => None,
            Some(path) if Path::new(path).is_absolute() => Some(PathBuf::from(path)),
            Some(path) => {
                Some(self.files.resolve(path).map_err(|source| ProcError::Cwd { path: path.clone(), source })?)
            }
        };
        let (env, secrets) = self.environment(&request)?;
        let program = find_program(&name, cwd.as_deref(), env.get("PATH").map(String::as_str));
        Ok(Launch {
            program,
            argv: request.argv,
            cwd,
            env,
            stdin: request.stdin,
            grace: std::time::Duration::from_secs_f64(request.grace_s.min(3600.0)),
            output_limit_bytes,
            secrets,
        })
    }

    fn is_allowed(&self, name: &str, program: &Path) -> bool {
        let Ok(allowed) = self.allowed.read() else {
            return false;
        };
        let file_name = Path::new(name).file_name().map(|file| file.to_string_lossy().into_owned());
        allowed.keys().any(|entry| {
            if entry.contains('/') {
                let root = self.files.resolve(".").unwrap_or_default();
                std::fs::canonicalize(root.join(entry))
                    .is_ok_and(|allowed| Some(allowed) == program.canonicalize().ok())
            } else {
                file_name.as_deref() == Some(entry.as_str())
            }
        })
    }

    /// The child's whole environment, and the values never to be recorded.
    fn environment(&self, request: &ProcRequest) -> Result<(BTreeMap<String, String>, Vec<String>), ProcError> {
        for name in &request.pass_env {
            check_name("pass_env", name)?;
        }
        for name in request.env.keys() {
            check_name("env", name)?;
        }
        let mut env = BTreeMap::new();
        let mut secrets = Vec::new();
        let inherited = BASE.iter().map(|name| name.to_string()).chain(self.scenario_env.iter().cloned());
        for name in inherited {
            if let Some(value) = self.host_env.get(&name) {
                if looks_secret(&name) {
                    secrets.push(value.clone());
                }
                env.insert(name, value.clone());
            }
        }
        for name in &request.pass_env {
            if let Some(value) = self.host_env.get(name) {
                secrets.push(value.clone());
                env.insert(name.clone(), value.clone());
            }
        }
        for (name, value) in &request.env {
            if looks_secret(name) {
                secrets.push(value.clone());
            }
            env.insert(name.clone(), value.clone());
        }
        let host_secrets =
            self.host_env.iter().filter(|(name, value)| looks_secret(name) && value.len() >= MIN_MASKED_HOST_SECRET);
        secrets.extend(host_secrets.map(|(_, value)| value.clone()));
        secrets.retain(|secret| !secret.is_empty());
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        secrets.dedup();
        Ok((env, secrets))
    }
}

fn check_name(field: &'static str, name: &str) -> Result<(), ProcError> {
    if name.is_empty() || name.contains(['=', '\0']) {
        return Err(ProcError::EnvName { field, name: name.to_string() });
    }
    Ok(())
}

/// Whether a variable's name says its value is a secret (`ANTHROPIC_API_KEY`, `GH_TOKEN`).
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_MARKS.iter().any(|mark| upper.contains(mark))
}

/// Where `name` is: a path (relative to `cwd`) when it has a `/`, else the first executable
/// file of that name on `path`. Unfound, the name itself, which fails to start as missing.
pub fn find_program(name: &str, cwd: Option<&Path>, path: Option<&str>) -> PathBuf {
    if name.contains('/') {
        let named = Path::new(name);
        return match cwd {
            Some(cwd) if named.is_relative() => cwd.join(named),
            _ => named.to_path_buf(),
        };
    }
    let found = path.unwrap_or_default().split(':').filter(|dir| !dir.is_empty()).map(|dir| Path::new(dir).join(name));
    found.into_iter().find(|candidate| is_executable(candidate)).unwrap_or_else(|| PathBuf::from(name))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capabilities::fs::{ReadPolicy, SandboxFiles};

    fn policy(allow: &[&str], host_env: &[(&str, &str)]) -> (tempfile::TempDir, ProcPolicy) {
        let root = tempfile::tempdir().expect("temp dir");
        let files = Arc::new(SandboxFiles::new(ReadPolicy::new(root.path()).expect("policy")));
        let scenario = ScenarioProc { allow: allow.iter().map(|s| s.to_string()).collect(), env: vec!["EXTRA".into()] };
        let env = host_env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let policy = ProcPolicy::new(scenario, Some("scenarios/x.toml"), files, env);
        (root, policy)
    }

    fn request_for(argv: &[&str]) -> ProcRequest {
        ProcRequest::new(argv.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn a_program_not_declared_is_refused_with_where_to_allow_it() {
        let (_root, policy) = policy(&["sh"], &[("PATH", "/usr/bin:/bin")]);
        let error = policy.prepare(request_for(&["curl", "http://example.invalid"])).expect_err("not allowed");
        assert_eq!(
            error.to_string(),
            "program `curl` is not allowed to run; hint: add \"curl\" to `allow` under `[proc]` in \
             `scenarios/x.toml`, or call `proc::allow([\"curl\"])` in the script"
        );
        policy.allow(&["curl".into()]);
        assert!(policy.prepare(request_for(&["curl"])).is_ok());
        assert_eq!(policy.allowed(), [("curl".into(), "script".into()), ("sh".into(), "scenario".into())]);
    }

    #[test]
    fn a_name_is_found_on_the_childs_path_and_allowed_by_file_name() {
        let (_root, policy) = policy(&["sh"], &[("PATH", "/nonexistent:/bin:/usr/bin")]);
        let launch = policy.prepare(request_for(&["sh", "-c", "true"])).expect("allowed");
        assert!(launch.program.is_absolute() && launch.program.ends_with("sh"), "{:?}", launch.program);
        assert!(policy.prepare(request_for(&["/bin/sh"])).is_ok(), "a path is allowed by its file name");
        assert!(matches!(policy.prepare(request_for(&[])), Err(ProcError::EmptyArgv)));
    }

    #[test]
    fn the_child_gets_only_base_scenario_and_named_variables() {
        let host = [
            ("PATH", "/bin"),
            ("HOME", "/root"),
            ("EXTRA", "yes"),
            ("UNRELATED", "no"),
            ("ANTHROPIC_API_KEY", "sk-ant-0123456789"),
            ("OTHER_TOKEN", "tok-abcdefgh"),
        ];
        let (_root, policy) = policy(&["env"], &host);
        let mut request = request_for(&["env", "--flag=sk-ant-0123456789"]);
        request.pass_env = vec!["ANTHROPIC_API_KEY".into()];
        request.env.insert("MODE".into(), "test".into());
        let launch = policy.prepare(request).expect("allowed");
        let names: Vec<&str> = launch.env.keys().map(String::as_str).collect();
        assert_eq!(names, ["ANTHROPIC_API_KEY", "EXTRA", "HOME", "MODE", "PATH"]);
        assert_eq!(launch.recordable_argv(), ["env", "--flag=***"]);
        assert!(launch.secrets.contains(&"tok-abcdefgh".to_string()), "host secrets are masked even when not passed");
    }

    #[test]
    fn invalid_fields_are_named() {
        let (_root, policy) = policy(&["sh"], &[]);
        let mut bad_env = request_for(&["sh"]);
        bad_env.env.insert("A=B".into(), "x".into());
        let mut bad_grace = request_for(&["sh"]);
        bad_grace.grace_s = 0.0;
        let mut bad_cwd = request_for(&["sh"]);
        bad_cwd.cwd = Some("../outside".into());
        let messages: Vec<String> = [bad_env, bad_grace, bad_cwd]
            .into_iter()
            .map(|a| policy.prepare(a).expect_err("invalid").to_string())
            .collect();
        assert!(messages[0].contains("`env.A=B`"), "{}", messages[0]);
        assert!(messages[1].contains("`grace_s`"), "{}", messages[1]);
        assert!(messages[2].contains("`cwd` `../outside`"), "{}", messages[2]);
    }

    #[test]
    fn a_scenario_section_with_an_unknown_key_is_an_error() {
        let scenario = serde_json::json!({"proc": {"allow": ["git"], "alow": ["sh"]}});
        let error = ScenarioProc::from_scenario(Some(&scenario)).expect_err("unknown key");
        assert!(error.contains("unknown field `alow`"), "{error}");
        assert_eq!(ScenarioProc::from_scenario(None), Ok(ScenarioProc::default()));
    }
}
