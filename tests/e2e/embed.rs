//! The `embed` capability: sentence-transformers equivalence on the real weights, the on-disk
//! cache, and the remote backend against a loopback server.

use std::sync::Arc;

use algorithms::search::vector::cosine;
use host::capabilities::embed::{
    Backend, CachedEmbedder, DEFAULT_BATCH, EmbedRequest, EmbedRouter, Embedder, LocalEmbedder, RemoteConfig,
};
use host::capabilities::log::ConsoleLog;
use host::console::{Console, Style};
use serde_json::Value;

use crate::fake_llm::FakeLlm;
use crate::support::{host_in_with, repo_root};

fn log() -> Arc<ConsoleLog> {
    Arc::new(ConsoleLog::new(Arc::new(Console::new(Style::Plain, false))))
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// The real model, found (or fetched) the way `host run` finds it, on `backend`.
fn on(backend: Backend) -> Arc<LocalEmbedder> {
    Arc::new(LocalEmbedder::new(None, backend, host::project::cache_root(), Arc::new(|line: &str| eprintln!("{line}"))))
}

/// The real model as `host run` loads it by default.
fn local() -> Arc<LocalEmbedder> {
    on(Backend::Auto)
}

fn reference() -> Vec<(String, Vec<u32>, Vec<f32>)> {
    let text = std::fs::read_to_string(repo_root().join("fixtures/embeddings/minilm_reference.json")).expect("fixture");
    let fixture: Value = serde_json::from_str(&text).expect("fixture JSON");
    fixture["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|case| {
            let ids = case["ids"].as_array().expect("ids").iter().map(|id| id.as_u64().expect("id") as u32).collect();
            let vector =
                case["vector"].as_array().expect("vector").iter().map(|v| v.as_f64().expect("float") as f32).collect();
            (case["text"].as_str().expect("text").to_string(), ids, vector)
        })
        .collect()
}

/// Tokens, then vectors batched and one by one, against the independent numpy forward pass.
fn matches_the_reference(backend: Backend) {
    let cases = reference();
    assert!(cases.len() >= 20);
    assert!(cases.iter().any(|(_, ids, _)| ids.len() == 256), "one sentence must hit the 256-token truncation");
    let model = on(backend).model().expect("the model loads");
    let expected_backend = match backend {
        Backend::Candle => "candle",
        _ => "onnxruntime",
    };
    assert_eq!(model.backend.name, expected_backend, "{:?}", model.backend);
    let texts: Vec<String> = cases.iter().map(|(text, _, _)| text.clone()).collect();

    let token_ids = model.token_ids(&texts).expect("tokenize");
    for ((text, expected, _), ids) in cases.iter().zip(&token_ids) {
        assert_eq!(ids, expected, "token ids differ for {text:?}");
    }

    // All at once (sorted, padded batches) and one by one must both match.
    let batched = model.embed(&texts, DEFAULT_BATCH).expect("embed the batch");
    for ((text, _, expected), vector) in cases.iter().zip(&batched) {
        assert_eq!(vector.len(), 384);
        let similarity = cosine(vector, expected).expect("equal dimensions");
        assert!(similarity >= 0.9999, "{backend:?}: cosine {similarity} for {text:?}");
    }
    for (text, _, expected) in cases.iter().take(6) {
        let single = model.embed(std::slice::from_ref(text), 1).expect("embed one");
        assert!(cosine(&single[0], expected).expect("equal dimensions") >= 0.9999, "{backend:?}: {text:?} alone");
    }
}

#[test]
fn onnx_runtime_matches_the_independent_numpy_forward_pass_on_every_reference_sentence() {
    matches_the_reference(Backend::Onnxruntime);
}

#[test]
#[cfg_attr(not(feature = "candle"), ignore = "candle is an opt-in backend: cargo test --features candle")]
fn candle_matches_the_independent_numpy_forward_pass_on_every_reference_sentence() {
    matches_the_reference(Backend::Candle);
}

/// A library that cannot be loaded, for `HOST_ONNXRUNTIME_LIB`.
fn broken_onnxruntime(dir: &std::path::Path) -> String {
    let not_a_library = dir.join("libonnxruntime.so");
    std::fs::write(&not_a_library, b"not a shared library").expect("write");
    not_a_library.to_str().expect("path").to_string()
}

#[test]
#[cfg_attr(not(feature = "candle"), ignore = "candle is an opt-in backend: cargo test --features candle")]
fn without_onnx_runtime_auto_falls_back_to_candle_with_a_warning_and_onnxruntime_is_an_error() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let library = broken_onnxruntime(dir.path());
    let broken = [("HOST_ONNXRUNTIME_LIB", Some(library.as_str())), ("HOST_EMBED_BACKEND", None)];

    let auto = host_in_with(dir.path(), &["model"], &broken);
    auto.expect_code(0);
    assert!(auto.stderr.contains("warning: embedding with candle"), "{}", auto.stderr);
    assert!(auto.stderr.contains("runs on candle 0.11.1"), "{}", auto.stderr);

    let strict = host_in_with(dir.path(), &["model", "--embed-backend", "onnxruntime"], &broken);
    strict.expect_code(2);
    assert!(strict.stderr.contains("ONNX Runtime is unavailable: cannot load ONNX Runtime"), "{}", strict.stderr);
    assert!(strict.stderr.contains("hint: `--embed-backend candle`"), "{}", strict.stderr);

    let working = host_in_with(dir.path(), &["model"], &[("HOST_ONNXRUNTIME_LIB", None), ("HOST_EMBED_BACKEND", None)]);
    working.expect_code(0);
    assert!(working.stderr.contains("runs on onnxruntime 1.31.0"), "{}", working.stderr);
}

