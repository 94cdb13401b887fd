"""Spark local mode against the local engine on the same shards (issue 8).

    python bench/spark_local.py [--corpus webdocs] [--shards 8] [--runs 3] [--master local[2]]
                                [--engines local spark spark-partitioned spark-partitioned-db]

The corpus (``../shared/corpora``) is cut into Parquet shards once; each run
is ``boilerscope mine SHARDS --out DIR`` (the local engine: ingest into a
fresh store, then mine) or the same with ``--engine spark``, each in its own
process.  Wall time is the median of the runs after one warm-up; peak memory
is the largest sum of RSS over the run's process tree (Spark's JVM is a
child of the Python driver), sampled every 0.2 s from /proc.  The result
files of the engines are compared with the local engine's: byte for byte for
``spark`` (step 4 on the driver), row for row for ``spark-partitioned``
(``--partitioned``: folders of parts, blocks included).
``spark-partitioned-db`` adds ``--db`` (a fresh store: the executors' snapshot
parts copied in, the run stored from the parts); its store is compared with
the local engine's by doc_id (:func:`store_fingerprint`).  Results:
bench/results/spark_local.json and .md.
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "corpora")
CLI = [sys.executable, "-m", "engine.cli"]


def tree_rss(pid: int) -> int:
    """Sum of RSS (bytes) of ``pid`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(name))
            rss[int(name)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        total += rss.get(p, 0)
        todo += children.get(p, [])
    return total


def run(args: list[str]) -> tuple[float, int]:
    t = time.perf_counter()
    p = subprocess.Popen(CLI + args, cwd=ROOT, stdout=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        peak = max(peak, tree_rss(p.pid))
        time.sleep(0.2)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({p.returncode})")
    return time.perf_counter() - t, peak


def store_fingerprint(db: str) -> dict:
    """Order-free fingerprints of a store's last run and its snapshot, keyed
    by doc_id (a Spark snapshot orders documents otherwise): the maximal
    phrases, their occurrences, per-document coverage, the covered tokens of
    the spans, blocks and block spans, and the snapshot's documents, tokens
    and vocabulary."""
    sys.path.insert(0, ROOT)
    from engine.store import Store
    with Store(db, read_only=True) as st:
        run_id = st.scalar("SELECT max(run_id) FROM runs")
        sid = st.run(run_id)["snapshot_id"]
        doc = " JOIN documents d ON d.snapshot_id = ? AND d.doc_index = x.doc_index"
        q = lambda sql: st.query(sql, [sid, run_id]).rows()[0]  # noqa: E731
        return {
            "phrases": st.query("SELECT count(*), sum(hash(phrase, length, df, occurrences, sites, psi, block_id))"
                                " FROM run_phrases WHERE run_id = ? AND maximal", [run_id]).rows()[0],
            "occurrences": q("SELECT count(*), sum(hash(p.phrase, d.doc_id, x.token_pos)) FROM run_occurrences x"
                             " JOIN run_phrases p USING (run_id, phrase_id)" + doc + " WHERE run_id = ? AND p.maximal"),
            "documents": q("SELECT count(*), sum(hash(d.doc_id, x.covered_tokens)) FROM run_documents x" + doc
                           + " WHERE run_id = ?"),
            "blocks": st.query("SELECT count(*), sum(hash(block_id, text, phrases, documents, sites, covered_tokens))"
                               " FROM run_blocks WHERE run_id = ?", [run_id]).rows()[0],
            "block_spans": q("SELECT count(*), sum(hash(x.block_id, d.doc_id, x.token_start, x.token_end,"
                             " x.char_start, x.char_end)) FROM run_block_spans x" + doc + " WHERE run_id = ?"),
            "span_mask": q("SELECT count(*) FROM (SELECT DISTINCT d.doc_id, unnest(range(x.token_start, x.token_end))"
                           " FROM run_spans x" + doc + " WHERE run_id = ?)"),
            "snapshot": st.query("SELECT documents, tokens, sites, vocabulary FROM snapshots WHERE snapshot_id = ?",
                                 [sid]).rows()[0],
            "snapshot_documents": st.query("SELECT sum(hash(doc_id, site, url, n_tokens)) FROM documents"
                                           " WHERE snapshot_id = ?", [sid]).rows()[0],
            "vocabulary": st.query("SELECT sum(hash(token, df)) FROM vocabulary WHERE snapshot_id = ?",
                                   [sid]).rows()[0],
        }


def main():
    import pyarrow.parquet as pq
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="webdocs")
    ap.add_argument("--shards-dir", default=None,
                    help="existing Parquet shards instead of cutting --corpus (e.g. 300M tokens of the scale corpus)")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="runs before the timed ones (0 for a large corpus)")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--sigma", default="20")
    ap.add_argument("--min-len", default="10")
    ap.add_argument("--engines", nargs="+", default=["local", "spark", "spark-partitioned"],
                    choices=["local", "spark", "spark-partitioned", "spark-partitioned-db"])
    a = ap.parse_args()
    if a.engines[0] != "local":
        a.engines.insert(0, "local")  # the baseline of every ratio
    work = os.path.join(HERE, "work", "spark-local")
    shards = a.shards_dir or os.path.join(work, f"{a.corpus}-shards")
    if a.shards_dir:
        a.corpus = os.path.basename(os.path.normpath(a.shards_dir))
        a.shards = len([n for n in os.listdir(shards) if n.endswith(".parquet")])
    if not os.path.isdir(shards):
        os.makedirs(shards)
        t = pq.read_table(os.path.join(SHARED, a.corpus + ".parquet"))
        step = -(-t.num_rows // a.shards)
        for k in range(a.shards):
            pq.write_table(t.slice(k * step, step), os.path.join(shards, f"part-{k:03d}.parquet"))
    rows = {}
    for label in a.engines:
        times, peaks = [], []
        for i in range(a.warmup + a.runs):
            out = os.path.join(work, f"out-{label}")
            db = os.path.join(work, f"{label}.duckdb")  # each label's own: the local store stays for the comparison
            for path in (db, db + ".wal"):
                if os.path.exists(path):
                    os.remove(path)
            shutil.rmtree(db + ".arrays", ignore_errors=True)
            extra = {"local": ["--db", db], "spark": ["--engine", "spark", "--master", a.master, "--no-partitioned"],
                     "spark-partitioned": ["--engine", "spark", "--master", a.master, "--partitioned"],
                     "spark-partitioned-db": ["--engine", "spark", "--master", a.master, "--partitioned",
                                              "--db", db]}[label]
            s, p = run(["mine", shards, "--sigma", a.sigma, "--min-len", a.min_len, "--out", out, "--quiet",
                        *extra])
            if i >= a.warmup:  # the first runs warm up (numba cache, JVM classes, page cache)
                times.append(s)
                peaks.append(p)
            print(label, i, round(s, 2), round(p / 2**30, 2), flush=True)
        with open(os.path.join(work, f"out-{label}", "summary.json")) as fh:
            summary = json.load(fh)
        rows[label] = {"seconds": statistics.median(times), "runs": times, "peak_rss": max(peaks),
                       "summary_seconds": summary.get("seconds")}
    import polars as pl
    same = {}
    for label in a.engines[1:]:
        for name in ("phrases.parquet", "documents.parquet", "sites.parquet", "blocks.parquet",
                     "block_spans.parquet"):
            mine_, local = os.path.join(work, f"out-{label}", name), os.path.join(work, "out-local", name)
            if label == "spark" and name.startswith("block"):  # the driver path writes them with --db only
                continue
            if label == "spark":
                same[f"{label}/{name}"] = open(mine_, "rb").read() == open(local, "rb").read()
            else:
                same[f"{label}/{name}"] = pl.read_parquet(mine_).equals(pl.read_parquet(local))
        if label == "spark-partitioned-db":
            want = store_fingerprint(os.path.join(work, "local.duckdb"))
            got = store_fingerprint(os.path.join(work, f"{label}.duckdb"))
            print("store fingerprints", want, got, flush=True)
            for key in want:
                same[f"{label}/store {key}"] = want[key] == got[key]
    result = {"corpus": a.corpus, "shards": a.shards, "master": a.master, "rows": rows, "identical": same}
    name = "spark_local" if not a.shards_dir else f"spark_local_{a.corpus}"
    with open(os.path.join(HERE, "results", f"{name}.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    lines = [f"{a.corpus} in {a.shards} Parquet shards, sigma {a.sigma}, L {a.min_len}; median of {a.runs} runs "
             f"after {a.warmup} warm-up run(s), each a separate process; peak = largest RSS sum over the process "
             "tree:", "",
             "| engine | median s | peak RSS GiB | stages (last run, s) |", "|---|---:|---:|---|"]
    for label, r in rows.items():
        stages = ", ".join(f"{k} {v:.1f}" for k, v in (r["summary_seconds"] or {}).items())
        lines.append(f"| {label}{' (' + a.master + ')' if label != 'local' else ''} | {r['seconds']:.1f} | "
                     f"{r['peak_rss'] / 2**30:.2f} | {stages} |")
    lines += ["", f"Identical to the local engine's (spark: bytes; spark-partitioned: rows): {same}"]
    lines += [f"{label} / local time: {rows[label]['seconds'] / rows['local']['seconds']:.2f}x, peak RSS "
              f"{rows[label]['peak_rss'] / rows['local']['peak_rss']:.2f}x" for label in a.engines[1:]]
    with open(os.path.join(HERE, "results", f"{name}.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
