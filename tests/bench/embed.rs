//! Benchmark (not a test) for local embeddings in the build `cargo run` makes: each backend's
//! model load and throughput on the texts of the ONNX Runtime anchor
//! (`shared/bench/embed-anchor/ort_anchor.py`: xorshift64 seeded 7 over 24 words; 256 short
//! texts of 15 words, then 64 long texts of 120 words), medians of 3. Results go to
//! BENCHMARKS.md by hand, beside the anchor measured in the same sitting.
//!
//! Run: `cargo bench --profile dev --bench embed [-- BACKEND...]` (`onnxruntime`, and `candle` in
//! a build with `--features candle`; every backend the build has by default).

#![allow(clippy::expect_used, reason = "a benchmark that cannot set up should stop loudly")]

#[path = "words.rs"]
mod words;
use words::WORDS;

use std::sync::Arc;
use std::time::Instant;

use algorithms::search::vector::cosine;
use host::capabilities::embed::{Backend, LocalEmbedder, LocalModel};

const BATCHES: [usize; 4] = [1, 16, 32, 64];
const REPEATS: usize = 3;

/// The anchor's generator: xorshift64 seeded 7, each word picked by the next value mod 24.
fn texts() -> [(&'static str, Vec<String>); 2] {
    let mut state = 7u64;
    let mut sentence = |words: usize| {
        (0..words)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                WORDS[(state % WORDS.len() as u64) as usize]
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let short = (0..256).map(|_| sentence(15)).collect();
    let long = (0..64).map(|_| sentence(120)).collect();
    [("short", short), ("long", long)]
}

fn main() {
    let chosen: Vec<String> = std::env::args().skip(1).filter(|arg| !arg.starts_with('-')).collect();
    let backends: Vec<(&str, Backend)> = [("onnxruntime", Backend::Onnxruntime), ("candle", Backend::Candle)]
        .into_iter()
        .filter(|(name, _)| match chosen.is_empty() {
            true => *name != "candle" || cfg!(feature = "candle"),
            false => chosen.iter().any(|chosen| chosen == name),
        })
        .collect();
    let sets = texts();
    let mut vectors_by_backend = Vec::new();
    for (name, backend) in backends {
        let started = Instant::now();
        let local =
            LocalEmbedder::new(None, backend, host::project::cache_root(), Arc::new(|line: &str| eprintln!("{line}")));
        let model = local.model().expect("the model loads");
        println!("{name}: model load {:.3} s, {:?}", started.elapsed().as_secs_f64(), model.backend);
        model.embed(&sets[0].1[..8], 8).expect("warm up");
        let mut vectors = Vec::new();
        for (set, texts) in &sets {
            let tokens: usize = model.token_ids(texts).expect("tokens").iter().map(Vec::len).sum();
            for batch in BATCHES {
                let (rate, out) = median_rate(&model, texts, batch);
                println!(
                    "{name} {set:5} batch {batch:2}: {rate:7.1} sentences/s, {:6.0} tokens/s (checksum {:.4})",
                    rate * tokens as f64 / texts.len() as f64,
                    out.iter().flatten().map(|&value| f64::from(value)).sum::<f64>()
                );
                vectors = out;
            }
        }
        vectors_by_backend.push((name, vectors));
    }
    if let [(a, first), (b, second)] = &vectors_by_backend[..] {
        let least = first
            .iter()
            .zip(second)
            .map(|(x, y)| cosine(x, y).expect("vectors of one model have one dimension"))
            .fold(f32::INFINITY, f32::min);
        println!("least cosine between {a} and {b} over the long texts: {least:.7}");
    }
}

/// The median over [`REPEATS`] of sentences per second, with the last run's vectors.
fn median_rate(model: &LocalModel, texts: &[String], batch: usize) -> (f64, Vec<Vec<f32>>) {
    let mut rates = Vec::new();
    let mut vectors = Vec::new();
    for _ in 0..REPEATS {
        let started = Instant::now();
        vectors = model.embed(texts, batch).expect("embed");
        rates.push(texts.len() as f64 / started.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    (rates[REPEATS / 2], vectors)
}
