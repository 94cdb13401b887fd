"""Issue 26's targets in one table, from the benchmarks' latest results.

    python bench/targets.py

``make bench`` runs it last: each row reads the result file of the bench
that measured it (the ratios in each file were measured in one run,
interleaved, medians: see that bench), states the goal and whether it is
met, and names the file and its date (the commit that last changed it, or
its modification time when not committed).  The scale rows come from
``make bench-scale`` and ``bench/scale.py --templates`` (too long for
``make bench``), the Spark row from ``bench/spark_local.py``.  Results:
bench/results/targets.md and .json.  A missing file is a row that says so.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
WEBDOCS_TOKENS = 48_158_897


def load(name: str):
    """The result file's content and its date: the commit that last
    changed it, or its modification time when it differs from that commit
    (a run not committed yet)."""
    path = os.path.join(RESULTS, name)
    if not os.path.exists(path):
        return None, None
    with open(path) as fh:
        content = json.load(fh)
    git = ["git", "-C", HERE]
    try:
        changed = subprocess.run(git + ["status", "--porcelain", "--", path], capture_output=True, text=True,
                                 check=True).stdout.strip()
        committed = subprocess.run(git + ["log", "-1", "--format=%cs", "--", path], capture_output=True,
                                   text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        changed, committed = "", ""
    if committed and not changed:
        return content, committed
    return content, time.strftime("%Y-%m-%d", time.gmtime(os.path.getmtime(path)))


def slope(xs, ys) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


def rows() -> list[dict]:
    out = []

    def row(what, measured, goal, met, source, date):
        out.append({"target": what, "measured": measured, "goal": goal,
                    "status": "no result" if met is None else ("met" if met else "missed"),
                    "source": source, "date": date})

    ing, date = load("ingest_shards.json")
    if ing:
        by = {r["case"]: r for r in ing.get("rows", [])}
        one = by.get("one file")
        base = next((r for c, r in by.items() if c.startswith("one file, baseline")), None)
    else:
        one = base = None
    if one:
        vs = f"; {base['median_seconds'] / one['median_seconds']:.2f}x the previous release" if base else ""
        row("ingest, webdocs, one file", f"{one['tokens_per_second'] / 1e6:.1f}M tokens/s{vs}", ">= 10M tokens/s",
            one["tokens_per_second"] >= 10e6, "ingest_shards.json", date)
    else:
        row("ingest, webdocs, one file", "-", ">= 10M tokens/s", None, "ingest_shards.json", date)

    scale, sdate = load("scale.json")
    big = {r["size"]: r for r in scale or []}
    for label in ("1B", "3B"):
        r = big.get(label)
        if r:
            tps = r["tokens"] / r["ingest_seconds"]
            row(f"ingest, scale corpus {label}", f"{tps / 1e6:.1f}M tokens/s", ">= 10M tokens/s", tps >= 10e6,
                "scale.json", sdate)

    quick, qdate = load("quick.json")
    wp = (quick or {}).get("whole_process") or {}
    if wp.get("speedup_vs_sql_peer"):
        row(f"re-mining against the SQL peer's process ({wp['corpus']})",
            f"{wp['speedup_vs_sql_peer']:.1f}x ({wp['remine_median_seconds']:.2f} s against "
            f"{wp['sql_peer_process_seconds']:.2f} s)", ">= 20x", wp["speedup_vs_sql_peer"] >= 20, "quick.json", qdate)
    else:
        row("re-mining against the SQL peer's process", "-", ">= 20x", None, "quick.json", qdate)
    vers, vdate = load("versus.json")
    if vers:
        this = vers["median_seconds"]["this"]
        row("re-mining webdocs against the previous release",
            f"{this:.2f} s, {vers['ratio_this_over_other']:.3f}x the previous release's "
            f"{vers['median_seconds']['other']:.2f} s", "<= 1x (no regression)",
            vers["ratio_this_over_other"] <= 1.0, "versus.json", vdate)
        mining = vers.get("this_stages", {}).get("mining")
        if mining:
            ns = 1e9 * mining / WEBDOCS_TOKENS
            row("mining kernels per token, webdocs", f"{ns:.0f} ns/token", "<= 25 ns/token", ns <= 25,
                "versus.json", vdate)
    else:
        row("re-mining webdocs against the previous release", "-", "<= 1x (no regression)", None, "versus.json",
            None)

    if len(big) > 1:
        sizes = sorted(big.values(), key=lambda r: r["tokens"])
        s = slope([r["tokens"] for r in sizes], [r["mine_seconds"] for r in sizes])
        last = sizes[-1]
        budget = (last.get("memory") or {}).get("budget_bytes") or 8e9
        anon = last.get("mine_peak_anon") or 0
        row(f"mine from {sizes[0]['size']} to {last['size']} tokens",
            f"log-log slope {s:.2f}; {last['size']} in {last['mine_seconds']:.0f} s, "
            f"{anon / 2**30:.2f} GiB anonymous", "slope <= 1.1, within the budget",
            s <= 1.1 and anon <= budget, "scale.json", sdate)
    else:
        row("mine from 100M to 3B tokens", "-", "slope <= 1.1, within the budget", None, "scale.json", sdate)

    tc, tdate = load("templates_corpora.json")
    for corpus in ("webdocs", "prose"):
        r = (tc or {}).get(corpus)
        if r:
            ratio = r["templates"]["ratio"]
            row(f"mine --templates against the verbatim run, {corpus}",
                f"{ratio:.1f}x ({r['templates']['seconds']:.1f} s against {r['verbatim']['seconds']:.1f} s)",
                "<= 4x", ratio <= 4, "templates_corpora.json", tdate)
        else:
            row(f"mine --templates against the verbatim run, {corpus}", "-", "<= 4x", None,
                "templates_corpora.json", tdate)
    st, stdate = load("scale_templates.json")
    for r in st or []:
        t = r.get("templates") or {}
        budget = (r.get("memory") or {}).get("budget_bytes") or 8e9
        anon = r.get("mine_peak_anon") or 0
        row(f"mine --templates at {r['size']} tokens within {budget / 1e9:.0f} GB",
            f"{r['mine_seconds']:.0f} s, {anon / 2**30:.2f} GiB anonymous, "
            f"{'out of core in ' + str(t.get('parts')) + ' part(s)' if t.get('out_of_core') else 'in memory'}",
            "completes within the budget", anon <= budget, "scale_templates.json", stdate)
    if not st:
        row("mine --templates at 1B tokens within 8 GB", "-", "completes within the budget", None,
            "scale_templates.json", stdate)

    sp, spdate = load("spark_local.json")
    if sp and "spark-partitioned" in sp.get("rows", {}):
        local, part = sp["rows"]["local"]["seconds"], sp["rows"]["spark-partitioned"]["seconds"]
        row(f"Spark (partitioned), {sp.get('master', 'local')}", f"{part / local:.1f}x the local engine "
            f"({part:.0f} s against {local:.1f} s)", "<= 2x", part / local <= 2, "spark_local.json", spdate)
    else:
        row("Spark (partitioned) against the local engine", "-", "<= 2x", None, "spark_local.json", spdate)
    return out


def main():
    table = rows()
    lines = ["# Issue 26's targets", "",
             "Each figure from the latest run of the bench named (medians; ratios measured in one run).", "",
             "| target | measured | goal | status | from |", "|---|---|---|---|---|"]
    for r in table:
        lines.append(f"| {r['target']} | {r['measured']} | {r['goal']} | {r['status']} | "
                     f"{r['source']} ({r['date'] or '-'}) |")
    with open(os.path.join(RESULTS, "targets.json"), "w") as fh:
        json.dump(table, fh, indent=1)
    with open(os.path.join(RESULTS, "targets.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
