"""Scale bench (issue 8; ``make bench-scale``, not in CI).

    python bench/scale.py [--sizes 100M 300M 1B] [--memory 8GB] [--keep] [--reuse] [--fresh] [--templates]

For each size: a generated web-like corpus in Parquet shards
(``bench/scale_corpus.py``, cached in bench/work/scale/), then ``boilerscope
ingest`` of the shards into a fresh store and ``boilerscope mine`` of the
store (sigma 20, L 10, ``--out``), each in its own process: wall time, peak
RSS of that process (``wait4``), the stage timings from summary.json, and
the disk the store takes.  ``mine`` runs with ``--memory`` (default 8GB, the
issue's budget): a size that does not fit is mined out of core.  The log-log
slope of mining time against tokens is fitted over the sizes.  Results:
bench/results/scale.json and .md.  The store of a size is deleted after its
run unless ``--keep``; ``--reuse`` mines a kept store again without
ingesting (its ingest figures are the previous run's, from scale.json).
The rows of sizes not run keep their previous figures unless ``--fresh``
(``--sizes 3B`` adds a 3B row to the 100M-1B ones).  ``--templates`` mines
with ``--templates`` too (its own results: bench/results/scale_templates.json
and .md, with the template miner's path, parts, seconds and count).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CLI = [sys.executable, "-m", "engine.cli"]
sys.path.insert(0, HERE)

from scale_corpus import generate, size  # noqa: E402


def _anon_bytes(pid: int) -> int:
    """The process' anonymous resident memory (RssAnon): its own arrays, not
    the pages of memory-mapped files, which the kernel can drop at will."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("RssAnon:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def child(args: list[str]) -> tuple[float, int, int]:
    """Run one command: wall seconds, peak RSS (wait4) and the peak of its
    anonymous memory, sampled every 0.2 s by a thread."""
    import threading
    t = time.perf_counter()
    p = subprocess.Popen(CLI + args, cwd=ROOT, stdout=subprocess.DEVNULL)
    peak = {"anon": 0}
    done = threading.Event()

    def sample():
        while not done.wait(0.2):
            peak["anon"] = max(peak["anon"], _anon_bytes(p.pid))

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    _, status, usage = os.wait4(p.pid, 0)
    done.set()
    th.join()
    if status != 0:
        raise SystemExit(f"{' '.join(args)} failed ({status})")
    return time.perf_counter() - t, usage.ru_maxrss * 1024, peak["anon"]


def disk(path: str) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(folder, f)) for f in files)
    return total


