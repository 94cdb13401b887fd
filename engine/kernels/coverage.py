"""Coverage kernels: from covered ranges to per-document counts and spans."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT


@njit(**NJIT)
def sweep(n_tokens, doc_offsets, rng_pos, rng_len):
    """Covered tokens per document and the ranges that are not inside another.

    ``rng_pos`` must be increasing (at most one range per start position: a
    start belongs to one seed, and its occurrence stops growing at one node);
    ranges never cross a document end.  O(ranges + documents), no per-token
    array.

    Returns
    -------
    covered : int64 array (n_docs,)
    keep : int64 array
        Indices of the ranges not contained in an earlier-starting one.
    """
    n_docs = doc_offsets.shape[0] - 1
    covered = np.zeros(n_docs, np.int64)
    keep = np.empty(rng_pos.shape[0], np.int64)
    nk = 0
    d = 0
    end = -1
    for r in range(rng_pos.shape[0]):
        p = np.int64(rng_pos[r])
        e = p + rng_len[r]
        while doc_offsets[d + 1] <= p:
            d += 1
        if e > end:
            keep[nk] = r
            nk += 1
            covered[d] += e - max(p, end)
            end = e
    return covered, keep[:nk]


@njit(**NJIT)
def distinct_per_group(group_lo, group_hi, values, n_values):
    """Number of distinct ``values`` in each slice ``[group_lo, group_hi)``."""
    last = np.full(n_values, -1, np.int64)
    out = np.zeros(group_lo.shape[0], np.int64)
    for g in range(group_lo.shape[0]):
        c = 0
        for i in range(group_lo[g], group_hi[g]):
            v = values[i]
            if last[v] != g:
                last[v] = g
                c += 1
        out[g] = c
    return out


@njit(**NJIT)
def ranges_mask(n_tokens, starts, ends):
    """Bool mask over ``n_tokens`` positions: True inside any [start, end).

    Ranges in order of start (the miner's come so) are filled each only past
    the furthest end so far, so every covered position is written once:
    O(covered tokens + ranges), no scratch array.  Ranges out of order (the
    template occurrences, by template) go through a difference array and one
    running sum, O(tokens + ranges): sorting millions of them cost more."""
    n_r = starts.shape[0]
    in_order = True
    for r in range(1, n_r):
        if starts[r] < starts[r - 1]:
            in_order = False
            break
    if not in_order:
        diff = np.zeros(n_tokens + 1, np.int32)
        for r in range(n_r):
            if ends[r] > starts[r]:
                diff[starts[r]] += 1
                diff[ends[r]] -= 1
        out = np.empty(n_tokens, np.bool_)
        run = 0
        for p in range(n_tokens):
            run += diff[p]
            out[p] = run > 0
        return out
    out = np.zeros(n_tokens, np.bool_)
    hi = np.int64(0)
    for r in range(n_r):
        a = max(starts[r], hi)
        b = ends[r]
        if b > a:
            out[a:b] = True
            hi = b
    return out


@njit(**NJIT)
def labelled_runs(phrase_mask, starts, ends, doc_offsets):
    """Coverage by phrases and by ranges ``[starts, ends)``, and its runs.

    Returns the covered positions of each document (``doc_offsets``;
    covered: by a phrase or a range) and the runs of covered positions of
    one kind within one document: ``run_start, run_end, run_kind`` (1: a
    phrase covers them, 2: only a range does).  The ranges' mask
    (:func:`ranges_mask`), then one pass over the positions that writes
    each position's kind and counts the runs, and one over the kinds that
    writes them: O(tokens + ranges)."""
    n = phrase_mask.shape[0]
    in_range = ranges_mask(n, starts, ends)
    kind = np.empty(n, np.int8)
    m = 0
    for d in range(doc_offsets.shape[0] - 1):
        prev = 0
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            k = np.int8(1) if phrase_mask[p] else (np.int8(2) if in_range[p] else np.int8(0))
            kind[p] = k
            if k != prev and k != 0:
                m += 1
            prev = k
    rs = np.empty(m, np.int64)
    re_ = np.empty(m, np.int64)
    rk = np.empty(m, np.int8)
    per_doc = np.zeros(doc_offsets.shape[0] - 1, np.int64)
    j = 0
    for d in range(doc_offsets.shape[0] - 1):
        prev = 0
        c = 0
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            k = kind[p]
            if k != 0:
                c += 1
            if k != prev:
                if prev != 0:
                    re_[j - 1] = p
                if k != 0:
                    rs[j] = p
                    rk[j] = k
                    j += 1
            prev = k
        if prev != 0:
            re_[j - 1] = doc_offsets[d + 1]
        per_doc[d] = c
    return per_doc, rs, re_, rk
