"""A generated web-like corpus of any size, in Parquet shards (issue 8's scale bench).

    python bench/scale_corpus.py OUT_DIR --tokens 100M [--shard-tokens 20M] [--seed 0]

Each document belongs to one of ``--sites`` sites and reads: the site's header
template with a slot (a page number), a body of words drawn from a Zipf law
(s = 1.1 over 200,000 pronounceable pseudo-words), in a fifth of the
documents one of 5 cross-site banners (cookie notices), and the site's footer
with a year slot.  Body lengths are log-normal (median about 600 tokens).  So
the corpus has what real crawls have: a long Zipf tail of bigrams, per-site
templates, cross-site boilerplate.  Columns: doc_id, url, text.  Generation
runs in numpy and Arrow (about 20M tokens/s); the same seed gives the same
shards.
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "da", "pe", "zu", "ba", "ri", "no", "te", "gu",
             "ha", "el", "or", "an", "is", "um", "ex", "ol"]


def size(text: str) -> int:
    text = text.strip().upper()
    mult = {"K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9}.get(text[-1:], 1)
    return int(float(text[:-1] if text[-1:] in "KMBG" else text) * mult)


def vocabulary(rng, n: int) -> np.ndarray:
    """n distinct pseudo-words, the shortest first (Zipf's frequent words are short):
    every word of 1, 2, 3 syllables, then 4-syllable ones, shuffled within a length."""
    import itertools
    words = []
    for k in range(1, 5):
        level = ["".join(p) for p in itertools.product(SYLLABLES, repeat=k)]
        rng.shuffle(level)
        words += level[:n - len(words)]
        if len(words) >= n:
            break
    return np.array(words, dtype=object)


def zipf_sampler(rng, n: int, s: float = 1.1):
    cdf = np.cumsum(1.0 / np.arange(1, n + 1) ** s)
    cdf /= cdf[-1]
    return lambda k: np.minimum(np.searchsorted(cdf, rng.random(k)), n - 1).astype(np.int32)


def generate(out: str, tokens: int, shard_tokens: int = 20_000_000, sites: int = 2000, seed: int = 0,
             progress=print) -> dict:
    rng = np.random.default_rng(seed)
    vocab = vocabulary(rng, 200_000)
    n_words = vocab.shape[0]
    numbers = np.array([str(i) for i in range(1000)], dtype=object)
    all_words = pa.array(np.concatenate([vocab, numbers]).tolist(), pa.string())
    num_base = n_words
    draw = zipf_sampler(rng, n_words)
    headers = [draw(int(rng.integers(15, 40))) for _ in range(sites)]
    footers = [draw(int(rng.integers(20, 60))) for _ in range(sites)]
    banners = [draw(30) for _ in range(5)]
    os.makedirs(out, exist_ok=True)
    done = doc_id = shard = 0
    t = time.perf_counter()
    while done < tokens:
        want = min(shard_tokens, tokens - done)
        pieces, offsets, urls, ids = [], [0], [], []
        n = 0
        while n < want:
            site = int(rng.integers(sites))
            body = draw(max(20, int(rng.lognormal(6.4, 0.7))))
            parts = [headers[site], np.array([num_base + int(rng.integers(1000))], np.int32), body]
            if rng.random() < 0.2:
                parts.append(banners[int(rng.integers(5))])
            parts += [footers[site], np.array([num_base + 900 + int(rng.integers(26))], np.int32)]
            doc = np.concatenate(parts)
            pieces.append(doc)
            n += doc.shape[0]
            offsets.append(n)
            urls.append(f"https://site{site}.example/page/{doc_id}")
            ids.append(doc_id)
            doc_id += 1
        flat = np.concatenate(pieces)
        words = pc.take(all_words, pa.array(flat))
        lists = pa.ListArray.from_arrays(pa.array(np.asarray(offsets, np.int32)), words)
        text = pc.binary_join(lists, " ")
        pq.write_table(pa.table({"doc_id": pa.array(ids, pa.int64()), "url": pa.array(urls, pa.string()),
                                 "text": text}), os.path.join(out, f"part-{shard:05d}.parquet"),
                       compression="zstd", row_group_size=16384)
        done += n
        shard += 1
        if progress:
            progress(f"{out}: shard {shard}, {done / 1e6:.0f}M tokens, {done / (time.perf_counter() - t) / 1e6:.1f}M "
                     "tokens/s")
    return {"tokens": done, "documents": doc_id, "shards": shard}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--tokens", default="100M")
    ap.add_argument("--shard-tokens", default="20M")
    ap.add_argument("--sites", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    print(generate(a.out, size(a.tokens), size(a.shard_tokens), a.sites, a.seed))


if __name__ == "__main__":
    main()
