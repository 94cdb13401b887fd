"""Ingestion of one snapshot file against the same documents cut into shards.

    python bench/ingest_shards.py [--corpus webdocs] [--shards 16] [--runs 3]
                                  [--baseline-rev REV]

Writes the corpus from ../shared/corpora as one zstd Parquet file and as a
folder of shards of uneven sizes (Parquet and JSONL), then times
``boilerscope ingest`` into a new store for each (a warm-up run first, then
the median of ``--runs``), with the peak RSS of each ingest process (from
``wait4``).  With ``--baseline-rev`` the same file is also ingested by that
revision of the code (a git worktree in bench/work), for a ratio taken in the
same run.  Results: bench/results/ingest_shards.json / .md.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work")
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "corpora")


def prepare(corpus: str, shards: int) -> dict:
    os.makedirs(WORK, exist_ok=True)
    table = pq.read_table(os.path.join(SHARED, corpus + ".parquet"))
    one = os.path.join(WORK, f"{corpus}-one.parquet")
    if not os.path.exists(one):
        pq.write_table(table, one, compression="zstd")
    # uneven cuts: shard i gets a share proportional to (i % 4) + 1
    weights = np.array([(i % 4) + 1 for i in range(shards)], float)
    bounds = np.concatenate([[0], np.round(np.cumsum(weights) / weights.sum() * table.num_rows)]).astype(int)
    out = {"one": one}
    for kind in ("parquet", "jsonl"):
        folder = os.path.join(WORK, f"{corpus}-{kind}-{shards}")
        if not os.path.exists(folder):
            tmp = folder + ".tmp"
            shutil.rmtree(tmp, ignore_errors=True)
            os.makedirs(tmp)
            for i in range(shards):
                part = table.slice(bounds[i], bounds[i + 1] - bounds[i])
                path = os.path.join(tmp, f"part-{i:05d}.{kind}")
                if kind == "parquet":
                    pq.write_table(part, path, compression="zstd")
                else:
                    with open(path, "w", encoding="utf-8") as fh:
                        for row in part.to_pylist():
                            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
            os.replace(tmp, folder)
        out[kind] = folder
    return out


def run_ingest(code_root: str, source: str, db: str) -> tuple[float, int]:
    for f in (db, db + ".wal"):
        if os.path.exists(f):
            os.remove(f)
    shutil.rmtree(db + ".arrays", ignore_errors=True)
    t = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "engine.cli", "ingest", source, "--db", db, "--quiet"],
                         cwd=code_root, env={**os.environ, "PYTHONPATH": code_root},
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t
    err = p.stderr.read().decode()
    p.stderr.close()
    if status != 0:
        raise SystemExit(f"ingest of {source} failed: {err}")
    return seconds, usage.ru_maxrss * 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="webdocs")
    ap.add_argument("--shards", type=int, default=16)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline-rev")
    args = ap.parse_args()
    sources = prepare(args.corpus, args.shards)
    db = os.path.join(WORK, "ingest-bench.duckdb")
    roots = {"": ROOT}
    if args.baseline_rev:
        tree = os.path.join(WORK, "baseline-" + args.baseline_rev)
        if not os.path.exists(tree):
            subprocess.run(["git", "worktree", "add", "--detach", tree, args.baseline_rev], cwd=ROOT, check=True,
                           capture_output=True)
        roots[f"baseline {args.baseline_rev}"] = tree
    cases = [("one file", "", sources["one"]),
             (f"{args.shards} Parquet shards", "", sources["parquet"]),
             (f"{args.shards} JSONL shards", "", sources["jsonl"])]
    if args.baseline_rev:
        cases.append((f"one file, baseline {args.baseline_rev}", f"baseline {args.baseline_rev}", sources["one"]))
    rows = []
    tokens = None
    for name, root_key, source in cases:
        root = roots[root_key]
        run_ingest(root, source, db)  # warm-up (numba's cache, the page cache)
        samples = [run_ingest(root, source, db) for _ in range(args.runs)]
        if tokens is None:
            sys.path.insert(0, ROOT)
            from engine.store import Store
            with Store(db, read_only=True) as st:
                tokens = int(st.snapshots()["tokens"][0])
        med = statistics.median(s for s, _ in samples)
        rss = max(r for _, r in samples)
        rows.append({"case": name, "median_seconds": med, "tokens_per_second": tokens / med,
                     "peak_rss_bytes": rss, "seconds": [s for s, _ in samples]})
        print(f"{name}: {med:.2f} s, {tokens / med / 1e6:.1f}M tokens/s, peak RSS {rss / 2**30:.2f} GiB",
              file=sys.stderr, flush=True)
    result = {"corpus": args.corpus, "tokens": tokens, "runs": args.runs, "rows": rows}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "ingest_shards.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    lines = [f"`boilerscope ingest` of {args.corpus} ({tokens:,} tokens; median of {args.runs} after a warm-up; "
             "peak RSS of the process):", "", "| source | median s | M tokens/s | peak RSS GiB |",
             "|---|---:|---:|---:|"]
    lines += [f"| {r['case']} | {r['median_seconds']:.2f} | {r['tokens_per_second'] / 1e6:.1f} | "
              f"{r['peak_rss_bytes'] / 2**30:.2f} |" for r in rows]
    with open(os.path.join(HERE, "results", "ingest_shards.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