#[test]
#[cfg_attr(feature = "candle", ignore = "shows the default build, without the candle feature")]
fn a_default_build_without_onnx_runtime_says_how_to_get_a_backend_and_asks_for_candle_in_vain() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let library = broken_onnxruntime(dir.path());
    let broken = [("HOST_ONNXRUNTIME_LIB", Some(library.as_str())), ("HOST_EMBED_BACKEND", None)];

    let auto = host_in_with(dir.path(), &["model"], &broken);
    auto.expect_code(2);
    assert!(auto.stderr.contains("ONNX Runtime is unavailable: cannot load ONNX Runtime"), "{}", auto.stderr);
    assert!(auto.stderr.contains("hint: point HOST_ONNXRUNTIME_LIB at a working libonnxruntime"), "{}", auto.stderr);
    assert!(auto.stderr.contains("`--features candle`"), "{}", auto.stderr);
    assert!(!auto.stderr.contains("warning: embedding with candle"), "{}", auto.stderr);

    let candle = host_in_with(dir.path(), &["model", "--embed-backend", "candle"], &broken);
    candle.expect_code(2);
    assert!(candle.stderr.contains("this build of host has no candle backend"), "{}", candle.stderr);
    assert!(candle.stderr.contains("cargo build --features candle"), "{}", candle.stderr);
}

#[test]
fn a_rerun_reads_vectors_from_the_cache_and_a_corrupt_entry_is_recomputed() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let cached = CachedEmbedder::new(local(), dir.path(), log());
    let runtime = runtime();
    let texts = vec!["first text".to_string(), "second text".to_string()];
    let fresh = runtime.block_on(cached.embed(texts.clone(), None)).expect("computed");
    assert_eq!((fresh.cached, fresh.dimension), (0, 384));
    let again = runtime.block_on(cached.embed(texts.clone(), None)).expect("cached");
    assert_eq!(again.cached, 2);
    assert_eq!(again.vectors, fresh.vectors, "cached vectors are bit-identical");

    let files: Vec<_> = walk(dir.path());
    assert_eq!(files.len(), 2);
    std::fs::write(&files[0], b"garbage").expect("corrupt an entry");
    let repaired = runtime.block_on(cached.embed(texts, None)).expect("recomputed");
    assert_eq!(repaired.cached, 1);
    assert_eq!(repaired.vectors, fresh.vectors);
}

fn walk(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(folder).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn odd_input_gets_a_vector_not_a_panic() {
    let model = local().model().expect("the model loads");
    let megabyte = "memory ".repeat(150_000);
    let texts = vec![String::new(), megabyte, "\u{0}\u{FFFD}\u{200B}".to_string()];
    let vectors = model.embed(&texts, DEFAULT_BATCH).expect("embedded");
    for vector in vectors {
        let norm: f32 = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "norm {norm}");
    }
}

#[test]
fn the_remote_backend_batches_by_100_and_restores_the_order() {
    let server = FakeLlm::start();
    let base = server.openai_base();
    let config = RemoteConfig::from_lookup(move |name| match name {
        "LLM_BASE_URL" => Some(base.clone()),
        "LLM_API_KEY" => Some("sk-embed-test".into()),
        _ => None,
    });
    assert_eq!(config.model, "text-embedding-3-small");
    let dir = tempfile::tempdir().expect("temporary directory");
    let router = EmbedRouter::new(local(), config, dir.path().to_path_buf(), log(), Default::default());
    let texts: Vec<String> = (0..250).map(|i| format!("text number {i}")).collect();
    let request = EmbedRequest { texts: texts.clone(), model: Some("remote".into()), batch: None };
    let runtime = runtime();
    let embeddings = runtime.block_on(router.embed(request.clone())).expect("remote vectors");
    assert_eq!(embeddings.model, "openai:text-embedding-3-small");
    for (text, vector) in texts.iter().zip(&embeddings.vectors) {
        assert_eq!(vector, &crate::fake_llm::fake_embedding(text), "vector for {text}");
    }
    let sizes: Vec<usize> =
        server.seen().iter().map(|seen| seen.body["input"].as_array().map_or(0, Vec::len)).collect();
    assert_eq!(sizes, [100, 100, 50]);
    let again = runtime.block_on(router.embed(request)).expect("cached");
    assert_eq!(again.cached, 250);
    assert_eq!(server.seen().len(), 3, "a rerun sends nothing");
}

