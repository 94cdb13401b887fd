"""Dashboard interaction latency in a real browser on a large store.

    python bench/app_latency.py [--docs 1000000] [--rounds 3]
    python bench/app_latency.py --db web.duckdb --decisions 100 --name app_latency_webdocs

Uses the store of ``bench/app_queries.py`` (built if missing: short synthetic
pages from 20 sites, mined at sigma 20, L 10), starts ``boilerscope
dashboard`` on it and drives Debian's Chromium through the analyst's workflow
(the browser test's latency helper): open each page, search, decide, toggle a
log scale, click a histogram bar, open a document, remove the noise, open the
Blocks page, mark a block noise and undo it, open the Decisions page (with
``--decisions N``: N noise decisions stored first, the top phrases by Ψ, so
the page counts the tokens each cuts).  Each
interaction is timed from the action until the app's running indicator is
gone; the median over ``--rounds`` walks is reported, the first walk (cold
caches) apart.  Results: bench/results/app_latency.json / .md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from app_queries import ensure_store  # noqa: E402
from tests.test_e2e import CHROMIUM, Latency, click_bar, histogram_bar, launch, wait_healthy  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def walk(page, server: str, lat: Latency) -> None:
    from playwright.sync_api import expect

    def settle():
        # a page's charts and tables finish drawing after its script ends: an
        # interaction is timed from a settled page, not from the tail of a load
        lat.idle(120_000)
        page.wait_for_timeout(1000)

    lat.measure("mine: open page", lambda: page.goto(server + "/"), timeout=120_000)
    expect(page.get_by_text("Run history")).to_be_visible(timeout=120_000)
    query = page.url.split("?", 1)[1]
    lat.measure("phrases: open page", lambda: page.goto(server + "/repeats?" + query), timeout=120_000)
    expect(page.get_by_text("Keyword in context")).to_be_visible(timeout=120_000)
    settle()
    search = page.get_by_label("Search phrase text")
    lat.measure("phrases: search", lambda: (search.fill("w1"), search.press("Enter")), url=r"q=w1")
    settle()
    lat.measure("phrases: clear search", lambda: (search.fill(""), search.press("Enter")))
    settle()
    lat.measure("phrases: decide unsure", lambda: page.get_by_role("button", name="unsure", exact=True).click())
    lat.measure("phrases: log scale", lambda: page.get_by_text("log scale").first.click())
    query = page.url.split("?", 1)[1]
    lat.measure("sites: open page", lambda: page.goto(server + "/by-site?" + query), timeout=120_000)
    bar = histogram_bar(page)
    expect(bar).to_be_visible(timeout=120_000)
    settle()
    click_bar(page, lat)
    expect(page.get_by_text("documents shown")).to_be_visible(timeout=120_000)
    lat.measure("sites: open a document", lambda: page.get_by_role("button", name="Open in Document view").click())
    expect(page.get_by_text("Contamination").first).to_be_visible(timeout=120_000)
    settle()
    lat.measure("document: noise removed", lambda: page.get_by_text("Show the text with noise spans removed").click())
    lat.measure("document: noise shown", lambda: page.get_by_text("Show the text with noise spans removed").click())
    query = page.url.split("?", 1)[1]
    lat.measure("blocks: open page", lambda: page.goto(server + "/blocks?" + query), timeout=120_000)
    expect(page.get_by_text("Block detail")).to_be_visible(timeout=120_000)
    settle()
    # the buttons carry their keyboard shortcut in their names ("noise N")
    lat.measure("blocks: mark noise", lambda: page.get_by_role("button", name=re.compile(r"^noise")).first.click())
    settle()
    lat.measure("blocks: undo", lambda: page.get_by_role("button", name=re.compile(r"^undo")).first.click())
    settle()
    query = page.url.split("?", 1)[1]
    lat.measure("decisions: open page", lambda: page.goto(server + "/decisions?" + query), timeout=120_000)
    expect(page.get_by_text("Stop-phrase list")).to_be_visible(timeout=120_000)
    settle()


def store_decisions(db: str, n: int) -> None:
    """``n`` noise decisions (the newest run's top phrases by Ψ) in the store, for every snapshot."""
    if n <= 0:
        return
    from engine.store import Store
    store = Store(db)
    try:
        run = store.query("SELECT max(run_id) AS r FROM runs")["r"][0]
        top = store.query("SELECT phrase FROM run_phrases WHERE run_id = ? AND maximal ORDER BY psi DESC, phrase"
                          " LIMIT ?", [run, n])["phrase"].to_list()
        store.set_decisions([(p, "noise", "bench") for p in top])
    finally:
        store.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--db", default=None, help="walk this mined store instead of the synthetic one")
    ap.add_argument("--decisions", type=int, default=0, help="noise decisions stored before the walks")
    ap.add_argument("--name", default="app_latency", help="results file name (bench/results/NAME.md)")
    args = ap.parse_args()
    db = args.db or ensure_store(args.docs)
    store_decisions(db, args.decisions)
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen([sys.executable, "-m", "engine.cli", "dashboard", "--db", db, "--port", str(port),
                             "--address", "127.0.0.1"], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    walks = []
    try:
        if not wait_healthy(server, 240):
            raise SystemExit("the dashboard did not start")
        from playwright.sync_api import sync_playwright
        with sync_playwright() as p:
            browser = launch(p)
            for _ in range(args.rounds + 1):
                context = browser.new_context(viewport={"width": 1440, "height": 900})
                page = context.new_page()
                lat = Latency(page)
                walk(page, server, lat)
                walks.append(lat.rows)
                context.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(30)
    names = [n for n, _ in walks[0]]
    cold = dict(walks[0])
    warm = {n: statistics.median(dict(w)[n] for w in walks[1:]) for n in names}
    from engine.store import Store
    done = Store(db, read_only=True)
    docs = done.query("SELECT sum(documents) AS n FROM snapshots")["n"][0]
    n_dec = int(done.query("SELECT count(*) AS n FROM decisions")["n"][0])
    done.close()
    result = {"docs": int(docs), "store": os.path.basename(db), "decisions": n_dec, "chromium": CHROMIUM, "rounds": args.rounds,
              "cold_seconds": cold, "median_seconds": warm}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", f"{args.name}.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    lines = [f"Dashboard interactions in Chromium on {os.path.basename(db)} ({int(docs):,} documents, "
             f"{n_dec} decisions; median of {args.rounds} walks after a cold one):", "",
             "| interaction | cold s | median s |", "|---|---:|---:|"]
    lines += [f"| {n} | {cold[n]:.2f} | {warm[n]:.2f} |" for n in names]
    with open(os.path.join(HERE, "results", f"{args.name}.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
