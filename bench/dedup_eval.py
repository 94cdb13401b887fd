"""Near-duplicate detection measured against known duplicates.

    python bench/dedup_eval.py            # planted set from data/demo.parquet (+ webdocs pairs if ../shared)

(a) Planted near-duplicates made from real pages of the demo snapshot (sites
without versioned or translated copies): word insertions, deletions and
substitutions at 2-10%, and line-block moves; every other page of those sites
shares only its site template with the rest (template look-alikes).
(b) The labelled real pairs of ../shared/corpora/webdocs_pairs.parquet: Boost
and kernel version pairs as positives, Apache translations as negatives,
handbook translations reported apart.

For every configuration (description, sketch scheme, w, n, t) on raw text and
with the mined boilerplate removed: pair precision / recall / F1 and B-cubed
F1 for each cluster definition, with time; and datasketch's MinHashLSH
(5-shingles, 128 permutations, connected components) as the peer.
Results: bench/results/dedup.json and dedup.md.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import sys
import time

import numpy as np
import polars as pl
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)

from engine.planner import mine_tokens  # noqa: E402
from engine.neardup import DedupConfig, detect  # noqa: E402
from engine.tokenizer import tokenize_arrow  # noqa: E402

SITES = ("docs.oracle.com", "docs.scipy.org", "pandas.pydata.org", "www.postgresql.org",
         "docs.djangoproject.com", "gcc.gnu.org")


def content_jaccard_pairs(texts, threshold=0.5, w=5):
    """Pairs of pages whose content (template removed) already has exact
    w-shingle Jaccard >= threshold: real near-duplicates of the demo, left out
    of the planted set so that its only duplicates are the planted ones.
    Exact counts from an inverted index on shingles; no sketch involved."""
    tk = tokenize_arrow(pa.array(texts))
    keep = boilerplate_keep(tk.tokens, tk.doc_offsets)
    sets = []
    for d in range(len(texts)):
        seq = [int(x) for x, k in zip(tk.tokens[tk.doc_offsets[d]:tk.doc_offsets[d + 1]],
                                       keep[tk.doc_offsets[d]:tk.doc_offsets[d + 1]]) if k]
        sets.append({tuple(seq[i:i + w]) for i in range(max(1, len(seq) - w + 1))} if seq else set())
    index = {}
    for d, sh in enumerate(sets):
        for x in sh:
            index.setdefault(x, []).append(d)
    common = {}
    for docs in index.values():
        if len(docs) > 200:
            continue
        for a, b in itertools.combinations(docs, 2):
            common[(a, b)] = common.get((a, b), 0) + 1
    return {p for p, c in common.items() if c / (len(sets[p[0]]) + len(sets[p[1]]) - c) >= threshold}


def planted(seed=7, n_bases=150):
    rng = random.Random(seed)
    demo = pl.read_parquet(os.path.join(ROOT, "data", "demo.parquet")).filter(pl.col("site").is_in(SITES))
    texts = demo["text"].to_list()
    ambiguous = {d for p in content_jaccard_pairs(texts) for d in p}
    texts = [t for i, t in enumerate(texts) if i not in ambiguous]
    words = [w for t in texts[:200] for w in t.split()][:50000]
    bases = rng.sample(range(len(texts)), n_bases)
    docs, truth = list(texts), list(range(len(texts)))
    for b in bases:
        for _ in range(rng.randint(1, 3)):
            rate = rng.choice((0.02, 0.05, 0.1))
            toks = texts[b].split(" ")
            out = []
            for w in toks:
                r = rng.random()
                if r < rate / 3:
                    continue  # deletion
                if r < 2 * rate / 3:
                    out.append(rng.choice(words))  # substitution
                    continue
                out.append(w)
                if r < rate:
                    out.append(rng.choice(words))  # insertion
            text = " ".join(out)
            lines = text.split("\n")
            if len(lines) > 6 and rng.random() < 0.5:  # move a block of lines
                i = rng.randrange(len(lines) - 3)
                block = lines[i:i + 3]
                del lines[i:i + 3]
                j = rng.randrange(len(lines))
                lines[j:j] = block
                text = "\n".join(lines)
            docs.append(text)
            truth.append(b)
    return docs, np.array(truth)


def boilerplate_keep(tokens, offsets, sigma=20, L=10):
    res = mine_tokens(tokens, offsets, int(tokens.max()) + 1, sigma, L)
    keep = np.ones(tokens.shape[0], np.uint8)
    for p, m in zip(res.rng_pos.tolist(), res.rng_len.tolist()):
        keep[p:p + m] = 0
    return keep


def true_pairs(truth):
    groups = {}
    for i, g in enumerate(truth.tolist()):
        groups.setdefault(g, []).append(i)
    return {p for m in groups.values() for p in itertools.combinations(sorted(m), 2)}


def scores(clusters: list[list[int]], truth: np.ndarray) -> dict:
    pred = set()
    member = {}
    for c in clusters:
        c = sorted(c)
        for p in itertools.combinations(c, 2):
            pred.add(p)
        for d in c:
            member.setdefault(d, set()).update(c)
    gold = true_pairs(truth)
    tp = len(pred & gold)
    prec = tp / len(pred) if pred else 1.0
    rec = tp / len(gold) if gold else 1.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    # B-cubed (overlapping clusters: a document's predicted cluster is the union of its clusters)
    tgroups = {}
    for i, g in enumerate(truth.tolist()):
        tgroups.setdefault(g, set()).add(i)
    bp = br = 0.0
    n = truth.shape[0]
    for d in range(n):
        c = member.get(d, {d})
        t = tgroups[truth[d]]
        inter = len(c & t)
        bp += inter / len(c)
        br += inter / len(t)
    bp, br = bp / n, br / n
    bf = 2 * bp * br / (bp + br) if bp + br else 0.0
    return {"pair_precision": prec, "pair_recall": rec, "pair_f1": f1, "bcubed_f1": bf, "pred_pairs": len(pred)}


def our_clusters(out, definition):
    df = out.clusters.filter(pl.col("definition").is_in([definition, "exact"]))
    return [g for g in df.group_by("cluster_id").agg("doc_id")["doc_id"].to_list()]


def datasketch_peer(tokens, offsets, vocab, threshold, w=5, perms=128):
    from datasketch import MinHash, MinHashLSH
    t = time.perf_counter()
    lsh = MinHashLSH(threshold=threshold, num_perm=perms)
    mhs = []
    for d in range(offsets.shape[0] - 1):
        toks = [vocab[i] for i in tokens[offsets[d]:offsets[d + 1]]]
        m = MinHash(num_perm=perms)
        m.update_batch([" ".join(toks[i:i + w]).encode() for i in range(max(1, len(toks) - w + 1))])
        lsh.insert(d, m)
        mhs.append(m)
    parent = list(range(len(mhs)))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for d, m in enumerate(mhs):
        for e in lsh.query(m):
            a, b = find(d), find(e)
            if a != b:
                parent[max(a, b)] = min(a, b)
    comps = {}
    for d in range(len(mhs)):
        comps.setdefault(find(d), []).append(d)
    return [c for c in comps.values() if len(c) > 1], time.perf_counter() - t


def main():
    docs, truth = planted()
    tk = tokenize_arrow(pa.array(docs))
    tokens, offsets, vocab = tk.tokens, tk.doc_offsets, tk.vocab
    keep = boilerplate_keep(tokens, offsets)
    ids = np.arange(len(docs))
    rows = []
    grid = []
    for scheme in ("bottom", "minhash"):
        for desc, w in (("shingles", 3), ("shingles", 5), ("lexical", 1)):
            for n in (64, 128):
                for frac in (0.25, 0.375, 0.5, 0.75):
                    grid.append(DedupConfig(method=desc, sketch=scheme, shingle=w, sketch_size=n, threshold=max(1, int(n * frac))))
    def run(cfg, mode):
        t = time.perf_counter()
        out = detect(tokens, offsets, ids, cfg, keep=None if mode == "raw" else keep, vocab=vocab)
        el = time.perf_counter() - t
        for definition in ("components", "fci", "cliques"):
            s = scores(our_clusters(out, definition), truth)
            rows.append({"method": "boilerscope", "description": cfg.method, "scheme": cfg.sketch,
                         "w": cfg.shingle, "n": cfg.sketch_size, "t": cfg.threshold, "text": mode, "definition": definition,
                         "seconds": el, **s})

    # the grid on boilerplate-free text; raw text for the default and the best
    for cfg in grid:
        run(cfg, "boilerplate removed")
    best_row = max((r for r in rows if r["definition"] == "fci"), key=lambda r: r["pair_f1"])
    best_cfg = DedupConfig(method=best_row["description"], sketch=best_row["scheme"], shingle=best_row["w"],
                           sketch_size=best_row["n"], threshold=best_row["t"])
    run(best_cfg, "raw")
    if best_cfg != DedupConfig():
        run(DedupConfig(), "raw")
        if not any(r["t"] == DedupConfig().threshold and r["n"] == DedupConfig().sketch_size and r["w"] == DedupConfig().shingle
                   and r["scheme"] == DedupConfig().sketch and r["description"] == DedupConfig().method
                   for r in rows if r["text"] == "boilerplate removed"):
            run(DedupConfig(), "boilerplate removed")
    for th in (0.3, 0.5, 0.7, 0.9):
        clusters, el = datasketch_peer(tokens, offsets, vocab, th)
        rows.append({"method": f"datasketch MinHashLSH {th}", "description": "shingles", "scheme": "minhash",
                     "w": 5, "n": 128, "t": None, "text": "raw", "definition": "components", "seconds": el,
                     **scores(clusters, truth)})
    frame = pl.DataFrame(rows)
    best = frame.filter((pl.col("method") == "boilerscope") & (pl.col("definition") == "fci")
                        & (pl.col("text") == "boilerplate removed")).sort("pair_f1", descending=True).head(1)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    result = {"documents": len(docs), "true_pairs": len(true_pairs(truth)), "rows": rows,
              "best_fci_boilerplate_removed": best.to_dicts()}
    with open(os.path.join(HERE, "results", "dedup.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    md = [f"Planted set: {len(docs)} documents from 6 sites of data/demo.parquet, "
          f"{result['true_pairs']} true pairs; the rest share only their site template (pages that were "
          "already near-duplicates of each other, content Jaccard >= 0.5, are left out).", "",
          "Best configuration per method and text (by pair F1):", "",
          "| method | text | definition | description | scheme | w | n | t | pair P | pair R | pair F1 | B-cubed F1 | s |",
          "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    top = (frame.sort("pair_f1", descending=True)
           .group_by(["method", "text", "definition"], maintain_order=True).head(1)
           .sort(["method", "text", "definition"]))
    for r in top.iter_rows(named=True):
        md.append(f"| {r['method']} | {r['text']} | {r['definition']} | {r['description']} | {r['scheme']} | "
                  f"{r['w']} | {r['n']} | {r['t'] if r['t'] is not None else '-'} | {r['pair_precision']:.3f} | "
                  f"{r['pair_recall']:.3f} | {r['pair_f1']:.3f} | {r['bcubed_f1']:.3f} | {r['seconds']:.2f} |")
    default = DedupConfig()
    d = frame.filter((pl.col("method") == "boilerscope") & (pl.col("description") == default.method)
                     & (pl.col("scheme") == default.sketch) & (pl.col("w") == default.shingle)
                     & (pl.col("n") == default.sketch_size) & (pl.col("t") == default.threshold))
    md += ["", f"Default configuration ({default.method}, {default.sketch}, w {default.shingle}, n {default.sketch_size}, "
           f"t {default.threshold}):", "", "| text | definition | pair P | pair R | pair F1 | B-cubed F1 |",
           "|---|---|---:|---:|---:|---:|"]
    for r in d.sort(["text", "definition"]).iter_rows(named=True):
        md.append(f"| {r['text']} | {r['definition']} | {r['pair_precision']:.3f} | {r['pair_recall']:.3f} | "
                  f"{r['pair_f1']:.3f} | {r['bcubed_f1']:.3f} |")
    md.append("")
    with open(os.path.join(HERE, "results", "dedup.md"), "w") as fh:
        fh.write("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__" and "--pairs" not in sys.argv:
    main()


def webdocs_pairs(cfg=None):
    """(b) The labelled real pairs: Boost and kernel versions (positives),
    Apache translations (negatives), handbook translations apart.  A pair is
    predicted a duplicate when it shares at least t sketch elements."""
    shared = os.path.join(ROOT, "..", "shared", "corpora")
    path = os.path.join(shared, "webdocs_pairs.parquet")
    if not os.path.exists(path):
        return None
    cfg = cfg or DedupConfig()
    pairs = pl.read_parquet(path)
    docs = sorted(set(pairs["doc_id_a"].to_list()) | set(pairs["doc_id_b"].to_list()))
    web = pl.read_parquet(os.path.join(shared, "webdocs.parquet"), columns=["doc_id", "text"])
    web = web.filter(pl.col("doc_id").is_in(docs)).sort("doc_id")
    tk = tokenize_arrow(web["text"].to_arrow())
    ids = web["doc_id"].to_numpy()
    keep = boilerplate_keep(tk.tokens, tk.doc_offsets)
    out = {}
    for mode in ("raw", "boilerplate removed"):
        t = time.perf_counter()
        res = detect(tk.tokens, tk.doc_offsets, ids, cfg, keep=None if mode == "raw" else keep, vocab=tk.vocab)
        el = time.perf_counter() - t
        similar = set(zip(res.pairs["doc_a"].to_list(), res.pairs["doc_b"].to_list()))
        for g in res.clusters.filter(pl.col("definition") == "exact").group_by("cluster_id").agg("doc_id")["doc_id"]:
            similar |= set(itertools.combinations(sorted(g), 2))
        kinds = {}
        for r in pairs.iter_rows(named=True):
            a, b = sorted((r["doc_id_a"], r["doc_id_b"]))
            k = kinds.setdefault(r["kind"], [0, 0])
            k[0] += (a, b) in similar
            k[1] += 1
        out[mode] = {"seconds": el, "kinds": {k: {"predicted": v[0], "pairs": v[1], "share": v[0] / v[1]}
                                              for k, v in kinds.items()}}
    return out


def main_pairs():
    res = webdocs_pairs()
    if res is None:
        return ""
    lines = ["", "Labelled real pairs (webdocs_pairs.parquet), default configuration; share of pairs "
             "predicted duplicate (positives: higher is better; Apache translations are negatives):", "",
             "| kind | pairs | raw | boilerplate removed |", "|---|---:|---:|---:|"]
    for kind in sorted(res["raw"]["kinds"]):
        r, c = res["raw"]["kinds"][kind], res["boilerplate removed"]["kinds"][kind]
        lines.append(f"| {kind} | {r['pairs']} | {r['share']:.3f} | {c['share']:.3f} |")
    lines.append("")
    return "\n".join(lines), res


if __name__ == "__main__" and "--pairs" in sys.argv:
    text, res = main_pairs()
    with open(os.path.join(HERE, "results", "dedup_pairs.json"), "w") as fh:
        json.dump(res, fh, indent=1)
    with open(os.path.join(HERE, "results", "dedup.md"), "a") as fh:
        fh.write(text)
    print(text)