def slope(xs, ys) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", nargs="+", default=["100M", "300M", "1B"])
    ap.add_argument("--memory", default="8GB")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--reuse", action="store_true")
    ap.add_argument("--fresh", action="store_true", help="drop the rows of the sizes not run now")
    ap.add_argument("--report", action="store_true", help="only write scale.md again from scale.json")
    ap.add_argument("--templates", action="store_true", help="mine --templates (results: scale_templates.*)")
    a = ap.parse_args()
    work = os.path.join(HERE, "work", "scale")
    name = "scale_templates" if a.templates else "scale"
    results = os.path.join(HERE, "results", f"{name}.json")
    previous = {}
    if os.path.exists(results):
        with open(results) as fh:
            previous = {r["size"]: r for r in json.load(fh)}
    # the sizes not run now keep their previous rows (--fresh: only this run's)
    rows = [] if a.fresh else [r for label, r in previous.items() if a.report or label not in a.sizes]
    rows.sort(key=lambda r: r["tokens"])
    for label in ([] if a.report else a.sizes):
        n = size(label)
        shards = os.path.join(work, f"corpus-{label}")
        if not os.path.isdir(shards):
            t = time.perf_counter()
            generate(shards + ".tmp", n)
            os.rename(shards + ".tmp", shards)
            print(f"{label}: generated in {time.perf_counter() - t:.0f} s", flush=True)
        db = os.path.join(work, f"store-{label}.duckdb")
        out = os.path.join(work, f"out-{label}")
        if a.reuse and os.path.exists(db) and label in previous:
            ing_s, ing_rss = previous[label]["ingest_seconds"], previous[label]["ingest_peak_rss"]
            ing_anon = previous[label].get("ingest_peak_anon")
        else:
            for path in (db, db + ".wal"):
                if os.path.exists(path):
                    os.remove(path)
            shutil.rmtree(db + ".arrays", ignore_errors=True)
            ing_s, ing_rss, ing_anon = child(["ingest", shards, "--db", db, "--quiet"])
        print(f"{label}: ingest {ing_s:.0f} s, {ing_rss / 2**30:.2f} GiB", flush=True)
        mine_s, mine_rss, mine_anon = child(["mine", db, "--sigma", "20", "--min-len", "10", "--out", out, "--quiet",
                                             "--memory", a.memory] + (["--templates"] if a.templates else []))
        with open(os.path.join(out, "summary.json")) as fh:
            summary = json.load(fh)
        row = {"size": label, "tokens": summary["tokens"], "documents": summary["documents"],
               "ingest_seconds": ing_s, "ingest_peak_rss": ing_rss, "ingest_peak_anon": ing_anon,
               "mine_seconds": mine_s, "mine_peak_rss": mine_rss, "mine_peak_anon": mine_anon,
               "mining_seconds": summary["seconds"].get("mining"), "stages": summary["seconds"],
               "coverage": summary["coverage"], "phrases": summary["phrases"], "memory": summary.get("memory"),
               "store_bytes": os.path.getsize(db) + disk(db + ".arrays"),
               "shard_bytes": disk(shards), "templates": summary.get("templates")}
        rows.append(row)  # rows holds no row of the sizes run now
        print(f"{label}: mine {mine_s:.0f} s, {mine_rss / 2**30:.2f} GiB, coverage {100 * row['coverage']:.1f}%",
              flush=True)
        if not a.keep:
            for path in (db, db + ".wal"):
                if os.path.exists(path):
                    os.remove(path)
            shutil.rmtree(db + ".arrays", ignore_errors=True)
        rows.sort(key=lambda r: r["tokens"])
        with open(results, "w") as fh:
            json.dump(rows, fh, indent=1)
    lines = ["Generated web-like corpora in 20M-token Parquet shards; sigma 20, L 10; one run per size, each "
             "command its own process; peak RSS of that process (wait4), in parentheses the peak of its anonymous "
             "memory (RssAnon sampled every 0.2 s: without the pages of the memory-mapped token arrays); "
             f"mine --memory {a.memory}:", "",
             "| tokens | documents | ingest s | M tokens/s | ingest peak RSS | mine path | mine s (mining kernels) | "
             "ns/token mined | mine peak RSS (anonymous) | bytes/token (mine RSS) | store on disk | coverage |",
             "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    def anon(b):
        return f" ({b / 2**30:.2f})" if b else ""

    for r in rows:
        m = r.get("memory") or {}
        path = (f"out of core ({m.get('chunks')} chunks, {m.get('groups')} group{'s' if m.get('groups') != 1 else ''})" if m.get("out_of_core")
                else "in memory")
        lines.append(
            f"| {r['tokens'] / 1e6:,.0f}M | {r['documents']:,} | {r['ingest_seconds']:.0f} | "
            f"{r['tokens'] / r['ingest_seconds'] / 1e6:.1f} | {r['ingest_peak_rss'] / 2**30:.2f} GiB | {path} | "
            f"{r['mine_seconds']:.0f} ({r['mining_seconds']:.0f}) | {1e9 * r['mine_seconds'] / r['tokens']:.0f} | "
            f"{r['mine_peak_rss'] / 2**30:.2f} GiB{anon(r.get('mine_peak_anon'))} | "
            f"{r['mine_peak_rss'] / r['tokens']:.1f} | "
            f"{r['store_bytes'] / 2**30:.1f} GiB | {100 * r['coverage']:.1f}% |")
    fits = [("", rows)]
    if any(r["tokens"] > 1.5e9 for r in rows):
        fits = [(" from 100M to 1B", [r for r in rows if r["tokens"] <= 1.5e9]), (" over all sizes", rows)]
    for what, part in fits:
        if len(part) > 1:
            xs = [r["tokens"] for r in part]
            lines += ["", f"log-log slope of mine time against tokens{what}: "
                          f"{slope(xs, [r['mine_seconds'] for r in part]):.2f} (mining kernels alone: "
                          f"{slope(xs, [r['mining_seconds'] for r in part]):.2f}; ingest: "
                          f"{slope(xs, [r['ingest_seconds'] for r in part]):.2f})"]
    for r in rows:
        t = r.get("templates")
        if t:
            lines.append(f"\n{r['tokens'] / 1e6:,.0f}M --templates: {t['templates']:,} templates, "
                         f"{'out of core, ' + str(t.get('parts')) + ' part(s)' if t.get('out_of_core') else 'in memory'}, "
                         f"seconds {t['seconds']}, coverage {100 * t['coverage_without_templates']:.1f}% without "
                         f"templates, {100 * t['coverage_with_templates']:.1f}% with them")
    with open(os.path.join(HERE, "results", f"{name}.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
