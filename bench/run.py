"""The benchmark suite: BloomSpan, FHK and the SQL peer side by side.

    python bench/run.py --suite quick     # make bench: a few million tokens, ~10 minutes
    python bench/run.py --suite full      # make bench-full: webdocs, prose, scaling to 80M

Every configuration: one warm-up run per method (its time is reported apart,
as is the time to load the compiled kernels from numba's cache), then the
median of --runs runs, each in its own process so its peak RSS is its own;
the methods' runs are interleaved so that the machine's drift hits all alike.  Results: bench/results/<suite>.json and
.md, and a plotly chart (.html, and .png when kaleido finds a Chrome).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

import corpora  # noqa: E402

RESULTS = os.path.join(HERE, "results")


def run_worker(path, algo, sigma, L, workers=None):
    cmd = [sys.executable, os.path.join(HERE, "worker.py"), path, algo, str(sigma), str(L)]
    if workers:
        cmd += ["--workers", str(workers)]
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{algo} on {path} failed: {p.stderr[-2000:]}")
    out = json.loads(p.stdout.strip().splitlines()[-1])
    out["process_seconds"] = wall
    return out


def measure_all(path, methods, sigma, L, runs, workers=None):
    """Every method of one configuration, runs interleaved (round robin) so
    that the machine's drift hits all methods alike."""
    warm = {m: run_worker(path, m, sigma, L, workers) for m in methods}
    samples = {m: [] for m in methods}
    for _ in range(runs):
        for m in methods:
            samples[m].append(run_worker(path, m, sigma, L, workers))
    return {m: summarize(m, sigma, L, warm[m], samples[m], runs) for m in methods}


