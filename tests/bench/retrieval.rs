//! Benchmark (not a test) for the retrieval capabilities: local embedding throughput, hybrid
//! search latency, and tantivy indexing throughput. Results go to BENCHMARKS.md by hand.
//!
//! Run: `cargo bench --bench retrieval` (a release build; embeddings need optimised code).

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

use std::sync::Arc;
use std::time::Instant;

use host::capabilities::embed::LocalEmbedder;
use host::capabilities::search::pipeline::{QueryOptions, query};
use host::capabilities::search::text_index::{TextIndex, TextIndexOptions};
use host::capabilities::search::{Corpus, Document};

fn main() {
    embeddings();
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

const WORDS: [&str; 24] = [
    "memory",
    "agent",
    "retrieval",
    "cache",
    "session",
    "redis",
    "deploy",
    "config",
    "port",
    "token",
    "answer",
    "judge",
    "fact",
    "decision",
    "migration",
    "schema",
    "queue",
    "worker",
    "latency",
    "index",
    "vector",
    "chunk",
    "summary",
    "plugin",
];

fn sentence(random: &mut Random, words: usize) -> String {
    (0..words).map(|_| WORDS[(random.next() % WORDS.len() as u64) as usize]).collect::<Vec<_>>().join(" ")
}

fn embeddings() {
    let started = Instant::now();
    let local = LocalEmbedder::new(
        None,
        Default::default(),
        host::project::cache_root(),
        Arc::new(|line: &str| eprintln!("{line}")),
    );
    let model = local.model().expect("the model loads");
    println!("model load: {:.3} s", started.elapsed().as_secs_f64());
    let mut random = Random(7);
    for (label, words, count) in [("short (15 words)", 15, 256), ("long (120 words)", 120, 64)] {
        let texts: Vec<String> = (0..count).map(|_| sentence(&mut random, words)).collect();
        let tokens: usize = model.token_ids(&texts).expect("tokens").iter().map(Vec::len).sum();
        model.embed(&texts[..8], 8).expect("warm up");
        for batch in [1, 16, 64] {
            let started = Instant::now();
            model.embed(&texts, batch).expect("embed");
            let seconds = started.elapsed().as_secs_f64();
            println!(
                "embed {label}, batch {batch:>2}: {:>7.1} sentences/s, {:>8.0} tokens/s ({count} texts, {tokens} tokens, {seconds:.2} s)",
                count as f64 / seconds,
                tokens as f64 / seconds
            );
        }
    }
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
        let options = QueryOptions::default();
        let (mut total, mut vector_leg, mut keyword_leg) = (Vec::new(), Vec::new(), Vec::new());
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
        }
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
    }
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
