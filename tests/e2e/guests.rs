//! Guest modules end to end: the language strategies against their corpora through wasm, the
//! hostile-guest suite, arbitrary input through every strategy, and `host guest list/call`.

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{duckdb, host_in, host_in_with, repo_root, stable};

fn corpus_files() -> Vec<String> {
    let mut files = Vec::new();
    for language in ["typescript", "python", "go", "rust"] {
        let folder = repo_root().join("fixtures/imports").join(language);
        for entry in std::fs::read_dir(&folder).expect("corpus folder") {
            let name = entry.expect("corpus entry").file_name().to_string_lossy().into_owned();
            if !name.ends_with(".json") && !name.ends_with(".md") {
                files.push(format!("fixtures/imports/{language}/{name}"));
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_strategy_passes_its_corpus_through_its_wasm_guest() {
    let out = tempfile::tempdir().expect("run folder");
    let out_arg = out.path().display().to_string();
    host_in(&repo_root(), &["run", "scripts/examples/imports.rhai", "--out", &out_arg]).expect_code(0);
    let table = out.path().join("imports.parquet").display().to_string();
    let rows = duckdb(&format!(
        "SELECT language, count(*) AS files, count(*) FILTER (WHERE matches) AS matching \
         FROM '{table}' GROUP BY language ORDER BY language"
    ));
    let rows = rows["rows"].as_array().expect("rows");
    let languages: Vec<&str> = rows.iter().map(|row| row[0].as_str().expect("language")).collect();
    assert_eq!(languages, ["go", "javascript", "python", "rust", "typescript"]);
    for row in rows {
        assert_eq!(row[1], row[2], "a file differs from its expected imports: {row}");
    }
    let total: i64 = rows.iter().map(|row| row[1].as_i64().expect("count")).sum();
    assert_eq!(total as usize, corpus_files().len(), "every corpus file is routed to a guest");
    assert!(corpus_files().len() >= 32, "at least 8 files per language");
}

/// A loopback server that accepts LLM requests and never answers them.
fn silent_llm_server() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}/v1", listener.local_addr().expect("address"));
    let accepting = listener.try_clone().expect("listener");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in accepting.incoming().flatten() {
            held.push(stream);
        }
    });
    (listener, url)
}

fn attempts(run_dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(run_dir.join("attempts.json")).expect("attempts.json");
    serde_json::from_str::<Value>(&text).expect("JSON").as_array().expect("array").clone()
}

fn error_of(attempt: &Value) -> &str {
    assert_eq!(attempt["ok"], false, "expected a refusal: {attempt}");
    attempt["error"].as_str().expect("error text")
}