#[test]
fn vectors_cached_from_one_endpoint_are_not_reused_for_another_serving_the_same_model_name() {
    let (first, second) = (FakeLlm::start(), FakeLlm::start());
    let dir = tempfile::tempdir().expect("temporary directory");
    let runtime = runtime();
    let request = EmbedRequest { texts: vec!["pool size".into()], model: Some("remote".into()), batch: None };
    for server in [&first, &second, &first] {
        let base = server.openai_base();
        let config = RemoteConfig::from_lookup(move |name| match name {
            "OC_EMBED_BASE_URL" => Some(base.clone()),
            "OC_EMBED_API_KEY" => Some("sk-embed-test".into()),
            _ => None,
        });
        let router = EmbedRouter::new(local(), config, dir.path().to_path_buf(), log(), Default::default());
        runtime.block_on(router.embed(request.clone())).expect("remote vectors");
    }
    assert_eq!((first.seen().len(), second.seen().len()), (1, 1), "each endpoint is asked once, then cached");
}

#[test]
fn a_run_that_embeds_records_the_weights_it_used() {
    let project = crate::support::TempProject::new();
    project.write(
        "scripts/e.rhai",
        "let v = embed::text(\"hello\");\nresults::check(\"384 dimensions\", v.len() == 384);\n",
    );
    project.host(&["run", "scripts/e.rhai", "--run-id", "e"]).expect_code(0);
    let manifest: Value = serde_json::from_str(&project.read("runs/e/e/manifest.json")).expect("manifest");
    let models = manifest["models"].as_array().expect("models");
    assert_eq!(models.len(), 1);
    assert_eq!(models[0]["id"], "sentence-transformers/all-MiniLM-L6-v2");
    let sha = models[0]["weights_sha256"].as_str().expect("sha256");
    assert_eq!(sha.len(), 64);
    let weights = std::path::Path::new(models[0]["path"].as_str().expect("path")).join("model.safetensors");
    let expected = host::capabilities::fs::sha256_hex(&std::fs::read(weights).expect("weights"));
    assert_eq!(sha, expected);
    // And the runtime that computed the vectors, down to its library's bytes.
    let backend = &models[0]["backend"];
    assert_eq!((backend["name"].as_str(), backend["version"].as_str()), (Some("onnxruntime"), Some("1.31.0")));
    let library = std::fs::read(backend["library"].as_str().expect("library path")).expect("library");
    assert_eq!(backend["library_sha256"].as_str(), Some(host::capabilities::fs::sha256_hex(&library).as_str()));

    // A rerun served entirely from the embedding cache still names the model it relied on.
    project.host(&["run", "scripts/e.rhai", "--run-id", "again"]).expect_code(0);
    let again: Value = serde_json::from_str(&project.read("runs/e/again/manifest.json")).expect("manifest");
    assert_eq!(again["models"][0]["id"], "sentence-transformers/all-MiniLM-L6-v2");
}

#[test]
fn a_later_process_loads_the_prepared_graph_and_embeds_bit_for_bit_as_the_built_one() {
    let project = crate::support::TempProject::new();
    project.write(
        "scripts/e.rhai",
        "results::write_json(\"vectors.json\", embed::texts([\"revalidate after a mutation\", \"cookies() is async in Next 15\", \"x\"]));\n",
    );
    let cache = tempfile::tempdir().expect("a cache of its own, with no prepared model");
    let cache_dir = cache.path().to_str().expect("path");
    let run = |id: &str| -> (Value, Value) {
        // Vectors computed, not read from the embedding cache.
        let _ = std::fs::remove_dir_all(cache.path().join("embeddings"));
        project
            .host_with_env(&["run", "scripts/e.rhai", "--run-id", id], &[("HOST_CACHE_DIR", Some(cache_dir))])
            .expect_code(0);
        let manifest: Value =
            serde_json::from_str(&project.read(&format!("runs/e/{id}/manifest.json"))).expect("manifest");
        let vectors: Value =
            serde_json::from_str(&project.read(&format!("runs/e/{id}/vectors.json"))).expect("vectors");
        (manifest["models"][0]["backend"].clone(), vectors)
    };
    let (built_by, built) = run("built");
    assert_eq!(built_by["name"], "onnxruntime");
    assert!(built_by.get("prepared_model").is_none(), "the first process builds the graph: {built_by}");
    let prepared: Vec<_> =
        std::fs::read_dir(cache.path().join("models/prepared")).expect("prepared").flatten().collect();
    assert_eq!(prepared.len(), 1, "it leaves one prepared model, no temporary file");

    let (loaded_by, loaded) = run("prepared");
    let path = loaded_by["prepared_model"].as_str().expect("the second process names the prepared model it loaded");
    assert_eq!(std::path::Path::new(path), prepared[0].path());
    assert_eq!(loaded, built, "the same vectors, bit for bit");

    // A damaged prepared model is built again, not an error.
    std::fs::write(prepared[0].path(), b"not a model").expect("damage it");
    let (rebuilt_by, rebuilt) = run("rebuilt");
    assert!(rebuilt_by.get("prepared_model").is_none(), "{rebuilt_by}");
    assert_eq!(rebuilt, built);
    assert!(std::fs::metadata(prepared[0].path()).expect("replaced").len() > 1_000_000, "and replaced");
}
