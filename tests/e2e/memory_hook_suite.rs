//! memory-hook's agent benchmark on a pinned eval suite, as the seed's CLI runs it: `setup
//! --commit <sha> --repo <bundle>` clones a suite (a git bundle made here, as
//! `../shared/datasets/next-evals-oss.bundle` is made) into host's cache and pins it, `run` then
//! takes its evals in both layouts; `setup-docs --ref` takes the docs of a version before 16.2.0
//! from a tag of a git repository; `docs_to_memories --output` writes the store where asked.
//! Each test has a cache of its own (its `git/` folder, where pins live), sharing the npm packages
//! of the real one.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::memory_hook_bench::{PROMPT, SOLUTION, write_eval};
use crate::support::{Run, duckdb, host_in_with, repo_root, table};

/// A cache folder whose registries' folders are the real cache's, so nothing is fetched again,
/// but whose git checkouts and pins are its own.
fn private_cache(dir: &Path) -> PathBuf {
    let real = std::env::var_os("HOST_CACHE_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/host")))
        .expect("a cache folder");
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).expect("cache folder");
    for shared in ["npm", "npm-install", "models", "runtimes", "embeddings", "hashes"] {
        if real.join(shared).exists() {
            std::os::unix::fs::symlink(real.join(shared), cache.join(shared)).expect("link a registry's folder");
        }
    }
    cache
}

