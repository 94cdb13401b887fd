"""Templates on real corpora (issue 9's figures): webdocs and prose.

    python bench/templates_corpora.py [--corpora webdocs prose] [--sigma 20] [--min-len 10] [--runs 3]
                                      [--warmup 1]

For each corpus, in one store (ingested once, not timed): ``boilerscope
mine`` without and with ``--templates``, each in its own process (wall time
and peak RSS from the child's rusage), after --warmup untimed runs of each,
the two interleaved so that the machine's drift hits both alike; the median
time, its ratio to the verbatim run, the template count, the coverage with
and without templates, the seeds stopped at the work bound, and the top 20
templates by tokens covered.  Results: bench/results/templates_corpora.json
and .md.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared", "corpora")
CLI = [sys.executable, "-m", "engine.cli"]


def child(args: list[str]) -> tuple[float, int]:
    """Run the CLI in a child process: (seconds, peak RSS bytes of that child
    alone, from its own rusage by wait4)."""
    t = time.perf_counter()
    p = subprocess.Popen(CLI + args, cwd=ROOT)
    _, status, usage = os.wait4(p.pid, 0)
    seconds = time.perf_counter() - t
    if status != 0:
        raise SystemExit(f"{' '.join(args)} failed ({status})")
    return seconds, usage.ru_maxrss * 1024


def main():
    import polars as pl
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpora", nargs="+", default=["webdocs", "prose"])
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-len", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1)
    args = ap.parse_args()
    work = os.path.join(HERE, "work", "templates-corpora")
    os.makedirs(work, exist_ok=True)
    out_rows = {}
    for name in args.corpora:
        src = os.path.join(SHARED, name + ".parquet")
        db = os.path.join(work, name + ".duckdb")
        if not os.path.exists(db):
            subprocess.run(CLI + ["ingest", src, "--db", db, "--quiet"], check=True, cwd=ROOT)
        common = [db, "--sigma", str(args.sigma), "--min-len", str(args.min_len), "--quiet"]
        row = {}
        labels = (("verbatim", []), ("templates", ["--templates"]))
        times = {label: [] for label, _ in labels}
        peaks = {label: [] for label, _ in labels}
        for k in range(args.warmup + args.runs):
            for label, extra in labels:
                out = os.path.join(work, f"out-{name}-{label}")
                s, p = child(["mine", *common, "--out", out, *extra])
                if k >= args.warmup:
                    times[label].append(s)
                    peaks[label].append(p)
        for label, _ in labels:
            with open(os.path.join(work, f"out-{name}-{label}", "summary.json")) as fh:
                summary = json.load(fh)
            row[label] = {"seconds": statistics.median(times[label]), "runs": times[label],
                          "peak_rss": max(peaks[label]), "peaks": peaks[label], "summary": summary}
        row["templates"]["ratio"] = row["templates"]["seconds"] / row["verbatim"]["seconds"]
        t = row["templates"]["summary"]["templates"]
        tpl = pl.read_parquet(os.path.join(work, f"out-{name}-templates", "templates.parquet"))
        occ = pl.read_parquet(os.path.join(work, f"out-{name}-templates", "template_occurrences.parquet"))
        covered = occ.with_columns((pl.col("end") - pl.col("start")).alias("n")).group_by("template_id").agg(
            pl.col("n").sum().alias("tokens"))
        top = tpl.join(covered, on="template_id").sort("tokens", descending=True).head(20)
        row["top"] = top.select("template", "df", "occurrences", "sites", "tokens").to_dicts()
        row["templates"]["stats"] = t
        out_rows[name] = row
        print(name, json.dumps({k: (v["seconds"], v["peak_rss"]) for k, v in row.items() if k != "top"}), flush=True)
    with open(os.path.join(HERE, "results", "templates_corpora.json"), "w") as fh:
        json.dump(out_rows, fh, indent=1, ensure_ascii=False, default=str)
    lines = [f"Templates on the shared corpora (sigma {args.sigma}, L {args.min_len}, W 4, at most 4 slots; "
             f"median of {args.runs} run(s) after {args.warmup} warm-up run(s), the two runs interleaved, each a "
             f"separate process; the machine has {os.cpu_count()} cores):", "",
             "| corpus | tokens | run | seconds | × verbatim | peak RSS (max of the runs) | templates | coverage | "
             "seeds (stopped at the work bound) |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for name, row in out_rows.items():
        st = row["templates"]["stats"]
        tokens = row["verbatim"]["summary"]["tokens"]
        for label in ("verbatim", "templates"):
            r = row[label]
            cov = (st["coverage_without_templates"] if label == "verbatim" else st["coverage_with_templates"])
            extra = (f"{st['templates']:,} | {100 * cov:.2f}% | {st['seeds']:,} ({st['truncated_seeds']})"
                     if label == "templates" else f"- | {100 * cov:.2f}% | -")
            ratio = f"{r['ratio']:.1f}" if "ratio" in r else "1.0"
            lines.append(f"| {name} | {tokens:,} | {label} | {r['seconds']:.1f} | {ratio} | "
                         f"{r['peak_rss'] / 2**30:.2f} GiB | {extra} |")
    for name, row in out_rows.items():
        lines += ["", f"Top 20 templates of {name} by tokens covered:", "",
                  "| template | df | occurrences | sites | tokens |", "|---|---:|---:|---:|---:|"]
        for r in row["top"]:
            text = r["template"] if len(r["template"]) <= 160 else r["template"][:157] + "..."
            lines.append(f"| {text.replace('|', '/')} | {r['df']:,} | {r['occurrences']:,} | {r['sites']} | "
                         f"{r['tokens']:,} |")
    with open(os.path.join(HERE, "results", "templates_corpora.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines[:12]))


if __name__ == "__main__":
    main()
