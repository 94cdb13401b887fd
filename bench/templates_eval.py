"""Templates on a corpus with planted templates (issue 9's measure).

    python bench/templates_eval.py [--docs 600] [--sigma 20] [--min-len 10]

Background: windows of real prose (../shared/corpora/prose.parquet).  Planted:
templates whose slots take numbers, years, dates, person names of 1-3 tokens
and product names of a few words, on one site or across a few, a pair that
shares a long first segment and then differs, and verbatim control phrases.
Each document gets one or two of them at random places.

Reported: template-level precision, recall and F1 (a mined template is
correct when its text equals a planted one, runs of ``*`` collapsed, as in
Loghub's template-level metric), and the share of planted-template tokens
inside the run's covered spans, with templates and with verbatim phrases
only.  Results: bench/results/templates_eval.json / .md.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))

FIRST = ["anna", "bob", "carlos", "dana", "erik", "fatima", "georg", "hana", "ivan", "julia", "kofi", "lena"]
LAST = ["smith", "garcia", "müller", "kowalski", "tanaka", "okafor", "rossi", "dubois", "novak", "silva"]
MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december"]
PRODUCTS = ["wireless headphones", "steel water bottle", "running shoes", "desk lamp", "coffee grinder pro",
            "yoga mat", "usb c cable", "travel backpack", "smart watch band", "ceramic mug"]
CATEGORIES = ["news", "sports", "local politics", "science", "travel", "food"]


def name(r):
    parts = [r.choice(FIRST)]
    if r.random() < 0.7:
        parts.append(r.choice(LAST))
    if r.random() < 0.2:
        parts.append(r.choice(LAST))
    return " ".join(parts)


def date(r):
    return f"{r.randint(1, 28)} {r.choice(MONTHS)} {r.choice([2021, 2022, 2023, 2024])}"


#: (template text with {slots}, slot generators, sites it appears on)
TEMPLATES = [
    ("Posted by {} on {} in {} · Leave a comment · Share on Facebook Twitter", (name, date, lambda r: r.choice(CATEGORIES)), 3),
    ("Showing {} of {} products sort by price from low to high", (lambda r: str(r.randint(1, 48)), lambda r: str(r.randint(50, 900))), 1),
    ("Copyright {} {} all rights reserved privacy policy terms of use cookie settings",
     (lambda r: str(r.choice([2019, 2020, 2021, 2022, 2023, 2024])), lambda r: r.choice(["acme corp", "globex", "initech ltd", "umbrella group"])), 3),
    ("Last updated on {} by {} this article was reviewed by our editorial team", (date, name), 2),
    ("Subscribe to our newsletter and get {} off your first order today", (lambda r: f"{r.randint(5, 40)} percent",), 2),
    ("Subscribe to our newsletter and get {} delivered free every week", (lambda r: r.choice(PRODUCTS),), 2),
    ("Free shipping on orders over {} dollars within the continental united states only", (lambda r: str(r.choice([25, 35, 49, 50, 75, 99])),), 1),
]
CONTROLS = ["click here to read more articles from our archive of stories and essays",
            "this website uses cookies to improve your experience while you navigate through the website"]


def planted_text(t: str) -> str:
    """The template as the miner writes it: tokens lowercased, `*` per slot."""
    import naive
    return " ".join("*" if tok == "SLOTSLOT" else tok for tok in naive.tokenize(t.replace("{}", " SLOTSLOT "))[0])\
        .replace("slotslot", "*")


def build(n_docs: int, seed: int = 0):
    import pyarrow.parquet as pq
    r = random.Random(seed)
    prose = pq.read_table(os.path.join(os.path.dirname(ROOT), "shared", "corpora", "prose.parquet"),
                          columns=["text"]).column("text").to_pylist()
    words = [w for t in prose[:2000] for w in (t or "").split()]
    sites = [f"site{i}.example" for i in range(10)]
    homes = {i: r.sample(range(10), k) for i, (_, _, k) in enumerate(TEMPLATES)}
    texts, urls, marks = [], [], []
    for d in range(n_docs):
        site = d % 10
        chosen = [i for i in range(len(TEMPLATES)) if site in homes[i] and r.random() < 0.5][:2]
        parts = [" ".join(words[(k := r.randrange(len(words) - 200)):k + r.randint(40, 120)])]
        for i in chosen:
            tpl, gens, _ = TEMPLATES[i]
            filled = tpl.format(*(g(r) for g in gens))
            pos = r.randint(0, len(parts))
            parts.insert(pos, ("TPL", i, filled))
        if r.random() < 0.3:
            parts.insert(r.randint(0, len(parts)), CONTROLS[d % 2])
        text, spans = "", []
        for p in parts:
            if isinstance(p, tuple):
                spans.append((p[1], len(text), len(text) + len(p[2])))
                text += p[2] + " "
            else:
                text += p + " "
        texts.append(text)
        urls.append(f"https://{sites[site]}/page{d}")
        marks.append(spans)
    return texts, urls, marks


def main():
    import numpy as np
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.api import mine

    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-len", type=int, default=10)
    args = ap.parse_args()
    work = os.path.join(HERE, "work", "templates-eval")
    os.makedirs(work, exist_ok=True)
    texts, urls, marks = build(args.docs)
    snap = os.path.join(work, "planted.parquet")
    pq.write_table(pa.table({"text": texts, "url": urls}), snap)
    db = os.path.join(work, "planted.duckdb")
    for f in (db, db + ".wal"):
        if os.path.exists(f):
            os.remove(f)
    rows = {}
    for label, templates in (("verbatim phrases only", False), ("with templates", True)):
        out = os.path.join(work, "out-" + ("t" if templates else "v"))
        t = time.perf_counter()
        run = mine(snap, args.sigma, args.min_len, db=db, out=out, templates=templates)
        seconds = time.perf_counter() - t
        spans = pl.read_parquet(os.path.join(out, "spans.parquet")) if templates else None
        # covered characters per document (from the spans, or the stored run's phrase spans)
        if spans is None:
            from engine.store import Store
            with Store(db, read_only=True) as st:
                s = st.query("SELECT d.doc_id, s.char_start, s.char_end FROM run_spans s JOIN documents d "
                             "ON d.snapshot_id = ? AND d.doc_index = s.doc_index WHERE s.run_id = ?",
                             [run.snapshot_id, run.run_id])
        else:
            s = spans.select("doc_id", "char_start", "char_end")
        covered = {}
        for d, a, b in s.iter_rows():
            covered.setdefault(d, []).append((a, b))
        inside = total = 0
        for d, spans_d in enumerate(marks):
            cov = np.zeros(len(texts[d]) + 1, bool)
            for a, b in covered.get(d, []):
                cov[a:b] = True
            for _, a, b in spans_d:
                chars = [i for i in range(a, b) if not texts[d][i].isspace() and texts[d][i] not in "·"]
                total += len(chars)
                inside += int(cov[chars].sum())
        row = {"seconds": seconds, "token_share": inside / max(total, 1), "coverage": run.summary["coverage"]}
        if templates:
            mined = pl.read_parquet(os.path.join(out, "templates.parquet"))
            got = {re.sub(r"(\* )+\*", "*", t) for t in mined["template"].to_list()}
            want = {planted_text(t) for t, _, _ in TEMPLATES}
            correct = got & want
            p = len(correct) / max(len(got), 1)
            rc = len(correct) / len(want)
            row.update({"templates": len(got), "planted": len(want), "correct": len(correct), "precision": p,
                        "recall": rc, "f1": 2 * p * rc / max(p + rc, 1e-9), "missed": sorted(want - got),
                        "extra": sorted(got - want)[:20]})
        rows[label] = row
    result = {"docs": args.docs, "sigma": args.sigma, "min_len": args.min_len, "rows": rows}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "templates_eval.json"), "w") as fh:
        json.dump(result, fh, indent=1, ensure_ascii=False)
    t = rows["with templates"]
    v = rows["verbatim phrases only"]
    lines = [f"Planted templates ({args.docs} documents of prose, {len(TEMPLATES)} templates, sigma {args.sigma}, "
             f"L {args.min_len}):", "",
             "| run | templates mined | precision | recall | F1 | planted-template characters covered | seconds |",
             "|---|---:|---:|---:|---:|---:|---:|",
             f"| verbatim phrases only | - | - | - | - | {100 * v['token_share']:.1f}% | {v['seconds']:.1f} |",
             f"| with templates | {t['templates']} | {t['precision']:.2f} | {t['recall']:.2f} | {t['f1']:.2f} | "
             f"{100 * t['token_share']:.1f}% | {t['seconds']:.1f} |", "",
             "Missed: " + ("; ".join(t["missed"]) or "none"), "",
             "Extra (first 20): " + ("; ".join(t["extra"]) or "none")]
    with open(os.path.join(HERE, "results", "templates_eval.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
