//! Specification of the `packages` capability: pinned specs only, a fetch once into the cache
//! through the registry's own client, then reads from the cache.

use std::path::Path;
use std::sync::{Arc, Mutex};

use super::*;

#[test]
fn a_spec_must_pin_an_exact_version() {
    assert_eq!(pinned("next@16.2.0").ok(), Some(("next".into(), "16.2.0".into())));
    assert_eq!(
        pinned("@anthropic-ai/claude-code@2.1.330").ok(),
        Some(("@anthropic-ai/claude-code".into(), "2.1.330".into()))
    );
    assert_eq!(pinned("next@16.2.0-canary.0").ok(), Some(("next".into(), "16.2.0-canary.0".into())));
    for loose in [
        "next",
        "next@latest",
        "next@^16.2.0",
        "next@16",
        "next@16.2",
        "@scope/x",
        "Next@1.0.0",
        "a b@1.0.0",
        "next@1.0.0 ; rm",
    ] {
        assert!(matches!(pinned(loose), Err(PackagesError::NotPinned { .. })), "{loose}");
    }
}

/// A stand-in for `npm pack`, run by `sh` (so no test executes a file it just wrote, which can
/// fail with "text file busy" while other tests fork): writes `<name>-<version>.tgz` holding
/// `package/package.json` into the `--pack-destination` folder, and counts its calls in `calls`.
fn fake_npm(dir: &Path) -> String {
    let script = dir.join("npm");
    let body = format!(
        "#!/bin/sh\necho x >> {calls}\nspec=\"$2\"; dest=\"$5\"\nwork=$(mktemp -d)\nmkdir -p \"$work/package\"\n\
         echo '{{\"name\":\"demo\"}}' > \"$work/package/package.json\"\n\
         tar -czf \"$dest/demo-1.0.0.tgz\" -C \"$work\" package\n",
        calls = dir.join("calls").display()
    );
    std::fs::write(&script, body).expect("write the fake npm");
    script.display().to_string()
}

#[test]
fn a_package_is_fetched_once_and_then_read_from_the_cache() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let npm = fake_npm(dir.path());
    let cache = NpmCache::new(&dir.path().join("cache"), &["sh", &npm], Box::new(|_| {}));
    let first = cache.npm("demo@1.0.0").expect("fetched");
    assert!(first.fetched);
    assert!(first.dir.join("package.json").is_file());
    assert_eq!(first.dir, dir.path().join("cache/npm/demo@1.0.0/package"));
    assert_eq!(first.sha256.len(), 64);
    let again = cache.npm("demo@1.0.0").expect("cached");
    assert!(!again.fetched);
    assert_eq!(again.sha256, first.sha256);
    let calls = std::fs::read_to_string(dir.path().join("calls")).expect("calls");
    assert_eq!(calls.lines().count(), 1, "npm ran once");
}

#[test]
fn a_failed_fetch_leaves_nothing_that_looks_cached_and_says_how_to_get_it() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = NpmCache::new(&dir.path().join("cache"), &["false"], Box::new(|_| {}));
    let error = cache.npm("demo@1.0.0").expect_err("npm fails");
    assert!(error.to_string().contains("hint: run `npm pack demo@1.0.0`"), "{error}");
    let left: Vec<_> = std::fs::read_dir(dir.path().join("cache/npm")).expect("the cache folder").collect();
    assert!(left.is_empty(), "no staging folder left behind: {left:?}");
}

/// A stand-in for `npm install <spec>`, run by `sh`: puts the package and one dependency into
/// `node_modules/` of its working directory, writes a lockfile, and counts its calls.
fn fake_npm_install(dir: &Path) -> String {
    let script = dir.join("npm");
    let body = format!(
        "#!/bin/sh\necho x >> {calls}\nmkdir -p node_modules/demo node_modules/dependency\n\
         echo '{{\"name\":\"demo\"}}' > node_modules/demo/package.json\necho '{{\"lockfileVersion\":3}}' > package-lock.json\n",
        calls = dir.join("calls").display()
    );
    std::fs::write(&script, body).expect("write the fake npm");
    script.display().to_string()
}