#[test]
fn hostile_guests_are_stopped_or_refused_and_the_host_keeps_serving() {
    let (_server, llm_url) = silent_llm_server();
    let out = tempfile::tempdir().expect("run folder");
    let out_arg = out.path().display().to_string();
    let tests = repo_root().join("tests");
    let run = host_in_with(
        &tests,
        &["run", "scripts/hostile.rhai", "--out", &out_arg],
        &[("LLM_BASE_URL", Some(&llm_url)), ("LLM_API_KEY", Some("test-key")), ("SECRET_TOKEN", Some("hunter2"))],
    );
    run.expect_code(0);
    let attempts = attempts(out.path());
    let [
        count1,
        count2,
        spin,
        count3,
        bomb,
        recurse,
        trap,
        huge,
        block,
        refused,
        granted,
        missing,
        echo,
        fuel,
        abi,
        ungranted,
    ] = attempts.as_slice()
    else {
        panic!("sixteen attempts expected: {attempts:?}");
    };

    // A stateless guest's instance is reused, and replaced after a trap.
    assert_eq!((&count1["output"], &count2["output"]), (&json!(1), &json!(2)));
    assert!(error_of(spin).contains("`spin` was stopped at its deadline of 1500 ms"), "{spin}");
    assert_eq!(count3["output"], json!(1), "a fresh instance after the trap");

    assert!(error_of(bomb).contains("`bomb` hit the memory limit of 48 MiB"), "{bomb}");
    assert!(error_of(recurse).contains("`recurse` exhausted its call stack"), "{recurse}");
    let trap = error_of(trap);
    assert!(trap.contains("`trap` panicked") && trap.contains("the hostile guest panics on purpose"), "{trap}");
    assert!(error_of(huge).contains("`huge` returned 8388617 bytes, over the 4 MiB limit"), "{huge}");
    assert!(
        error_of(block).contains("stopped at its deadline of 1500 ms while waiting in the host call `host:llm chat`"),
        "{block}"
    );

    // No file outside the granted folder, no directory listing, no environment, no clock.
    let seen = &refused["output"];
    assert_eq!(seen["file"], false, "{seen}");
    assert_eq!(seen["listing"], false, "{seen}");
    assert_eq!(seen["environment"], json!([]), "{seen}");
    assert_eq!(seen["clock_seconds"], 0, "{seen}");
    assert_eq!(granted["output"]["file"], true, "the scenario grants guests/hostile read-only: {granted}");

    assert!(
        error_of(missing).contains("has no function `missing`; it has `block`, `bomb`, `count`, `echo`"),
        "{missing}"
    );
    assert_eq!(echo["output"], json!({ "still": "serving" }));
    assert!(error_of(fuel).contains("`spin` ran out of fuel (1000000 units)"), "{fuel}");
    assert!(error_of(abi).contains("speaks ABI version 99, this host speaks 2"), "{abi}");
    let ungranted = error_of(ungranted);
    assert!(ungranted.contains("imports `host:llm`, which is not granted to it"), "{ungranted}");
    assert!(ungranted.contains("add \"llm\" to `capabilities` under [grants]"), "{ungranted}");

    // The manifest records each loaded guest's module hash, grants and how its calls went.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("manifest.json")).expect("manifest"))
            .expect("JSON");
    let hostile =
        manifest["guests"].as_array().expect("guests").iter().find(|g| g["name"] == "hostile").expect("hostile");
    assert_eq!(hostile["sha256"].as_str().map(str::len), Some(64));
    assert_eq!(hostile["grants"]["capabilities"], json!(["llm", "log"]));
    assert_eq!(hostile["calls"], 13);
    assert_eq!(hostile["violations"], 5, "spin, bomb, recurse, trap and block trap; huge and missing do not");

    // The guest's log line reached the run log, tagged with its name; no secret did.
    let log = std::fs::read_to_string(out.path().join("run.log")).expect("run.log");
    assert!(log.contains("[hostile] echo {\"still\":\"serving\"}"), "{log}");
    for file in ["run.log", "attempts.json", "manifest.json"] {
        let text = std::fs::read_to_string(out.path().join(file)).expect("run file");
        assert!(!text.contains("hunter2"), "{file} leaks an environment variable");
    }
}

/// Deterministic pseudo-random text: corpus fragments spliced with bytes from a small alphabet
/// of each language's punctuation, so inputs stay close to code.
fn arbitrary_sources(count: usize) -> Vec<Value> {
    let files = corpus_files();
    let texts: Vec<String> =
        files.iter().map(|file| std::fs::read_to_string(repo_root().join(file)).expect("corpus file")).collect();
    let alphabet: Vec<char> =
        "{}()[];:,.'\"`/*\\\n\t #<>=!$@_-aZ0éあ🦀import from use require export".chars().collect();
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..count)
        .map(|index| {
            let pick = index % files.len();
            let chars: Vec<char> = texts[pick].chars().collect();
            let cut = (next() as usize) % (chars.len() + 1);
            let mut text: String = chars[..cut].iter().collect();
            for _ in 0..(next() % 64) {
                text.push(alphabet[(next() as usize) % alphabet.len()]);
            }
            let resume = (next() as usize) % (chars.len() + 1);
            text.extend(&chars[resume..]);
            json!({ "path": files[pick], "content": text })
        })
        .collect()
}

#[test]
fn arbitrary_input_never_traps_a_strategy_guest() {
    let dir = tempfile::tempdir().expect("scratch");
    let inputs = dir.path().join("inputs.jsonl");
    let mut file = std::fs::File::create(&inputs).expect("inputs file");
    let sources = arbitrary_sources(2_000);
    for source in &sources {
        writeln!(file, "{source}").expect("write input");
    }
    let out = dir.path().join("run").display().to_string();
    let inputs_arg = inputs.display().to_string();
    let guests_dir = repo_root().join("guests").display().to_string();
    host_in_with(
        &repo_root().join("tests"),
        &["run", "scripts/guest_fuzz.rhai", "--out", &out, "--", "--inputs", &inputs_arg],
        &[("HOST_GUEST_PATH", Some(&guests_dir))],
    )
    .expect_code(0);
    let summary: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run/fuzz.json")).expect("fuzz.json"))
            .expect("JSON");
    assert_eq!(summary["executions"], 2_000);
    assert_eq!(summary["errors"], json!([]), "no input may trap or fail a strategy");
}

#[test]
fn guest_list_shows_every_first_party_strategy() {
    let run = host_in(&repo_root(), &["guest", "list"]);
    run.expect_code(0);
    insta::assert_snapshot!(stable(&run.stdout, &repo_root()));
}

