//! Benchmark (not a test) for the retrieval capabilities: hybrid search latency and tantivy
//! indexing throughput (local embeddings are `tests/bench/embed.rs`). Results go to
//! BENCHMARKS.md by hand.
//!
//! Run: `cargo bench --bench retrieval` (a release build). At
//! 100k chunks it also writes the vectors, queries and vector-leg top 24 to `target/anchor-data/`
//! for the FAISS anchor, `tests/bench/faiss_anchor.py`.

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

#[path = "words.rs"]
mod words;
use words::WORDS;

use std::io::Write;
use std::time::Instant;

use algorithms::search::pipeline::{QueryOptions, query};
use algorithms::search::vector::{Scan, VectorHit, VectorStore, top_k_of};
use algorithms::search::{Corpus, Document};
use host::capabilities::search::text_index::{TextIndex, TextIndexOptions};

fn main() {
    hybrid_latency();
    tantivy_indexing();
    println!("peak RSS: {} MiB", peak_rss_kib() / 1024);
}

/// Deterministic pseudo-random numbers (xorshift), so every run measures the same data.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn unit(&mut self) -> f32 {
        (self.next() % 2_000_001) as f32 / 1_000_000.0 - 1.0
    }
}

/// Sentences over 24 words for the tantivy indexing measurement.
fn sentence(random: &mut Random, words: usize) -> String {
    (0..words).map(|_| WORDS[(random.next() % WORDS.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
}

/// Text over a 5,000-word vocabulary with Zipf-like frequencies, as natural text has: a few
/// words are everywhere, most are rare.
fn zipf_text(random: &mut Random, words: usize) -> String {
    (0..words)
        .map(|_| {
            let uniform = (random.next() % 1_000_000) as f64 / 1_000_000.0;
            format!("w{}", (5_000f64.powf(uniform) as usize).saturating_sub(1))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    sorted[((p * sorted.len() as f64).ceil() as usize).saturating_sub(1)]
}

fn hybrid_latency() {
    let mut random = Random(42);
    for size in [1_000, 10_000, 100_000] {
        let documents: Vec<Document> = (0..size)
            .map(|i| {
                let mut vector: Vec<f32> = (0..384).map(|_| random.unit()).collect();
                let norm = vector.iter().map(|v| v * v).sum::<f32>().sqrt();
                vector.iter_mut().for_each(|v| *v /= norm);
                Document {
                    id: format!("c{i}"),
                    text: zipf_text(&mut random, 60),
                    vector: Some(vector),
                    age_days: Some((i % 42) as f64),
                    meta: Default::default(),
                }
            })
            .collect();
        let corpus = Corpus::new(documents).expect("corpus");
        let store = corpus.vectors().expect("the corpus has vectors");
        // Built here rather than by the first query, so that the timings below are steady state.
        let started = Instant::now();
        let int8_copy = store.prepare_prefilter();
        let build_ms = started.elapsed().as_secs_f64() * 1000.0;
        let options = QueryOptions::default();
        let (mut total, mut vector_leg, mut keyword_leg) = (Vec::new(), Vec::new(), Vec::new());
        let mut queries = Vec::new();
        for _ in 0..100 {
            let text = zipf_text(&mut random, 2);
            let vector: Vec<f32> = (0..384).map(|_| random.unit()).collect();
            let started = Instant::now();
            query(&corpus, &text, Some(&vector), &options).expect("query");
            total.push(started.elapsed().as_secs_f64() * 1000.0);
            let started = Instant::now();
            corpus.nearest(&vector, Some(24)).expect("vector leg");
            vector_leg.push(started.elapsed().as_secs_f64() * 1000.0);
            let started = Instant::now();
            corpus.keyword(&text, &options.keyword, Some(24)).expect("keyword leg");
            keyword_leg.push(started.elapsed().as_secs_f64() * 1000.0);
            queries.push(vector);
        }
        let vector_mean = vector_leg.iter().sum::<f64>() / vector_leg.len() as f64;
        for list in [&mut total, &mut vector_leg, &mut keyword_leg] {
            list.sort_by(f64::total_cmp);
        }
        println!(
            "hybrid query, {size:>6} chunks x 384: p50 {:.2} ms, p99 {:.2} ms (vector leg p50 {:.2} ms, keyword leg p50 {:.2} ms; 100 queries)",
            percentile(&total, 0.5),
            percentile(&total, 0.99),
            percentile(&vector_leg, 0.5),
            percentile(&keyword_leg, 0.5)
        );
        let (found, exact) = vector_leg_check(store, &queries);
        println!(
            "  vector leg: {:.0} queries/s (mean {vector_mean:.2} ms), p99 {:.2} ms; {}; top 24 = the f32 scan's for {exact}/{} queries",
            1000.0 / vector_mean,
            percentile(&vector_leg, 0.99),
            describe_scans(&found, size),
            queries.len()
        );
        match int8_copy {
            Some(bytes) => println!("  int8 copy: {:.1} MB, built in {build_ms:.1} ms", bytes as f64 / 1e6),
            None => println!("  int8 copy: none (this size takes the f32 scan)"),
        }
        if size == 100_000 {
            write_anchor_data(store, &queries, &found);
        }
    }
}

/// For each query, untimed: the vector leg's hits and how they were found, and whether they
/// are the f32 scan's (the same documents and score bits).
fn vector_leg_check(store: &VectorStore, queries: &[Vec<f32>]) -> (Vec<(Vec<VectorHit>, Scan)>, usize) {
    let bits = |hits: &[VectorHit]| hits.iter().map(|hit| (hit.doc, hit.score.to_bits())).collect::<Vec<_>>();
    let found: Vec<(Vec<VectorHit>, Scan)> =
        queries.iter().map(|query| store.top_k_traced(query, 24).expect("vector leg")).collect();
    let exact = queries
        .iter()
        .zip(&found)
        .filter(|(query, (hits, _))| bits(hits) == bits(&top_k_of(&store.scores(query).expect("scores"), 24)))
        .count();
    (found, exact)
}

fn describe_scans(found: &[(Vec<VectorHit>, Scan)], size: usize) -> String {
    let mut rescored: Vec<usize> = found
        .iter()
        .filter_map(|(_, scan)| match scan {
            Scan::Prefiltered { rescored } => Some(*rescored),
            Scan::Exhaustive => None,
        })
        .collect();
    rescored.sort_unstable();
    match (rescored.get(rescored.len() / 2), rescored.last()) {
        (Some(median), Some(max)) => format!("int8 prefilter, rescored in f32: median {median}, max {max} of {size}"),
        _ => "f32 scan".to_string(),
    }
}

/// The stored vectors, the normalised queries and our top 24, for `tests/bench/faiss_anchor.py`
/// (in `target/anchor-data/` of the workspace), so that FAISS reads the very same bits. Streamed,
/// so that the peak RSS printed at the end stays the searches' own.
fn write_anchor_data(store: &VectorStore, queries: &[Vec<f32>], found: &[(Vec<VectorHit>, Scan)]) {
    let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/anchor-data");
    std::fs::create_dir_all(&folder).expect("anchor data folder");
    let write = |name: &str, vectors: &VectorStore| {
        let file = std::fs::File::create(folder.join(name)).expect("anchor data file");
        let mut out = std::io::BufWriter::new(file);
        for doc in 0..vectors.len() {
            for value in vectors.get(doc).expect("stored") {
                out.write_all(&value.to_le_bytes()).expect("anchor data");
            }
        }
        out.flush().expect("anchor data");
    };
    write("vectors.f32", store);
    write("queries.f32", &VectorStore::from_flat(store.dimension(), queries.concat()).expect("queries"));
    let meta = serde_json::json!({
        "count": store.len(),
        "dimension": store.dimension(),
        "ids": found.iter().map(|(hits, _)| hits.iter().map(|hit| hit.doc).collect::<Vec<_>>()).collect::<Vec<_>>(),
        "scores": found.iter().map(|(hits, _)| hits.iter().map(|hit| hit.score).collect::<Vec<_>>()).collect::<Vec<_>>(),
    });
    std::fs::write(folder.join("meta.json"), meta.to_string()).expect("meta");
    println!("  anchor data: {}", folder.display());
}

fn tantivy_indexing() {
    let mut random = Random(3);
    let texts: Vec<String> = (0..100_000).map(|_| sentence(&mut random, 60)).collect();
    let started = Instant::now();
    let index = TextIndex::build(&texts, TextIndexOptions::default()).expect("index");
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "tantivy indexing: {} documents of 60 words in {seconds:.2} s = {:.0} documents/s",
        index.len(),
        texts.len() as f64 / seconds
    );
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| status.lines().find(|line| line.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|line| line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()))
        .unwrap_or(0)
}
