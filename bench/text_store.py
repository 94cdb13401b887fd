"""Where should the document text live: in the DuckDB store, or in a Parquet
file beside the token arrays?  Measures the size of each and the latency of
the dashboard's document read (one document's text by its index).

    python bench/text_store.py STORE.duckdb [--lookups 200]

For the store's latest snapshot: the text's share of the DuckDB file (the
documents table copied with and without its text into fresh databases), and
one Parquet file of the text (zstd) for several row-group sizes; then the
median and 95th percentile of reading one random document's text from each.
Results: bench/results/text_store.json / .md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)


def timed(fn, n, rng, n_docs):
    out = []
    for d in rng.integers(0, n_docs, n):
        t = time.perf_counter()
        fn(int(d))
        out.append(time.perf_counter() - t)
    return statistics.median(out), float(np.percentile(out, 95))


def main():
    import duckdb  # the bench compares layouts in scratch databases of its own
    import pyarrow as pa
    import pyarrow.parquet as pq

    ap = argparse.ArgumentParser()
    ap.add_argument("store")
    ap.add_argument("--lookups", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    from engine.store import Store
    store = Store(args.store, read_only=True)
    sid = store.latest_snapshot()
    # the text where the store keeps it (text.parquet, or the rows of an older snapshot)
    docs = store.documents_text(sid).to_arrow()
    n_docs = docs.num_rows
    # the store's own read of one document (the Document view's), as it is now
    med, p95 = timed(lambda d: store.document(sid, d), args.lookups, rng, n_docs)
    path = os.path.join(store.arrays_root, sid, "text.parquet")
    store_row = {"where": "the store's Store.document (" + ("text.parquet" if os.path.exists(path) else "rows") + ")",
                 "text_bytes_on_disk": os.path.getsize(path) if os.path.exists(path) else 0,
                 "median_ms": med * 1e3, "p95_ms": p95 * 1e3}
    store.close()
    import pyarrow.compute as pc
    text_bytes = int(pc.sum(pc.binary_length(docs.column("text"))).as_py())
    rows = []
    with tempfile.TemporaryDirectory(dir=os.path.join(HERE, "work")) as tmp:
        sizes = {}
        for name, cols in (("with text", docs), ("without text", docs.drop_columns(["text"]))):
            path = os.path.join(tmp, name.replace(" ", "_") + ".duckdb")
            c = duckdb.connect(path)
            c.register("_d", cols)
            c.execute("CREATE TABLE documents AS SELECT * FROM _d")
            c.close()
            sizes[name] = os.path.getsize(path)
        c = duckdb.connect(os.path.join(tmp, "with_text.duckdb"), read_only=True)
        cur = c.cursor()
        med, p95 = timed(lambda d: cur.execute("SELECT text FROM documents WHERE doc_index = ?", [d]).fetchone(),
                         args.lookups, rng, n_docs)
        rows.append({"where": "DuckDB documents table", "text_bytes_on_disk": sizes["with text"] - sizes["without text"],
                     "median_ms": med * 1e3, "p95_ms": p95 * 1e3})
        c.close()
        for group in (256, 1024, 8192):
            path = os.path.join(tmp, f"text-{group}.parquet")
            pq.write_table(pa.table({"text": docs.column("text")}), path, compression="zstd",
                           row_group_size=group)
            pf = pq.ParquetFile(path)

            def read(d, pf=pf, group=group):
                g = d // group
                return pf.read_row_group(g, columns=["text"]).column(0)[d - g * group].as_py()

            med, p95 = timed(read, args.lookups, rng, n_docs)
            rows.append({"where": f"Parquet, zstd, {group} documents per row group",
                         "text_bytes_on_disk": os.path.getsize(path), "median_ms": med * 1e3, "p95_ms": p95 * 1e3})
    rows.append(store_row)
    result = {"store": os.path.basename(args.store), "documents": n_docs, "text_bytes": text_bytes, "rows": rows}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    base = os.path.join(HERE, "results", "text_store")
    with open(base + ".json", "w") as fh:
        json.dump(result, fh, indent=1)
    lines = [f"Document text of {os.path.basename(args.store)} ({n_docs:,} documents, {text_bytes / 2**20:.0f} MiB "
             f"of UTF-8): size on disk and one document's read ({args.lookups} random reads):", "",
             "| where | MiB on disk | median ms | p95 ms |", "|---|---:|---:|---:|"]
    lines += [f"| {r['where']} | {r['text_bytes_on_disk'] / 2**20:.0f} | {r['median_ms']:.2f} | {r['p95_ms']:.2f} |"
              for r in rows]
    with open(base + ".md", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
