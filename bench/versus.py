"""This checkout against another (the previous release), whole process, interleaved.

    git worktree add /tmp/prev <commit>
    python bench/versus.py ../shared/corpora/webdocs.parquet --other /tmp/prev --runs 5

Each checkout mines its own store of the snapshot (ingested by it: an
older release cannot write into a newer layout) with
``python -m engine.cli mine STORE``, the runs alternating (this, other, this,
...) after one warm-up each, so the machine's drift hits both alike.  Each run
is its own process: wall time and peak RSS are its own.  Reported: medians,
the ratio this/other, and the summary's stage seconds of this checkout's
median run.  Results: bench/results/versus.json and .md.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RESULTS = os.path.join(HERE, "results")


def one_run(checkout: str, store: str, out: str, args: list[str]) -> dict:
    """One ``mine`` in a child process: wall seconds, the child's peak RSS, its summary."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "engine.cli", "mine", store, "--out", out, "--quiet", *args]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    p = subprocess.run(cmd, env={**os.environ, "PYTHONPATH": checkout}, cwd=os.path.dirname(store),
                       capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{checkout}: {p.stderr.strip()}")
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as fh:
        summary = json.load(fh)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"seconds": seconds, "peak_rss_bytes": summary.get("peak_rss_bytes") or max(peak, before) * 1024,
            "stages": summary.get("seconds", {})}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("snapshot")
    p.add_argument("--other", required=True, help="the other checkout (a git worktree)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--sigma", default="20")
    p.add_argument("--min-len", default="10")
    p.add_argument("--templates", action="store_true")
    p.add_argument("--name", default=None, help="the results' name (default: versus)")
    a = p.parse_args(argv)
    args = ["--sigma", a.sigma, "--min-len", a.min_len] + (["--templates"] if a.templates else [])
    checkouts = {"this": ROOT, "other": os.path.abspath(a.other)}
    with tempfile.TemporaryDirectory() as tmp:
        # a store per checkout, ingested by it (an older release cannot write
        # runs into a newer layout)
        stores = {}
        for name, co in checkouts.items():
            stores[name] = os.path.join(tmp, name, "s.duckdb")
            os.makedirs(os.path.dirname(stores[name]))
            subprocess.run([sys.executable, "-m", "engine.cli", "ingest", os.path.abspath(a.snapshot), "--db",
                            stores[name], "--quiet"], check=True, env={**os.environ, "PYTHONPATH": co},
                           cwd=tmp, stdout=subprocess.DEVNULL)  # cwd: not this checkout (python -m puts it first)
        for name, co in checkouts.items():  # warm-up: numba's cache, the page cache
            one_run(co, stores[name], os.path.join(tmp, f"out-{name}"), args)
        runs = {name: [] for name in checkouts}
        for _ in range(a.runs):
            for name, co in checkouts.items():
                runs[name].append(one_run(co, stores[name], os.path.join(tmp, f"out-{name}"), args))
    med = {name: statistics.median(r["seconds"] for r in rs) for name, rs in runs.items()}
    rss = {name: statistics.median(r["peak_rss_bytes"] for r in rs) for name, rs in runs.items()}
    mid = sorted(runs["this"], key=lambda r: r["seconds"])[len(runs["this"]) // 2]
    report = {"snapshot": a.snapshot, "args": args, "runs": a.runs, "other": a.other,
              "median_seconds": med, "ratio_this_over_other": med["this"] / med["other"],
              "median_peak_rss_bytes": rss, "this_stages": mid["stages"],
              "all_seconds": {n: [round(r["seconds"], 3) for r in rs] for n, rs in runs.items()}}
    name = a.name or "versus"
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"{name}.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=1)
    md = [f"# {name}: `mine {os.path.basename(a.snapshot)} {' '.join(args)}`, whole process",
          "", f"Median of {a.runs} interleaved runs after one warm-up each.", "",
          "| checkout | median s | peak RSS (median) | runs (s) |", "|---|---:|---:|---|"]
    for n in checkouts:
        md.append(f"| {n} | {med[n]:.2f} | {rss[n] / 2**30:.2f} GiB | "
                  f"{', '.join(f'{s:.2f}' for s in report['all_seconds'][n])} |")
    md += ["", f"Ratio this / other: {report['ratio_this_over_other']:.3f}.", ""]
    with open(os.path.join(RESULTS, f"{name}.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
