"""Benchmark corpora: slices of the shared real corpora and the article's synthetics.

Each corpus is saved once as ``bench/work/<name>.npz`` (tokens, doc_offsets,
vocab_size) with its sigma and L, so every benchmark process loads the same
arrays.
"""
from __future__ import annotations

import os
import random
import string

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work")
SHARED = os.path.join(HERE, "..", "..", "shared", "corpora")


def save(name, tokens, doc_offsets, vocab_size):
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, name + ".npz")
    np.savez(path, tokens=np.asarray(tokens, np.int32), doc_offsets=np.asarray(doc_offsets, np.int64),
             vocab_size=np.int64(vocab_size))
    return path


def from_lists(docs):
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    flat = np.fromiter((t for d in ids for t in d), np.int32)
    off = np.concatenate(([0], np.cumsum([len(d) for d in ids]))).astype(np.int64)
    return flat, off, len(vocab)


def synthetic1(n_docs=200, words=5000, seed=1):
    """The article's Synthetic 1: documents of unique random 8-letter words and
    three planted phrases in 3, 5 and 4 documents (sigma 3, L 3)."""
    return from_lists(planted_lists(n_docs, words, seed)[0])


def planted_lists(n_docs: int, words: int, seed: int):
    """Synthetic 1 as token lists, and the planted phrases with their
    document counts (the tests' planted corpus too)."""
    rng = random.Random(seed)
    seen = set()

    def word():
        while True:
            w = "".join(rng.choice(string.ascii_lowercase) for _ in range(8))
            if w not in seen:
                seen.add(w)
                return w

    docs = [[word() for _ in range(words)] for _ in range(n_docs)]
    phrases = {"this is the first test sentence": 3, "another unique phrase for testing": 5, "a third sentence": 4}
    for phrase, k in phrases.items():
        for d in rng.sample(range(n_docs), k):
            at = rng.randrange(words)
            docs[d][at:at] = phrase.split()
    return docs, phrases


def synthetic2(n_phrases=300, n_docs=2000, words=400, copies=4, seed=2):
    """Synthetic 2: 300 heavily overlapping phrases of decreasing length (each
    a suffix of the previous one), planted in documents of Zipf words."""
    rng = np.random.default_rng(seed)
    master = np.arange(1_000_000, 1_000_000 + n_phrases + 1)
    vocab = 50_000
    zipf = np.minimum(rng.zipf(1.2, size=n_docs * words), vocab - 1)
    docs = [list(zipf[i * words:(i + 1) * words]) for i in range(n_docs)]
    for k in range(n_phrases):
        phrase = list(master[k:])  # length n_phrases + 1 - k
        for d in rng.choice(n_docs, size=copies, replace=False):
            at = int(rng.integers(0, words))
            docs[d][at:at] = phrase
    return from_lists(docs)


def zipf_sites(n_tokens, n_sites=20, vocab=300_000, doc_len=600, seed=3):
    """Natural-like text for scale: Zipf words, and per-site templates (header,
    navigation drawn from a site menu, footer) around each document body."""
    rng = np.random.default_rng(seed)
    templates = []
    for _ in range(n_sites):
        templates.append((rng.integers(0, vocab, 40), rng.integers(0, vocab, 120), rng.integers(0, vocab, 80)))
    parts, lengths = [], []
    total = 0
    while total < n_tokens:
        s = int(rng.integers(0, n_sites))
        head, menu, foot = templates[s]
        cut = int(rng.integers(40, 120))
        body = np.minimum(rng.zipf(1.15, size=int(rng.integers(doc_len // 2, doc_len * 2))), vocab - 1)
        doc = np.concatenate((head, menu[:cut], body, foot))
        parts.append(doc)
        lengths.append(doc.shape[0])
        total += doc.shape[0]
    tokens = np.concatenate(parts).astype(np.int32)
    off = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
    return tokens, off, vocab


def shared_slice(name, n_tokens):
    """The first documents of a shared corpus up to about n_tokens tokens."""
    import pyarrow.parquet as pq

    from engine.tokenizer import tokenize_arrow

    path = os.path.join(SHARED, name + ".parquet")
    if not os.path.exists(path):
        return None
    table = pq.read_table(path, columns=["text"])
    tk = tokenize_arrow(table["text"])
    d = int(np.searchsorted(tk.doc_offsets, n_tokens)) if n_tokens else tk.n_docs
    d = min(d, tk.n_docs)
    end = int(tk.doc_offsets[d])
    return tk.tokens[:end], tk.doc_offsets[:d + 1], len(tk.vocab)


def shared_path(name):
    return os.path.join(SHARED, name + ".parquet")


def periodic_runs(n_docs=200, body=2000, run=1000, seed=4):
    """Zipf documents, every second one holding a run of ``run`` copies of one
    token: the densely nested repeats where suffix methods win."""
    rng = np.random.default_rng(seed)
    docs = []
    for d in range(n_docs):
        b = list(rng.zipf(1.2, body) % 50000 + 10)
        if d % 2 == 0:
            b[body // 4:body // 4] = [1] * run
        docs.append(b)
    tokens = np.array([x for d in docs for x in d], np.int32)
    off = np.concatenate(([0], np.cumsum([len(d) for d in docs]))).astype(np.int64)
    return tokens, off, int(tokens.max()) + 1