fn git(dir: &Path, args: &[&str]) -> String {
    let output = std::process::Command::new("git")
        .args(["-c", "user.name=test", "-c", "user.email=test@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run git");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Commits everything in `repo` (tagged `tag` when given) and returns the commit id.
fn commit_all(repo: &Path, tag: Option<&str>) -> String {
    git(repo, &["init", "--quiet"]);
    git(repo, &["add", "."]);
    git(repo, &["commit", "--quiet", "-m", "suite"]);
    if let Some(tag) = tag {
        git(repo, &["tag", tag]);
    }
    git(repo, &["rev-parse", "HEAD"])
}

/// An eval in next-evals-oss' older layout: `prompt.md`, and the app in `input/`, whose scripts
/// run node programs: `build-only` and `lint` pass, and the app's own test fails until
/// `app/actions.ts` calls `updateTag('posts')`. No reference edit: the scripted model makes none.
fn write_app_tests_eval(evals: &Path, id: &str) {
    let eval = evals.join(id);
    let files = [
        ("prompt.md", PROMPT),
        ("input/app/page.tsx", "export default function Page() { return null }\n"),
        ("input/build.js", "require('fs').statSync('app/page.tsx')\n"),
        ("input/lint.js", "process.exit(0)\n"),
        (
            "input/app.test.js",
            "const fs = require('fs')\nconst src = fs.existsSync('app/actions.ts') ? fs.readFileSync('app/actions.ts', 'utf8') : ''\n\
             if (!/updateTag\\('posts'\\)/.test(src)) { console.error('FAIL app.test.js: createPost must call updateTag'); process.exit(1) }\n",
        ),
        (
            "input/package.json",
            r#"{"private": true, "scripts": {"build": "node build.js && node lint.js && node app.test.js", "build-only": "node build.js", "lint": "node lint.js"}}"#,
        ),
    ];
    for (path, content) in files {
        let file = eval.join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("eval folders");
        std::fs::write(file, content).expect("write an eval file");
    }
}

fn bench(cache: &Path, out: &Path, args: &[&str]) -> Run {
    let out = out.display().to_string();
    let mut all = vec!["run", "scripts/memory_hook_bench.rhai", "--out", &out, "--"];
    all.extend(args);
    let cache = cache.display().to_string();
    let env = [("HOST_CACHE_DIR", Some(cache.as_str())), ("ANTHROPIC_API_KEY", None), ("LLM_API_KEY", None)];
    host_in_with(&repo_root(), &all, &env)
}

fn manifest_settings(run: &Path) -> Value {
    let text = std::fs::read_to_string(run.join("manifest.json")).expect("manifest.json");
    serde_json::from_str::<Value>(&text).expect("JSON")["settings"].clone()
}

#[test]
fn setup_commit_pins_a_suite_from_a_bundle_and_run_takes_its_evals_in_both_layouts() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let suite = dir.path().join("suite");
    write_app_tests_eval(&suite.join("evals"), "000-add-update-tag");
    write_eval(&suite.join("evals"), "agent-001-update-tag", PROMPT, SOLUTION, "");
    let commit = commit_all(&suite, None);
    let bundle = dir.path().join("next-evals-oss.bundle");
    git(&suite, &["bundle", "create", &bundle.display().to_string(), "HEAD"]);
    let bundle = bundle.display().to_string();
    let cache = private_cache(dir.path());

    let setup = bench(&cache, &dir.path().join("setup"), &["setup", "--commit", &commit[..7], "--repo", &bundle]);
    setup.expect_code(0);
    assert!(setup.stderr.contains(&format!("eval suite: {bundle} at {commit}")), "{}", setup.stderr);
    assert!(setup.stderr.contains("2 evals in"), "{}", setup.stderr);

    // No --evals-dir and no --repo: the suite set up for next-evals-oss (the bundle's name).
    let run = dir.path().join("run");
    let args = ["run", "--all", "--configs", "baseline", "--install", "none", "--test-command", "node EVAL.ts"];
    let ran = bench(&cache, &run, &[&args[..], &["--app-test-command", "node app.test.js"]].concat());
    ran.expect_code(0);
    let results = duckdb(&format!(
        "SELECT eval_id, build_pass, lint_pass, test_pass, agent_end FROM '{}' ORDER BY eval_id",
        table(&run, "results")
    ));
    assert_eq!(
        results["rows"],
        json!([["000-add-update-tag", true, true, false, "ok"], ["agent-001-update-tag", true, true, true, "ok"]]),
        "the older layout is validated by its app's own scripts and test: the scripted model made no edit, so its \
         test fails as the model's failure, with the agent's run ending normally"
    );
    let failure =
        duckdb(&format!("SELECT test_error FROM '{}' WHERE eval_id = '000-add-update-tag'", table(&run, "results")));
    assert!(failure["rows"][0][0].as_str().is_some_and(|error| error.contains("FAIL app.test.js")), "{failure}");
    let settings = manifest_settings(&run);
    assert_eq!(settings["evals"], json!({"kind": "git", "repo": bundle, "commit": commit}));
    let recorded = settings["packages"].as_array().expect("packages");
    assert!(recorded.iter().any(|package| package["registry"] == "git" && package["commit"] == json!(commit)));
}

#[test]
fn setup_docs_for_a_version_before_16_2_takes_the_docs_folder_of_its_tag() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let nextjs = dir.path().join("next.js");
    for (path, content) in [
        (
            "docs/01-app/03-api-reference/04-functions/cookies.mdx",
            "---\ntitle: cookies\n---\n\n# cookies\n\nRead cookies.\n",
        ),
        ("docs/01-app/01-getting-started/01-installation.mdx", "# Installation\n\nInstall it.\n"),
        ("packages/next/package.json", "{}\n"),
    ] {
        let file = nextjs.join(path);
        std::fs::create_dir_all(file.parent().expect("a parent")).expect("folders");
        std::fs::write(file, content).expect("write");
    }
    let commit = commit_all(&nextjs, Some("v16.1.0"));
    let cache = private_cache(dir.path());
    let run = dir.path().join("run");
    let repo = nextjs.display().to_string();
    let docs = bench(&cache, &run, &["setup-docs", "--ref", "16.1.0", "--docs-repo", &repo]);
    docs.expect_code(0);
    assert!(docs.stderr.contains(&format!("2 docs from {repo} at v16.1.0 ({commit})")), "{}", docs.stderr);
    assert_eq!(
        manifest_settings(&run)["docs"],
        json!({"kind": "git", "repo": repo, "rev": "v16.1.0", "commit": commit})
    );
    let checkout =
        std::fs::read_dir(cache.join("git")).expect("git cache").flatten().find(|entry| entry.file_name() != "pins");
    let tree = checkout.expect("the checkout").path().join("v16.1.0/tree");
    assert!(tree.join("docs").is_dir() && !tree.join("packages").exists(), "only docs/ is checked out");
}

#[test]
fn docs_to_memories_output_writes_the_store_into_the_folder_named() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let docs = crate::memory_hook::docs(dir.path()).display().to_string();
    let store = dir.path().join("memories");
    let run = dir.path().join("run");
    let (out, store_text) = (run.display().to_string(), store.display().to_string());
    let args = ["run", "scripts/docs_to_memories.rhai", "--out", &out, "--", "extract", &docs, "--output", &store_text];
    host_in_with(&repo_root(), &args, &[]).expect_code(0);
    assert!(store.join("memories.corpus").is_file() && store.join("memories.jsonl").is_file());
    assert!(!run.join("memories.corpus").exists(), "the store is where --output says, not in the run directory");
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).expect("manifest")).expect("JSON");
    let exports = &manifest["exports"][0];
    assert_eq!(exports["folder"].as_str().map(PathBuf::from), Some(store.canonicalize().expect("store")));
    let files = exports["files"].as_array().expect("files");
    for file in ["memories.corpus", "memories.jsonl", "doc_index_cards.corpus"] {
        assert!(files.contains(&json!(file)) && store.join(file).is_file(), "{file} in {files:?}");
    }
}
