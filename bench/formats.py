"""Ingest rates by input format (issue 29): the same documents as Parquet,
as .jsonl.zst shards, as one .jsonl.gz, as WET files and as a Hugging Face
folder, whole process, median of --runs after a warm-up, peak RSS of each run.

    python bench/formats.py ../shared/corpora/webdocs.parquet --runs 3
    python bench/formats.py ../shared/corpora/webdocs.parquet --repeat 4   # a 4x larger input

The inputs are written from the Parquet file into bench/work/formats/ once
(kept between runs).  Results: bench/results/formats.json and .md.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work", "formats")
RESULTS = os.path.join(HERE, "results")


def _rows(table: pa.Table):
    for batch in table.to_batches(max_chunksize=4096):
        yield from batch.to_pylist()


def _wet_record(i: int, uri: str | None, text: str) -> bytes:
    payload = text.encode("utf-8")
    head = ["WARC/1.0", "WARC-Type: conversion", f"WARC-Record-ID: <urn:uuid:{i:036d}>",
            "WARC-Date: 2024-01-01T00:00:00Z"] + ([f"WARC-Target-URI: {uri}"] if uri else []) + [
            "Content-Type: text/plain", f"Content-Length: {len(payload)}", "", ""]
    return gzip.compress("\r\n".join(head).encode() + payload + b"\r\n\r\n", compresslevel=6)


def write_inputs(source: str, repeat: int) -> dict:
    """The inputs, written once: name -> path."""
    table = pq.read_table(source, columns=["text", "url"])
    if repeat > 1:
        table = pa.concat_tables([table] * repeat)
    table = table.append_column("doc_id", pa.array(range(table.num_rows), pa.int64()))
    base = os.path.join(WORK, f"x{repeat}")
    paths = {"parquet": os.path.join(base, "one.parquet"), "jsonl.zst shards": os.path.join(base, "zst"),
             "jsonl.gz": os.path.join(base, "one.jsonl.gz"), "wet": os.path.join(base, "wet"),
             "hf folder": os.path.join(base, "hf")}
    if os.path.exists(os.path.join(base, "done")):
        return paths
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    pq.write_table(table, paths["parquet"])
    n, shards = table.num_rows, 8
    step = -(-n // shards)
    os.makedirs(paths["jsonl.zst shards"])
    os.makedirs(paths["wet"])
    os.makedirs(paths["hf folder"])
    with pa.CompressedOutputStream(paths["jsonl.gz"], "gzip") as gz:
        for k in range(shards):
            part = table.slice(k * step, step)
            lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _rows(part)).encode()
            gz.write(lines)
            with pa.CompressedOutputStream(os.path.join(paths["jsonl.zst shards"], f"part-{k:03d}.jsonl.zst"),
                                           "zstd") as z:
                z.write(lines)
            with open(os.path.join(paths["wet"], f"CC-{k:05d}.warc.wet.gz"), "wb") as fh:
                for i, r in enumerate(_rows(part)):
                    fh.write(_wet_record(k * step + i, r["url"], r["text"] or ""))
    # WET documents have no doc_id of their own: the position (the same as here)
    names = [f"data-{k:05d}-of-{shards:05d}.arrow" for k in range(shards)]
    for k, name in enumerate(names):
        part = table.slice(k * step, step)
        with pa.OSFile(os.path.join(paths["hf folder"], name), "wb") as sink, \
                pa.ipc.new_stream(sink, part.schema) as w:
            w.write_table(part, max_chunksize=4096)
    with open(os.path.join(paths["hf folder"], "state.json"), "w") as fh:
        json.dump({"_data_files": [{"filename": n} for n in names]}, fh)
    with open(os.path.join(paths["hf folder"], "dataset_info.json"), "w") as fh:
        json.dump({"features": {}}, fh)
    open(os.path.join(base, "done"), "w").close()
    return paths


def ingest_once(path: str) -> dict:
    """One ``boilerscope ingest`` in its own process: wall seconds and that
    process' peak RSS (os.wait4 gives the child's own resource usage)."""
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "s.duckdb")
        out = os.path.join(tmp, "out.txt")
        t = time.perf_counter()
        with open(out, "w") as fh:
            p = subprocess.Popen([sys.executable, "-m", "engine.cli", "ingest", path, "--db", db, "--quiet"],
                                 stdout=fh, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONPATH": ROOT})
            _, status, usage = os.wait4(p.pid, 0)
        seconds = time.perf_counter() - t
        text = open(out).read()
        if status != 0:
            raise SystemExit(text)
        return {"seconds": seconds, "peak_rss_bytes": usage.ru_maxrss * 1024, "snapshot_id": text.split()[1]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=1, help="the corpus repeated this many times (a larger input)")
    a = ap.parse_args(argv)
    paths = write_inputs(a.source, a.repeat)
    tokens = None
    from engine.snapshot import load  # noqa: E402  (counted once, outside the timed runs)
    results = {}
    for name, path in paths.items():
        ingest_once(path)  # warm-up
    for _ in range(a.runs):  # interleaved
        for name, path in paths.items():
            results.setdefault(name, []).append(ingest_once(path))
    if tokens is None:
        tokens = int(load(paths["parquet"]).tokenized.tokens.shape[0]) if a.repeat == 1 else None
    ids = {r["snapshot_id"] for rs in results.values() for r in rs}
    rows = []
    base = statistics.median(r["seconds"] for r in results["parquet"])
    for name, rs in results.items():
        med = statistics.median(r["seconds"] for r in rs)
        rows.append({"format": name, "median_seconds": med, "rate_vs_parquet": base / med,
                     "tokens_per_second": (tokens / med) if tokens else None,
                     "peak_rss_bytes": statistics.median(r["peak_rss_bytes"] for r in rs),
                     "runs": [round(r["seconds"], 2) for r in rs]})
    report = {"source": a.source, "repeat": a.repeat, "runs": a.runs, "same_snapshot_id": len(ids) == 1,
              "rows": rows}
    os.makedirs(RESULTS, exist_ok=True)
    name = f"formats{'' if a.repeat == 1 else f'_x{a.repeat}'}"
    with open(os.path.join(RESULTS, name + ".json"), "w") as fh:
        json.dump(report, fh, indent=1)
    md = [f"# Ingest by format: {os.path.basename(a.source)} x{a.repeat}, median of {a.runs} after a warm-up", "",
          f"One snapshot id for every format: {report['same_snapshot_id']}.", "",
          "| format | median s | rate vs Parquet | tokens/s | peak RSS | runs |", "|---|---:|---:|---:|---:|---|"]
    for r in rows:
        tps = f"{r['tokens_per_second'] / 1e6:.2f}M" if r["tokens_per_second"] else "-"
        md.append(f"| {r['format']} | {r['median_seconds']:.2f} | {r['rate_vs_parquet']:.2f} | {tps} | "
                  f"{r['peak_rss_bytes'] / 2**30:.2f} GiB | {', '.join(map(str, r['runs']))} |")
    with open(os.path.join(RESULTS, name + ".md"), "w") as fh:
        fh.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