def summarize(algo, sigma, L, warm, samples, runs):
    secs = [s["seconds"] for s in samples]
    rss = [s["peak_rss"] for s in samples]
    return {
        "algo": algo, "sigma": sigma, "L": L, "tokens": warm["tokens"],
        "warmup_seconds": warm["seconds"], "compile_seconds": warm.get("compile_seconds"), "median_seconds": statistics.median(secs),
        "min_seconds": min(secs), "max_seconds": max(secs),
        "median_process_seconds": statistics.median(s["process_seconds"] for s in samples),
        "median_peak_rss": statistics.median(rss), "covered": warm["covered"], "digest": warm["digest"],
        "phrases": warm["phrases"], "algo_used": warm.get("algo_used"), "parts": samples[len(samples) // 2]["parts"], "runs": runs,
    }


def shape(path):
    from engine.kernels.shape import lz78_phrases
    d = np.load(path)
    n = min(int(d["tokens"].shape[0]), 2_000_000)
    c = lz78_phrases(d["tokens"], d["doc_offsets"], n)
    return c / max(n, 1)


def prepare(suite):
    """(name, path, sigma, L, methods) for every configuration of the suite."""
    cfg = []
    os.makedirs(corpora.WORK, exist_ok=True)

    def get(name, make):
        path = os.path.join(corpora.WORK, name + ".npz")
        if not os.path.exists(path):
            made = make()
            if made is None:
                return None
            corpora.save(name, *made)
        return path

    runs = get("runs", corpora.periodic_runs)
    if suite == "quick":
        web = get("webdocs-4M", lambda: corpora.shared_slice("webdocs", 4_000_000))
        if web:
            cfg.append(("webdocs-4M", web, 20, 10, ("bloomspan", "fhk", "auto", "sql")))
            cfg.append(("webdocs-4M soft sigma", web, 2, 10, ("bloomspan", "fhk", "auto")))
        s1 = get("synthetic1", corpora.synthetic1)
        cfg.append(("synthetic1", s1, 3, 3, ("bloomspan", "fhk", "auto", "sql")))
        s2 = get("synthetic2", corpora.synthetic2)
        cfg.append(("synthetic2", s2, 3, 3, ("bloomspan", "fhk", "auto", "sql")))
        cfg.append(("periodic runs", runs, 20, 10, ("bloomspan", "fhk", "auto")))
        sizes = [1_000_000, 2_000_000, 4_000_000, 8_000_000]
    else:
        web = get("webdocs", lambda: corpora.shared_slice("webdocs", 0))
        if web:
            cfg.append(("webdocs", web, 20, 10, ("bloomspan", "fhk", "auto", "sql")))
            cfg.append(("webdocs soft sigma", web, 2, 10, ("bloomspan", "fhk", "auto")))
        prose = get("prose", lambda: corpora.shared_slice("prose", 0))
        if prose:
            cfg.append(("prose", prose, 20, 10, ("bloomspan", "fhk", "auto", "sql")))
        s2 = get("synthetic2", corpora.synthetic2)
        cfg.append(("synthetic2", s2, 3, 3, ("bloomspan", "fhk", "auto", "sql")))
        cfg.append(("periodic runs", runs, 20, 10, ("bloomspan", "fhk", "auto")))
        sizes = [5_000_000, 10_000_000, 20_000_000, 40_000_000, 80_000_000]
    scaling = []
    for n in sizes:
        name = f"zipf-{n // 1_000_000}M"
        methods = ("bloomspan", "fhk") if n <= 20_000_000 else ("bloomspan",)
        scaling.append((name, get(name, lambda n=n: corpora.zipf_sites(n)), 20, 10, methods))
    return cfg, scaling


def slope(points):
    xs = [math.log(p[0]) for p in points]
    ys = [math.log(p[1]) for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def remine_cli(suite, runs):
    """Whole process, start to written results: `boilerscope mine STORE --out`
    on an ingested webdocs store (a slice in the quick suite), and the time of
    `boilerscope ingest` (Parquet to store, spans included)."""
    import pyarrow.parquet as pq
    src = corpora.shared_path("webdocs")
    if not os.path.exists(src):
        return None
    name = "webdocs-4M" if suite == "quick" else "webdocs"
    parquet = os.path.join(corpora.WORK, name + ".parquet")
    if not os.path.exists(parquet):
        table = pq.read_table(src)
        if suite == "quick":
            d = np.load(os.path.join(corpora.WORK, name + ".npz"))
            table = table.slice(0, int(d["doc_offsets"].shape[0] - 1))
        pq.write_table(table, parquet, compression="zstd")
    cli = [sys.executable, "-m", "engine.cli"]
    ingest = []
    for _ in range(max(1, runs // 2)):
        db = os.path.join(corpora.WORK, name + ".duckdb")
        for f in (db, db + ".wal"):
            if os.path.exists(f):
                os.remove(f)
        import shutil
        shutil.rmtree(db + ".arrays", ignore_errors=True)
        t = time.perf_counter()
        subprocess.run(cli + ["ingest", parquet, "--db", db, "--quiet"], check=True, cwd=ROOT, capture_output=True)
        ingest.append(time.perf_counter() - t)
    out = os.path.join(corpora.WORK, "remine-out")
    subprocess.run(cli + ["mine", db, "--quiet", "--out", out], check=True, cwd=ROOT, capture_output=True)
    mines = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cli + ["mine", db, "--quiet", "--out", out], check=True, cwd=ROOT, capture_output=True)
        mines.append(time.perf_counter() - t)
    with open(os.path.join(out, "summary.json")) as fh:
        summary = json.load(fh)
    return {"corpus": name, "tokens": summary["tokens"], "ingest_median_seconds": statistics.median(ingest),
            "ingest_tokens_per_second": summary["tokens"] / statistics.median(ingest),
            "remine_median_seconds": statistics.median(mines), "remine_runs": runs,
            "remine_peak_rss": summary["peak_rss_bytes"], "stage_seconds": summary["seconds"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", choices=("quick", "full"), default="quick")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    started = time.time()
    cfg, scaling = prepare(args.suite)
    rows = []
    for name, path, sigma, L, methods in cfg + scaling:
        cn = shape(path)
        print(f"{name}: {', '.join(methods)} sigma {sigma} L {L} ...", file=sys.stderr, flush=True)
        for algo, r in measure_all(path, methods, sigma, L, args.runs).items():
            r.update(corpus=name, c_over_n=cn, scaling=(name, path, sigma, L, methods) in scaling)
            rows.append(r)
    # ratios and agreement within each configuration
    for r in rows:
        peers = [q for q in rows if q["corpus"] == r["corpus"] and q["sigma"] == r["sigma"]]
        base = next((q for q in peers if q["algo"] == "bloomspan"), None)
        if r["algo"] == "auto":
            best = min(q["median_seconds"] for q in peers if q["algo"] in ("bloomspan", "fhk"))
            r["auto_vs_best"] = r["median_seconds"] / best
        r["ratio_vs_bloomspan"] = r["median_seconds"] / base["median_seconds"] if base else None
        r["same_coverage_as_bloomspan"] = (r["digest"] == base["digest"]) if base else None
    slopes = {}
    for algo in ("bloomspan", "fhk"):
        pts = [(r["tokens"], r["median_seconds"]) for r in rows if r["scaling"] and r["algo"] == algo]
        if len(pts) >= 2:
            slopes[algo] = slope(pts)
    print("whole-process re-mining and ingestion ...", file=sys.stderr, flush=True)
    cli = remine_cli(args.suite, args.runs)
    if cli:
        sql = next((r for r in rows if r["corpus"] == cli["corpus"] and r["algo"] == "sql"), None)
        if sql:
            cli["sql_peer_process_seconds"] = sql["median_process_seconds"]
            cli["speedup_vs_sql_peer"] = sql["median_process_seconds"] / cli["remine_median_seconds"]
    result = {"suite": args.suite, "whole_process": cli, "date": time.strftime("%Y-%m-%d %H:%M"), "machine": platform.machine(),
              "cores": os.cpu_count(), "runs": args.runs, "rows": rows, "loglog_slopes": slopes,
              "suite_seconds": time.time() - started}
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"{args.suite}.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    md = table(result)
    with open(os.path.join(RESULTS, f"{args.suite}.md"), "w") as fh:
        fh.write(md)
    chart(result)
    print(md)


def table(result):
    lines = [f"Suite `{result['suite']}`, {result['date']}, {result['cores']} cores, median of "
             f"{result['runs']} runs (each its own process) after one warm-up.", "",
             "| corpus | tokens | c/n | method | sigma | L | median s | ns/token | peak RSS MB | bytes/token "
             "| × BloomSpan | same coverage | warm-up s | cache load s |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for r in result["rows"]:
        ratio = f"{r['ratio_vs_bloomspan']:.2f}" if r["ratio_vs_bloomspan"] else "-"
        same = {True: "yes", False: "NO", None: "-"}[r["same_coverage_as_bloomspan"]]
        algo = r["algo"] + (f" → {r['algo_used']}, {r['auto_vs_best']:.2f}× best" if r["algo"] == "auto" else "")
        lines.append(
            f"| {r['corpus']} | {r['tokens']:,} | {r['c_over_n']:.3f} | {algo} | {r['sigma']} | {r['L']} | "
            f"{r['median_seconds']:.3f} | {1e9 * r['median_seconds'] / r['tokens']:.1f} | "
            f"{r['median_peak_rss'] / 2**20:.0f} | {r['median_peak_rss'] / r['tokens']:.1f} | {ratio} | {same} | "
            f"{r['warmup_seconds']:.2f} | " + (f"{r['compile_seconds']:.2f} |" if r.get("compile_seconds") is not None else "- |"))
    cli = result.get("whole_process")
    if cli:
        lines += ["", f"Whole process on {cli['corpus']} ({cli['tokens']:,} tokens): `boilerscope mine STORE --out` "
                  f"median {cli['remine_median_seconds']:.2f} s"
                  + (f" ({cli['speedup_vs_sql_peer']:.1f}× faster than the SQL peer process, "
                     f"{cli['sql_peer_process_seconds']:.2f} s)" if cli.get("speedup_vs_sql_peer") else "")
                  + f"; `boilerscope ingest` median {cli['ingest_median_seconds']:.2f} s "
                  f"({cli['ingest_tokens_per_second'] / 1e6:.1f}M tokens/s, spans included)."]
    if result["loglog_slopes"]:
        lines += ["", "Scaling (log-log slope of time against tokens): " +
                  ", ".join(f"{k} {v:.2f}" for k, v in result["loglog_slopes"].items())]
    lines.append("")
    return "\n".join(lines)


def chart(result):
    from plotly.subplots import make_subplots
    fig = make_subplots(rows=1, cols=2, subplot_titles=("ns per token", "peak RSS bytes per token"))
    for algo in ("bloomspan", "fhk"):
        pts = sorted((r["tokens"], r) for r in result["rows"] if r["scaling"] and r["algo"] == algo)
        if not pts:
            continue
        xs = [p[0] for p in pts]
        fig.add_scatter(x=xs, y=[1e9 * p[1]["median_seconds"] / p[0] for p in pts], name=algo, row=1, col=1,
                        mode="lines+markers")
        fig.add_scatter(x=xs, y=[p[1]["median_peak_rss"] / p[0] for p in pts], name=algo + " memory",
                        row=1, col=2, mode="lines+markers")
    fig.update_xaxes(type="log", title="tokens")
    fig.update_layout(title=f"Scaling ({result['suite']} suite)", height=450, width=1000)
    base = os.path.join(RESULTS, f"{result['suite']}-scaling")
    fig.write_html(base + ".html", include_plotlyjs="cdn")
    try:
        os.environ.setdefault("BROWSER_PATH", "/usr/bin/chromium")
        fig.write_image(base + ".png")
    except Exception as exc:  # kaleido needs a Chrome; the HTML has the toolbar's PNG download
        print(f"PNG not written ({type(exc).__name__}: {str(exc)[:120]})", file=sys.stderr)


if __name__ == "__main__":
    main()