#[test]
fn guest_call_answers_one_source_file() {
    let run = host_in(
        &repo_root(),
        &["guest", "call", "lang-python", "extract_imports", "--source", "fixtures/imports/python/blog_views.py"],
    );
    run.expect_code(0);
    let output: Value = serde_json::from_str(&run.stdout).expect("JSON on stdout");
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("fixtures/imports/python/blog_views.py.json")).expect("expected"),
    )
    .expect("JSON");
    assert_eq!(output, expected);
}

#[test]
fn guest_call_reports_bad_input_as_the_guests_failure() {
    let run = host_in(&repo_root(), &["guest", "call", "lang-typescript", "extract_imports", r#"{"path": 1}"#]);
    run.expect_code(2);
    insta::assert_snapshot!(stable(&run.stderr, &repo_root()));
}

#[test]
fn guest_call_names_an_unknown_guest_and_where_it_looked() {
    let run =
        host_in_with(&repo_root(), &["guest", "call", "lang-cobol", "extract_imports"], &[("HOST_GUEST_PATH", None)]);
    run.expect_code(2);
    insta::assert_snapshot!(stable(&run.stderr, &repo_root()));
}

#[test]
fn guest_call_rejects_input_that_is_not_json() {
    let run = host_in(&repo_root(), &["guest", "call", "lang-go", "extract_imports", "{path:"]);
    run.expect_code(2);
    assert!(run.stderr.contains("the INPUT argument is not valid JSON"), "{}", run.stderr);
}

#[test]
fn a_script_with_no_guest_folder_is_told_so_once_and_a_project_with_one_is_not() {
    let project = crate::support::TempProject::new();
    project.write(
        "scripts/route.rhai",
        "let found = [guest::for_path(\"a.py\"), guest::for_path(\"b.ts\"), guest::for_path(\"c.py\")];\nresults::check(\"nothing routed\", found.all(|g| g == ()));\n",
    );
    let run = project.host_with_env(&["run", "scripts/route.rhai"], &[("HOST_GUEST_PATH", None)]);
    run.expect_code(0);
    assert_eq!(run.stderr.matches("warning: no guest serves any file").count(), 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("hint: run the script inside the project that holds `guests/`, or set HOST_GUEST_PATH")
    );

    project.write("guests/README.md", "guests go here\n");
    let run = project.host_with_env(&["run", "scripts/route.rhai"], &[("HOST_GUEST_PATH", None)]);
    run.expect_code(0);
    assert!(
        !run.stderr.contains("no guest serves any file"),
        "a folder without a guest for .py is not a warning: {}",
        run.stderr
    );
}

#[test]
fn the_first_build_of_a_new_guest_that_changes_the_workspaces_lock_file_says_so() {
    let project = crate::support::TempProject::new();
    project.write("Cargo.lock", "# the project's lock file\n");
    project.write("guests/lang-kotlin/Cargo.toml", "[package]\nname = \"lang-kotlin\"\nversion = \"0.1.0\"\n");
    project.write("guests/lang-kotlin/guest.toml", "name = \"lang-kotlin\"\nextensions = [\"kt\"]\n");
    project.write("guests/lang-kotlin/src/lib.rs", "");
    // A stand-in for cargo that resolves the new member into the lock file, then fails to compile.
    let lock = project.path().join("Cargo.lock");
    project.write(
        "stand-in/cargo",
        &format!(
            "#!/bin/sh\nprintf '[[package]]\\nname = \"lang-kotlin\"\\n' >> '{}'\necho 'error: the stand-in compiles nothing' >&2\nexit 101\n",
            lock.display()
        ),
    );
    let cargo = project.path().join("stand-in/cargo");
    std::process::Command::new("chmod").arg("+x").arg(&cargo).status().expect("chmod");
    let cargo = cargo.display().to_string();
    let env = [("CARGO", Some(cargo.as_str())), ("HOST_GUEST_PATH", None)];

    let run = project.host_with_env(&["guest", "call", "lang-kotlin", "extract_imports"], &env);
    assert_ne!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("the stand-in compiles nothing"), "{}", run.stderr);
    let note = format!("note: building guest `lang-kotlin` changed `{}`", lock.display());
    assert!(run.stderr.contains(&note), "{}", run.stderr);
    assert!(project.read("Cargo.lock").contains("name = \"lang-kotlin\""));

    // The lock file already lists it: the next build leaves it alone and says nothing of it.
    std::fs::write(&cargo, "#!/bin/sh\necho 'error: the stand-in compiles nothing' >&2\nexit 101\n")
        .expect("rewrite the stand-in");
    let again = project.host_with_env(&["guest", "call", "lang-kotlin", "extract_imports"], &env);
    assert!(again.stderr.contains("the stand-in compiles nothing"), "{}", again.stderr);
    assert!(!again.stderr.contains("changed `"), "{}", again.stderr);
}
