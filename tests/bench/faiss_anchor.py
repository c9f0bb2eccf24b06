"""FAISS anchor for the exact vector leg of the hybrid-search benchmark (BENCHMARKS.md).

Times FAISS's exact flat inner-product index (`IndexFlatIP`) on the very vectors and queries of
`cargo bench --bench retrieval` at 100,000 chunks x 384 dimensions: one query per `search` call,
k = 24, two OpenMP threads, 100 queries. Prints p50/p99 and queries/s, then the same 100 queries
as one batch (FAISS's best case: a BLAS matrix product), and checks FAISS's top 24 against the
one the Rust benchmark found.

The vectors are not regenerated here: the Rust benchmark writes the stored (normalised) vectors,
the normalised queries and its own top 24 to `target/anchor-data/`, so both sides read the same
bits. Run it right after the Rust benchmark, on the same machine:

    python3 -m venv target/anchor-venv
    target/anchor-venv/bin/python -m pip install -r tests/bench/requirements-anchors.txt
    CARGO_TARGET_DIR=/work/target-helpers cargo bench --bench retrieval
    target/anchor-venv/bin/python tests/bench/faiss_anchor.py

FAISS scores with its own summation order, so a score may differ from ours in the last bits
and two near-tied documents may swap; the check reports that rather than failing on it.
"""

import json
import pathlib
import sys
import time

import faiss
import numpy as np

K = 24
THREADS = 2
DATA = pathlib.Path(__file__).resolve().parents[2] / "target" / "anchor-data"


def load():
    meta = json.loads((DATA / "meta.json").read_text())
    count, dimension = meta["count"], meta["dimension"]
    vectors = np.fromfile(DATA / "vectors.f32", dtype="<f4").reshape(count, dimension)
    queries = np.fromfile(DATA / "queries.f32", dtype="<f4").reshape(-1, dimension)
    return meta, vectors, queries


def percentile(sorted_values, p):
    """The benchmark's nearest-rank percentile (tests/bench/retrieval.rs)."""
    rank = int(np.ceil(p * len(sorted_values)))
    return sorted_values[max(rank - 1, 0)]


def main():
    if not (DATA / "meta.json").is_file():
        sys.exit(f"no benchmark data in {DATA}; hint: run `cargo bench --bench retrieval` first")
    meta, vectors, queries = load()
    faiss.omp_set_num_threads(THREADS)
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(vectors)
    index.search(queries[:1], K)  # warm-up, as the Rust side builds its int8 copy before timing

    latencies, ids, scores = [], [], []
    for query in queries:
        started = time.perf_counter()
        found_scores, found_ids = index.search(query[np.newaxis, :], K)
        latencies.append((time.perf_counter() - started) * 1000.0)
        ids.append(found_ids[0])
        scores.append(found_scores[0])
    latencies.sort()
    total = sum(latencies) / 1000.0
    print(
        f"faiss {faiss.__version__} IndexFlatIP, {vectors.shape[0]} x {vectors.shape[1]}, k {K}, "
        f"{THREADS} threads, {len(queries)} single queries: p50 {percentile(latencies, 0.5):.2f} ms, "
        f"p99 {percentile(latencies, 0.99):.2f} ms, {len(queries) / total:.0f} queries/s"
    )

    started = time.perf_counter()
    index.search(queries, K)
    batch = time.perf_counter() - started
    print(f"faiss batch of {len(queries)} queries in one call: {batch * 1000.0:.2f} ms, {len(queries) / batch:.0f} queries/s")

    ours_ids = np.array(meta["ids"], dtype=np.int64)
    ours_scores = np.array(meta["scores"], dtype=np.float32)
    same_order = sum(np.array_equal(ours_ids[i], ids[i]) for i in range(len(queries)))
    same_set = sum(set(ours_ids[i]) == set(ids[i]) for i in range(len(queries)))
    largest_gap = max(float(np.max(np.abs(ours_scores[i] - scores[i]))) for i in range(len(queries)))
    print(
        f"top {K} vs the Rust benchmark: same ids in the same order for {same_order}/{len(queries)} queries, "
        f"same set for {same_set}/{len(queries)}; largest score difference by rank {largest_gap:.2e}"
    )


if __name__ == "__main__":
    main()
