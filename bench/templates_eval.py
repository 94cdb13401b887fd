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
only.  A mined template is judged when most of its occurrences overlap the
planted parts; the others are the background prose's own templates
(licence lines of man pages, for instance), counted apart.  Drain3 (the
log parser, default configuration) gets every line of the same documents
(each part is a line) and its clusters of at least sigma lines are judged
the same way.  Results: bench/results/templates_eval.json / .md.
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
    ("Subscribe to our newsletter and get {} percent off your first order today", (lambda r: str(r.randint(5, 40)),), 2),
    ("Subscribe to our newsletter and get {} delivered free every week", (lambda r: r.choice(PRODUCTS),), 2),
    ("Free shipping on orders over {} dollars within the continental united states only", (lambda r: str(r.choice([25, 35, 49, 50, 75, 99])),), 1),
]
CONTROLS = ["click here to read more articles from our archive of stories and essays",
            "this website uses cookies to improve your experience while you navigate through the website"]


def planted_text(t: str) -> str:
    """The template as the miner writes it: tokens lowercased, one `*` per
    slot, runs of `*` collapsed (Loghub's template-level comparison)."""
    import naive
    text = " ".join(naive.tokenize(t.replace("{}", " slotslot "))[0]).replace("slotslot", "*")
    return collapse(text)


def collapse(text: str) -> str:
    return re.sub(r"\*( \*)+", "*", text)


def build(n_docs: int, seed: int = 0):
    """Documents of prose windows with planted templates and controls, one
    part per line.  Returns the texts, the texts without the planted
    templates and controls (the background alone), URLs and the planted
    character spans per document."""
    import pyarrow.parquet as pq
    r = random.Random(seed)
    prose = pq.read_table(os.path.join(os.path.dirname(ROOT), "shared", "corpora", "prose.parquet"),
                          columns=["text"]).column("text").to_pylist()
    words = [w for t in prose[:2000] for w in (t or "").split()]
    sites = [f"site{i}.example" for i in range(10)]
    homes = {i: r.sample(range(10), k) for i, (_, _, k) in enumerate(TEMPLATES)}
    texts, background, urls, marks = [], [], [], []
    for d in range(n_docs):
        site = d % 10
        chosen = [i for i in range(len(TEMPLATES)) if site in homes[i] and r.random() < 0.5][:2]

        def window():
            k = r.randrange(len(words) - 200)
            return " ".join(words[k:k + r.randint(20, 60)])

        items = []
        for i in chosen:
            tpl, gens, _ = TEMPLATES[i]
            items.append(("TPL", i, tpl.format(*(g(r) for g in gens))))
        if r.random() < 0.3:
            items.append(CONTROLS[d % 2])
        r.shuffle(items)
        # every planted part stands between two windows of prose
        parts = [window()]
        for it in items:
            parts += [it, window()]
        background.append(" ".join(p for p in parts if isinstance(p, str) and p not in CONTROLS))
        text, spans = "", []
        for p in parts:
            if isinstance(p, tuple):
                spans.append((p[1], len(text), len(text) + len(p[2])))
                text += p[2] + "\n"
            else:
                text += p + "\n"
        texts.append(text)
        urls.append(f"https://{sites[site]}/page{d}")
        marks.append(spans)
    return texts, background, urls, marks


def mined_templates(texts, urls, marks, sigma, min_len, work, name):
    """Template texts (runs of * collapsed) of a --templates run, split into
    those whose occurrences mostly overlap the planted parts (judged) and the
    others (templates of the background prose), its result folder, Run,
    seconds, snapshot and store."""
    import numpy as np
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.api import ingest, mine
    from engine.tokenizer import tokenize_arrow
    snap = os.path.join(work, name + ".parquet")
    pq.write_table(pa.table({"text": texts, "url": urls}), snap)
    db = os.path.join(work, name + ".duckdb")
    for f in (db, db + ".wal"):
        if os.path.exists(f):
            os.remove(f)
    ingest(snap, db=db)
    out = os.path.join(work, "out-" + name)
    t = time.perf_counter()
    run = mine(snap, sigma, min_len, db=db, out=out, templates=True)
    seconds = time.perf_counter() - t
    tk = tokenize_arrow(pa.array(texts))
    tpl = pl.read_parquet(os.path.join(out, "templates.parquet"))
    occ = pl.read_parquet(os.path.join(out, "template_occurrences.parquet"))
    g0 = tk.doc_offsets[occ["doc_id"].to_numpy()] + occ["start"].to_numpy()
    g1 = tk.doc_offsets[occ["doc_id"].to_numpy()] + occ["end"].to_numpy() - 1
    cs, ce = tk.span_start[g0], tk.span_end[g1]
    hit = np.array([any(a < ce_ and cs_ < b for _, a, b in marks[d])
                    for d, cs_, ce_ in zip(occ["doc_id"].to_list(), cs.tolist(), ce.tolist())], bool)
    share = pl.DataFrame({"template_id": occ["template_id"], "hit": hit}).group_by("template_id").agg(
        pl.col("hit").mean())
    planted_side = set(share.filter(pl.col("hit") >= 0.5)["template_id"].to_list())
    judged, background = set(), set()
    for i, text in zip(tpl["template_id"].to_list(), tpl["template"].to_list()):
        (judged if i in planted_side else background).add(collapse(text))
    return judged, background - judged, out, run, seconds, snap, db


