"""Near-duplicate kernels: document hashes, shingles, sketches, candidate pairs."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import mix64 as _mix

EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(**NJIT)
def doc_hashes(tokens, doc_offsets):
    """64-bit hash of each document's token stream (exact duplicates share it)."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.empty(n_docs, np.uint64)
    for d in range(n_docs):
        h = np.uint64(0xCBF29CE484222325) ^ np.uint64(doc_offsets[d + 1] - doc_offsets[d])
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            h = (h ^ np.uint64(np.uint32(tokens[p]))) * np.uint64(0x100000001B3)
        out[d] = _mix(h)
    return out


@njit(**NJIT)
def filter_tokens(tokens, doc_offsets, keep):
    """The token stream without the positions where ``keep`` is 0."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.empty(tokens.shape[0], np.int32)
    off = np.zeros(n_docs + 1, np.int64)
    k = 0
    for d in range(n_docs):
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            if keep[p]:
                out[k] = tokens[p]
                k += 1
        off[d + 1] = k
    return out[:k], off


@njit(**NJIT)
def _shingles(tokens, s, e, w):
    """Hashes of the w-token shingles of tokens[s:e] (uint64 token keys; one
    shingle of the whole document when it is shorter than w)."""
    m = e - s - w + 1
    if e - s == 0:
        return np.empty(0, np.uint64)
    if m < 1:
        m = 1
        w = e - s
    out = np.empty(m, np.uint64)
    for i in range(m):
        h = np.uint64(0xCBF29CE484222325)
        for k in range(w):
            h = _mix(h ^ tokens[s + i + k])
        out[i] = _mix(h)
    return out


@njit(**NJIT)
def sketch_bottom(tokens, doc_offsets, w, n, seed):
    """Scheme 1: the n minimal elements of one permutation (a seeded hash) of
    each document's shingle set.  Missing slots hold EMPTY."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.full((n_docs, n), EMPTY, np.uint64)
    s64 = np.uint64(seed)
    for d in range(n_docs):
        sh = _shingles(tokens, doc_offsets[d], doc_offsets[d + 1], w)
        if sh.shape[0] == 0:
            continue
        for i in range(sh.shape[0]):
            sh[i] = _mix(sh[i] ^ s64)
        sh = np.sort(sh)
        k = 0
        last = EMPTY
        for i in range(sh.shape[0]):
            if sh[i] != last and sh[i] != EMPTY:
                out[d, k] = sh[i]
                last = sh[i]
                k += 1
                if k == n:
                    break
    return out


@njit(**NJIT)
def sketch_minhash(tokens, doc_offsets, w, n, seed):
    """Scheme 2: the minimal element of each of n permutations.  Element j is
    tagged with j so that equal minima of different permutations differ."""
    n_docs = doc_offsets.shape[0] - 1
    out = np.full((n_docs, n), EMPTY, np.uint64)
    seeds = np.empty(n, np.uint64)
    for j in range(n):
        seeds[j] = _mix(np.uint64(seed) + np.uint64(j + 1) * np.uint64(0x9E3779B97F4A7C15))
    for d in range(n_docs):
        sh = _shingles(tokens, doc_offsets[d], doc_offsets[d + 1], w)
        if sh.shape[0] == 0:
            continue
        for j in range(n):
            best = EMPTY
            for i in range(sh.shape[0]):
                v = _mix(sh[i] ^ seeds[j])
                if v < best:
                    best = v
            out[d, j] = (best >> np.uint64(8)) | (np.uint64(j & 0xFF) << np.uint64(56))
    return out


@njit(**NJIT)
def candidate_pairs(elem_sorted, doc_sorted, n_docs, max_postings):
    """All document pairs sharing an element, with the number of shared
    elements, from (element, document) entries sorted by element.

    Postings longer than ``max_postings`` are skipped (stop elements).
    Returns (pair keys a * n_docs + b with a < b, sorted; counts; skipped)."""
    m = elem_sorted.shape[0]
    total = 0
    i = 0
    skipped = 0
    while i < m:
        j = i
        while j < m and elem_sorted[j] == elem_sorted[i]:
            j += 1
        k = j - i
        if k <= max_postings:
            total += k * (k - 1) // 2
        else:
            skipped += 1
        i = j
    keys = np.empty(total, np.int64)
    t = 0
    i = 0
    while i < m:
        j = i
        while j < m and elem_sorted[j] == elem_sorted[i]:
            j += 1
        if j - i <= max_postings:
            for a in range(i, j):
                for b in range(a + 1, j):
                    x = doc_sorted[a]
                    y = doc_sorted[b]
                    if x > y:
                        x, y = y, x
                    if x != y:
                        keys[t] = np.int64(x) * n_docs + y
                        t += 1
        i = j
    keys = np.sort(keys[:t])
    # run-length count
    uk = np.empty(t, np.int64)
    uc = np.empty(t, np.int64)
    u = 0
    i = 0
    while i < t:
        j = i
        while j < t and keys[j] == keys[i]:
            j += 1
        uk[u] = keys[i]
        uc[u] = j - i
        u += 1
        i = j
    return uk[:u], uc[:u], skipped
