//! Specification of the `packages` capability: pinned specs only, a fetch once into the cache
//! through the registry's own client, then reads from the cache.

use std::path::Path;

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