def drain_templates(texts, marks, sigma):
    """Drain3 (default configuration: depth 4, similarity 0.4) over every
    line; the templates with a slot of clusters with at least sigma lines
    (a template without one is a verbatim phrase), in the miner's form
    (tokens lowercased, ``<*>`` as ``*``, runs collapsed), split into
    clusters of mostly planted lines (judged) and the others."""
    import naive
    from drain3 import TemplateMiner
    from drain3.template_miner_config import TemplateMinerConfig
    cfg = TemplateMinerConfig()
    cfg.profiling_enabled = False
    tm = TemplateMiner(config=cfg)
    planted_lines = {}
    t = time.perf_counter()
    for d, text in enumerate(texts):
        pos = 0
        for line in text.split("\n"):
            planted = any(a <= pos < b for _, a, b in marks[d])
            pos += len(line) + 1
            if line.strip():
                cid = tm.add_log_message(line)["cluster_id"]
                n, k = planted_lines.get(cid, (0, 0))
                planted_lines[cid] = (n + 1, k + int(planted))
    seconds = time.perf_counter() - t
    judged, background = set(), set()
    for c in tm.drain.clusters:
        if c.size >= sigma and "<*>" in c.get_template():
            toks = naive.tokenize(c.get_template().replace("<*>", " slotslot "))[0]
            text = collapse(" ".join(toks).replace("slotslot", "*"))
            n, k = planted_lines.get(c.cluster_id, (1, 0))
            (judged if 2 * k >= n else background).add(text)
    return judged, background - judged, seconds


def scores(judged, background, want):
    """Template-level precision, recall, F1 over the judged templates (those
    on the planted parts); the background prose's own templates are counted
    apart."""
    correct = judged & want
    p = len(correct) / max(len(judged), 1)
    rc = len(correct) / len(want)
    return {"templates": len(judged) + len(background), "background": len(background), "correct": len(correct),
            "precision": p, "recall": rc, "f1": 2 * p * rc / max(p + rc, 1e-9),
            "missed": sorted(want - judged), "extra": sorted(judged - want)[:20]}


def main():
    import numpy as np
    import polars as pl

    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=600)
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-len", type=int, default=10)
    args = ap.parse_args()
    work = os.path.join(HERE, "work", "templates-eval")
    os.makedirs(work, exist_ok=True)
    texts, _, urls, marks = build(args.docs)
    want = {planted_text(t) for t, _, _ in TEMPLATES}
    got, bg_got, out, run, seconds, snap, db = mined_templates(texts, urls, marks, args.sigma, args.min_len, work,
                                                               "planted")
    from engine.api import mine
    t = time.perf_counter()
    vrun = mine(snap, args.sigma, args.min_len, db=db, out=os.path.join(work, "out-verbatim"))
    vseconds = time.perf_counter() - t

    def token_share(span_rows):
        covered = {}
        for d, a, b in span_rows:
            covered.setdefault(d, []).append((a, b))
        inside = total = 0
        for d, spans_d in enumerate(marks):
            cov = np.zeros(len(texts[d]) + 1, bool)
            for a, b in covered.get(d, []):
                cov[a:b] = True
            for _, a, b in spans_d:
                chars = [i for i in range(a, b) if texts[d][i].isalnum()]
                total += len(chars)
                inside += int(cov[chars].sum())
        return inside / max(total, 1)

    from engine.store import Store
    with Store(db, read_only=True) as st:
        vspans = st.query("SELECT d.doc_id, s.char_start, s.char_end FROM run_spans s JOIN documents d "
                          "ON d.snapshot_id = ? AND d.doc_index = s.doc_index WHERE s.run_id = ?",
                          [vrun.snapshot_id, vrun.run_id]).iter_rows()
        vshare = token_share(list(vspans))
    tshare = token_share(pl.read_parquet(os.path.join(out, "spans.parquet"))
                         .select("doc_id", "char_start", "char_end").iter_rows())
    drain_got, drain_bg, drain_s = drain_templates(texts, marks, args.sigma)
    rows = {
        "verbatim phrases only": {"seconds": vseconds, "token_share": vshare, "coverage": vrun.summary.coverage},
        "boilerscope --templates": {"seconds": seconds, "token_share": tshare, "coverage": run.summary.coverage,
                                    **scores(got, bg_got, want)},
        "Drain3 (lines)": {"seconds": drain_s, **scores(drain_got, drain_bg, want)},
    }
    result = {"docs": args.docs, "sigma": args.sigma, "min_len": args.min_len, "planted": sorted(want),
              "background_templates": sorted(bg_got), "rows": rows}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "templates_eval.json"), "w") as fh:
        json.dump(result, fh, indent=1, ensure_ascii=False)
    lines = [f"Planted templates ({args.docs} documents of prose, {len(TEMPLATES)} templates, sigma {args.sigma}, "
             f"L {args.min_len}; templates of the background prose, in brackets, are not judged):", "",
             "| method | templates (background) | precision | recall | F1 | planted-template characters covered |"
             " seconds |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, row in rows.items():
        share = f"{100 * row['token_share']:.1f}%" if "token_share" in row else "-"
        if "f1" in row:
            lines.append(f"| {label} | {row['templates']} ({row['background']}) | {row['precision']:.2f} | "
                         f"{row['recall']:.2f} | {row['f1']:.2f} | {share} | {row['seconds']:.1f} |")
        else:
            lines.append(f"| {label} | - | - | - | - | {share} | {row['seconds']:.1f} |")
    for label in ("boilerscope --templates", "Drain3 (lines)"):
        lines += ["", f"{label}, missed: " + ("; ".join(rows[label]["missed"]) or "none"),
                  "", f"{label}, extra: " + ("; ".join(rows[label]["extra"]) or "none")]
    with open(os.path.join(HERE, "results", "templates_eval.md"), "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
