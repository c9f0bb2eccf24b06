//! Benchmark (not a test) for guest modules: per-call overhead on a reused and on a fresh
//! instance, and import-extraction throughput through each language guest against the same
//! code compiled natively. Results go to BENCHMARKS.md by hand.
//!
//! Run: `cargo bench --bench guests` from the repository root (a release build; guests are
//! built from source on first use, as release wasm).

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use abi::imports::{Imports, Source};
use serde_json::{Value, json};

type Native = fn(Source) -> Result<Imports, abi::Failure>;

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
    let source = Source { path: "server_main.go".into(), content: small.clone() };
    let wasm = per_call(21, 500, || {
        go.call("extract_imports", &input).expect("extract");
    });
    let wasm_fresh = per_call(21, 50, || {
        go.call_fresh("extract_imports", &input).expect("extract");
    });
    let native = per_call(21, 500, || {
        lang_go::extract_imports(source.clone()).expect("extract");
    });
    println!("extract_imports on one {} KB Go file", small.len() / 1024);
    println!("  native {native:.1} µs, guest reused {wasm:.1} µs, guest fresh {wasm_fresh:.1} µs");
}

fn throughput(registry: &host::wasm::Registry, root: &Path) {
    println!("import-extraction throughput (corpus repeated to ~4 MB per language)");
    println!("| language | native MB/s | guest MB/s | guest / native |");
    println!("|---|---:|---:|---:|");
    for (language, guest_name, native) in LANGUAGES {
        let (path, content) = corpus_blob(root, language, 4 << 20);
        let megabytes = content.len() as f64 / 1e6;
        let guest = registry.load(guest_name).expect("guest");
        let input = json!({ "path": path, "content": content });
        let source = Source { path: path.clone(), content: content.clone() };
        let native_imports = native(source.clone()).expect("native").imports.len();
        let guest_imports =
            guest.call("extract_imports", &input).expect("guest")["imports"].as_array().map_or(0, Vec::len);
        assert_eq!(native_imports, guest_imports, "native and guest disagree on {language}");
        let native_seconds = per_call(7, 1, || {
            native(source.clone()).expect("native");
        }) / 1e6;
        let guest_seconds = per_call(7, 1, || {
            guest.call("extract_imports", &input).expect("guest");
        }) / 1e6;
        let (native_rate, guest_rate) = (megabytes / native_seconds, megabytes / guest_seconds);
        println!("| {language} | {native_rate:.1} | {guest_rate:.1} | {:.2} |", guest_rate / native_rate);
    }
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