#[test]
fn a_program_is_installed_with_its_dependencies_once_and_then_read_from_the_cache() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let npm = fake_npm_install(dir.path());
    let cache = NpmCache::new(&dir.path().join("cache"), &["sh", &npm], Box::new(|_| {}));
    let first = cache.npm_install("demo@1.0.0").expect("installed");
    assert!(first.fetched);
    assert_eq!(first.root, dir.path().join("cache/npm-install/demo@1.0.0"));
    assert_eq!(first.dir, first.root.join("node_modules/demo"));
    assert!(first.root.join("node_modules/dependency").is_dir(), "its dependencies sit beside it");
    assert_eq!(first.lock_sha256.len(), 64);
    let again = cache.npm_install("demo@1.0.0").expect("cached");
    assert!(!again.fetched);
    assert_eq!(again.lock_sha256, first.lock_sha256);
    let calls = std::fs::read_to_string(dir.path().join("calls")).expect("calls");
    assert_eq!(calls.lines().count(), 1, "npm ran once");
}

#[test]
fn an_install_that_leaves_no_package_is_an_error_and_leaves_nothing_cached() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = NpmCache::new(&dir.path().join("cache"), &["true"], Box::new(|_| {}));
    let error = cache.npm_install("demo@1.0.0").expect_err("nothing was installed");
    assert!(error.to_string().contains("installed no `node_modules/demo`"), "{error}");
    let left: Vec<_> = std::fs::read_dir(dir.path().join("cache/npm-install")).expect("the cache folder").collect();
    assert!(left.is_empty(), "no staging folder left behind: {left:?}");
}

#[test]
fn a_pypi_spec_must_pin_an_exact_version() {
    let pinned = |spec: &str| pinned_pip(spec).ok();
    assert_eq!(pinned("mem0ai==2.2.1"), Some(("mem0ai".into(), "2.2.1".into())));
    assert_eq!(pinned("mem0ai==1.0.0rc1"), Some(("mem0ai".into(), "1.0.0rc1".into())));
    assert_eq!(pinned("mem0ai==1.0.0.post1"), Some(("mem0ai".into(), "1.0.0.post1".into())));
    assert_eq!(pinned("mem0ai==1.0.0b2.post1.dev3"), Some(("mem0ai".into(), "1.0.0b2.post1.dev3".into())));
    assert_eq!(pinned("pytz==2024.1"), Some(("pytz".into(), "2024.1".into())));
    assert_eq!(pinned("Zope.Interface__x==6.0"), Some(("zope-interface-x".into(), "6.0".into())), "named as PyPI does");
    for loose in [
        "mem0ai",
        "mem0ai>=2",
        "mem0ai~=2.2.1",
        "mem0ai==2.*",
        "mem0ai==2",
        "mem0ai===2.2.1",
        "mem0ai==v2.2.1",
        "mem0ai==2.2.1-rc1",
        "mem0ai==2.2.1+local",
        "mem0ai==1!2.2.1",
        "mem0ai==2.2.1rc",
        "mem0ai[graph]==2.2.1",
        "mem0ai==2.2.1; python_version>'3'",
        "mem0ai==2.2.1;rm -rf /",
        "mem0ai == 2.2.1",
        "mem0ai==2.2.1 ",
        "mem0ai@2.2.1",
        "==2.2.1",
        "-r==2.2.1",
        "--index-url==2.2.1",
    ] {
        assert!(matches!(pinned_pip(loose), Err(PackagesError::NotPinnedPip { .. })), "{loose}");
    }
    let error = pinned_pip("mem0ai").expect_err("not pinned");
    assert!(error.to_string().contains("hint: give an exact version, `<name>==<version>`, e.g. `mem0ai==2.2.1`"));
}

/// A stand-in for Python, run by `sh`: `-c` prints its version, `-m venv DIR` makes DIR with a
/// copy of itself as `bin/python` (written by this script, not the test, so running it cannot
/// meet "text file busy"), `-m pip install` fails with pip's words while a file `offline` lies
/// beside it, `-m pip freeze --all` lists the package and one dependency. Every call is a line
/// of `calls`.
fn fake_python(dir: &Path) -> String {
    let script = dir.join("python");
    let body = format!(
        "#!/bin/sh\necho \"$*\" >> {calls}\ncase \"$1 $2 $3\" in\n\
         \"-c \"*) echo 3.12 ;;\n\
         \"-m venv \"*) mkdir -p \"$3/bin\" && cp \"$0\" \"$3/bin/python\" && chmod +x \"$3/bin/python\" && echo 'home = /usr/bin' > \"$3/pyvenv.cfg\" ;;\n\
         \"-m pip install\") if [ -e {offline} ]; then echo 'Looking in indexes: https://pypi.org/simple' >&2; \
         echo 'ERROR: No matching distribution found for Demo_Pkg==1.0.0' >&2; exit 1; fi ;;\n\
         \"-m pip freeze\") printf 'demo.pkg==1.0.0\\ndependency==0.1\\npip==24.0\\n' ;;\n\
         *) exit 2 ;;\nesac\n",
        calls = dir.join("calls").display(),
        offline = dir.join("offline").display(),
    );
    std::fs::write(&script, body).expect("write the fake python");
    script.display().to_string()
}

