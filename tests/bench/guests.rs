//! Benchmark (not a test) for guest modules: per-call overhead on a reused and on a fresh
//! instance, and import-extraction throughput through each language guest against the same
//! code compiled natively. Results go to BENCHMARKS.md by hand.
//!
//! Both sides are timed on work they must do: native code borrows the source (no copy), and a
//! guest call is everything from the host's JSON value to its decoded reply. Guests are timed
//! both ways the ABI can carry the source: `content` as raw text (what every call does) and as
//! a JSON string (the general form, and how every call went before raw text). The three are
//! timed in turn, sample by sample, so that load from elsewhere weighs on all of them alike.
//!
//! Run: `cargo bench --bench guests` from the repository root (a release build; guests are
//! built from source on first use, as release wasm).

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use abi::imports::{Imports, Source};
use host::wasm::Input;
use serde_json::{Value, json};

type Native = for<'a> fn(Source<'a>) -> Result<Imports, abi::Failure>;

const LANGUAGES: [(&str, &str, Native); 4] = [
    ("typescript", "lang-typescript", lang_typescript::extract_imports),
    ("python", "lang-python", lang_python::extract_imports),
    ("go", "lang-go", lang_go::extract_imports),
    ("rust", "lang-rust", lang_rust::extract_imports),
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("host sits in the repository root").to_path_buf()
}

fn main() {
    let root = repo_root();
    let scratch = host::commands::scratch_capabilities(&root, false).expect("capabilities");
    let registry = &scratch.capabilities.guests;
    overhead(registry, &root);
    throughput(registry, &root);
}

/// Median of `samples` timings of `work`, each over `batch` calls, in microseconds per call.
fn per_call(samples: usize, batch: usize, mut work: impl FnMut()) -> f64 {
    let mut timings: Vec<Duration> = (0..samples)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..batch {
                work();
            }
            start.elapsed() / batch as u32
        })
        .collect();
    timings.sort();
    timings[timings.len() / 2].as_secs_f64() * 1e6
}

/// Medians, in seconds, of `samples` timings of each of `works`, taken in turn: on a shared
/// machine that gets busier or quieter part way, every side is slowed alike.
fn interleaved<const N: usize>(samples: usize, mut works: [&mut dyn FnMut(); N]) -> [f64; N] {
    let mut timings: [Vec<Duration>; N] = std::array::from_fn(|_| Vec::with_capacity(samples));
    for _ in 0..samples {
        for (work, timings) in works.iter_mut().zip(&mut timings) {
            let start = Instant::now();
            work();
            timings.push(start.elapsed());
        }
    }
    timings.map(|mut timings| {
        timings.sort();
        timings[timings.len() / 2].as_secs_f64()
    })
}

fn overhead(registry: &host::wasm::Registry, root: &Path) {
    let hostile = registry.load(&root.join("tests/guests/hostile").display().to_string()).expect("hostile guest");
    let reused = per_call(21, 2_000, || {
        hostile.call("count", &Value::Null).expect("count");
    });
    let fresh = per_call(21, 50, || {
        hostile.call_fresh("count", &Value::Null).expect("count");
    });
    println!("per-call overhead (empty call, JSON null in, a number out)");
    println!("  reused instance: {reused:.1} µs/call");
    println!("  fresh instance:  {fresh:.1} µs/call");

    let go = registry.load("lang-go").expect("lang-go");
    let small = std::fs::read_to_string(root.join("fixtures/imports/go/server_main.go")).expect("corpus file");
    let input = json!({ "path": "server_main.go", "content": small });
    let wasm = per_call(21, 500, || {
        go.call("extract_imports", &input).expect("extract");
    });
    let wasm_fresh = per_call(21, 50, || {
        go.call_fresh("extract_imports", &input).expect("extract");
    });
    let native = per_call(21, 500, || {
        lang_go::extract_imports(borrowed("server_main.go", &small)).expect("extract");
    });
    println!("extract_imports on one {} KB Go file", small.len() / 1024);
    println!("  native {native:.1} µs, guest reused {wasm:.1} µs, guest fresh {wasm_fresh:.1} µs");
}

fn throughput(registry: &host::wasm::Registry, root: &Path) {
    println!("import-extraction throughput (corpus repeated to ~4 MB per language, one call)");
    println!("| language | native MB/s | guest MB/s, raw text | guest / native | guest MB/s, JSON text |");
    println!("|---|---:|---:|---:|---:|");
    for (language, guest_name, native) in LANGUAGES {
        let (path, content) = corpus_blob(root, language, 4 << 20);
        let megabytes = content.len() as f64 / 1e6;
        let guest = registry.load(guest_name).expect("guest");
        let input = json!({ "path": path, "content": content });
        let native_imports = native(borrowed(&path, &content)).expect("native").imports;
        let guest_imports =
            |output: Value| -> Vec<String> { serde_json::from_value(output["imports"].clone()).expect("imports") };
        let raw_imports = guest_imports(guest.call("extract_imports", &input).expect("guest"));
        // As JSON, the text is escaped on every call, as every call did before raw text.
        let as_json = || guest.call_input("extract_imports", &Input::json(&input).expect("JSON input"));
        let json_imports = guest_imports(as_json().expect("guest"));
        assert_eq!(native_imports, raw_imports, "native and guest disagree on {language}");
        assert_eq!(raw_imports, json_imports, "raw and JSON text disagree on {language}");
        let [native_seconds, raw_seconds, json_seconds] = interleaved(
            11,
            [
                &mut || drop(native(borrowed(&path, &content)).expect("native")),
                &mut || drop(guest.call("extract_imports", &input).expect("guest")),
                &mut || drop(as_json().expect("guest")),
            ],
        );
        let rate = |seconds: f64| megabytes / seconds;
        println!(
            "| {language} | {:.1} | {:.1} | {:.2} | {:.1} |",
            rate(native_seconds),
            rate(raw_seconds),
            native_seconds / raw_seconds,
            rate(json_seconds)
        );
    }
}

/// A source that borrows its text, as a guest's does.
fn borrowed<'a>(path: &'a str, content: &'a str) -> Source<'a> {
    Source { path: Cow::Borrowed(path), content: Cow::Borrowed(content) }
}

/// The language's corpus files, concatenated and repeated to at least `bytes`, with the first
/// file's extension so the guest picks the same dialect.
fn corpus_blob(root: &Path, language: &str, bytes: usize) -> (String, String) {
    let folder = root.join("fixtures/imports").join(language);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&folder)
        .expect("corpus folder")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| !matches!(path.extension().and_then(|e| e.to_str()), Some("json" | "md")))
        .collect();
    files.sort();
    let one: String = files.iter().map(|file| std::fs::read_to_string(file).expect("corpus file") + "\n").collect();
    let content = one.repeat(bytes / one.len() + 1);
    let extension = files[0].extension().and_then(|e| e.to_str()).unwrap_or("txt");
    (format!("bench.{extension}"), content)
}
