"""Dashboard query latency on a large store (the views' SQL, without caching).

    python bench/app_queries.py [--docs 1000000]
    python bench/app_queries.py --db STORE --name NAME   # an existing store (the 1B-token scale store)

Builds a snapshot of short synthetic pages from 20 sites with site templates
(bench/work/app-<docs>.parquet), ingests and mines it (sigma 20, L 10), then
times every query a page runs when the user switches views or moves a filter:
median of 5 after one warm-up.  Results: bench/results/app_queries.json / .md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from engine.api import mine  # noqa: E402
from engine import views  # noqa: E402
from engine.store import Store  # noqa: E402


def make_snapshot(path, n_docs, seed=5):
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(50_000)])
    sites = [f"site{i}.example" for i in range(20)]
    templates = [(" ".join(rng.choice(words, 25)), " ".join(rng.choice(words, 30))) for _ in sites]
    texts, urls, site_col = [], [], []
    for d in range(n_docs):
        s = int(rng.integers(0, len(sites)))
        body = " ".join(words[np.minimum(rng.zipf(1.3, int(rng.integers(10, 40))), 49_999)])
        head, foot = templates[s]
        texts.append(f"{head}\n{body}\n{foot}")
        urls.append(f"https://{sites[s]}/p{d}")
        site_col.append(sites[s])
    pq.write_table(pa.table({"doc_id": np.arange(n_docs), "site": site_col, "url": urls, "text": texts}), path)


def ensure_store(n_docs: int) -> str:
    """The store of ``n_docs`` synthetic pages mined at sigma 20, L 10 (built
    once in bench/work/); its path."""
    work = os.path.join(HERE, "work")
    os.makedirs(work, exist_ok=True)
    snap = os.path.join(work, f"app-{n_docs}.parquet")
    if not os.path.exists(snap):
        make_snapshot(snap, n_docs)
    db = os.path.join(work, f"app-{n_docs}.duckdb")
    if not os.path.exists(db):
        mine(snap, 20, 10, db=db)
    return db


def timed(fn, runs=5):
    fn()
    samples = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--db", default=None, help="time the queries on this mined store instead")
    ap.add_argument("--name", default="app_queries", help="results file name (bench/results/NAME.md)")
    args = ap.parse_args()
    db = args.db or ensure_store(args.docs)
    st = Store(db)
    try:
        sid = st.latest_snapshot()
        run = int(st.runs(sid)["run_id"][-1])
        table = views.phrase_table(st, run)
        pid = int(table["phrase_id"][0])
        sites = st.query("SELECT DISTINCT site FROM documents WHERE snapshot_id = ? ORDER BY site LIMIT 2", [sid])["site"].to_list()
        doc = int(st.query("SELECT min(doc_index) AS d FROM run_spans WHERE run_id = ?", [run])["d"][0])
        queries = {
            "phrases: table by psi": lambda: views.phrase_table(st, run),
            "phrases: text search": lambda: views.phrase_table(st, run, search="w1"),
            "phrases: site filter": lambda: views.phrase_table(st, run, site=sites[0]),
            "phrases: min sites 3": lambda: views.phrase_table(st, run, min_sites=3),
            "phrases: occurrences": lambda: views.phrase_occurrences(st, run, sid, pid),
            "phrases: sites of a phrase": lambda: views.phrase_sites(st, run, sid, pid),
            "sites: ranking": lambda: views.site_ranking(st, run, sid),
            "sites: top blocks": lambda: views.site_top_blocks(st, run, sid),
            "sites: corpus histogram": lambda: views.contamination_histogram(st, run, sid),
            "sites: two sites histogram": lambda: views.contamination_histogram(st, run, sid, tuple(sites)),
            "sites: documents of a bar": lambda: views.documents_in_bin(st, run, sid, "(all sites)", 10),
            "document: text": lambda: st.document(sid, doc),
            "document: spans": lambda: views.document_spans(st, run, doc),
        }
        rows = [{"query": k, "median_seconds": timed(f)} for k, f in queries.items()]
        docs = int(st.scalar("SELECT documents FROM snapshots WHERE snapshot_id = ?", [sid]))
    finally:
        st.close()
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", f"{args.name}.json"), "w") as fh:
        json.dump({"documents": docs, "rows": rows}, fh, indent=1)
    md = [f"Dashboard queries on a store of {docs:,} documents (median of 5, no cache):", "",
          "| query | median ms |", "|---|---:|"] + [f"| {r['query']} | {1000 * r['median_seconds']:.1f} |"
                                                   for r in rows] + [""]
    with open(os.path.join(HERE, "results", f"{args.name}.md"), "w") as fh:
        fh.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