fn calls_of(dir: &Path, what: &str) -> usize {
    let calls = std::fs::read_to_string(dir.join("calls")).unwrap_or_default();
    calls.lines().filter(|line| line.contains(what)).count()
}

#[test]
fn a_python_environment_is_installed_once_with_its_lock_and_then_read_from_the_cache() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let python = fake_python(dir.path());
    let lines = Arc::new(Mutex::new(Vec::new()));
    let said = lines.clone();
    let notify = Box::new(move |line: &str| said.lock().expect("lines").push(line.to_owned()));
    let cache = PipCache::new(&dir.path().join("cache"), &["sh", &python], notify);
    let first = cache.pip_install("Demo_Pkg==1.0.0").expect("installed");
    assert!(first.fetched);
    assert_eq!((first.name.as_str(), first.version.as_str()), ("demo-pkg", "1.0.0"));
    assert_eq!(first.root, dir.path().join("cache/pip/demo-pkg==1.0.0-py3.12"));
    assert_eq!(first.python, first.root.join("bin/python"));
    assert!(first.python.is_file());
    assert_eq!(first.lock, ["demo.pkg==1.0.0", "dependency==0.1", "pip==24.0"]);
    assert_eq!(first.lock_sha256.len(), 64);
    assert!(lines.lock().expect("lines").iter().any(|line| line.contains("installing Demo_Pkg==1.0.0")));
    let again = cache.pip_install("Demo_Pkg==1.0.0").expect("cached");
    assert!(!again.fetched);
    assert_eq!((again.lock, again.lock_sha256), (first.lock, first.lock_sha256));
    assert_eq!((calls_of(dir.path(), "-m venv"), calls_of(dir.path(), "-m pip install")), (1, 1), "installed once");
    let install = std::fs::read_to_string(dir.path().join("calls")).expect("calls");
    assert!(install.contains("-m pip install --disable-pip-version-check --no-input Demo_Pkg==1.0.0"), "{install}");
    let left: Vec<_> = std::fs::read_dir(dir.path().join("cache/pip")).expect("the cache folder").flatten().collect();
    assert_eq!(left.len(), 1, "only the environment, no staging folder: {left:?}");
}

#[test]
fn a_failed_pip_install_names_the_spec_and_pips_reason_and_leaves_nothing_cached() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let python = fake_python(dir.path());
    std::fs::write(dir.path().join("offline"), "").expect("go offline");
    let cache = PipCache::new(&dir.path().join("cache"), &["sh", &python], Box::new(|_| {}));
    let error = cache.pip_install("Demo_Pkg==1.0.0").expect_err("pip fails");
    let message = error.to_string();
    assert!(matches!(error, PackagesError::PipInstall { .. }), "{error:?}");
    assert!(message.contains("cannot install `Demo_Pkg==1.0.0` with `sh "), "{message}");
    assert!(message.contains("ERROR: No matching distribution found for Demo_Pkg==1.0.0"), "{message}");
    assert!(message.contains("hint: run it once on a machine that reaches PyPI"), "{message}");
    let left: Vec<_> = std::fs::read_dir(dir.path().join("cache/pip")).expect("the cache folder").collect();
    assert!(left.is_empty(), "no half-made environment left behind: {left:?}");
    std::fs::remove_file(dir.path().join("offline")).expect("back online");
    let later = cache.pip_install("Demo_Pkg==1.0.0").expect("a later call tries again");
    assert!(later.fetched);
    assert_eq!(calls_of(dir.path(), "-m pip install"), 2);
}

#[test]
fn a_missing_python_is_an_error_that_names_it() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cache = PipCache::new(&dir.path().join("cache"), &["no-such-python-for-host-tests"], Box::new(|_| {}));
    let error = cache.pip_install("demo==1.0.0").expect_err("no python");
    assert!(error.to_string().contains("with `no-such-python-for-host-tests`: cannot start `python -c`"), "{error}");
}
