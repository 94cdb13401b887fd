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
def _merged(starts, ends):
    """The union of ranges sorted by start, as disjoint ranges (touching ones
    joined)."""
    n = starts.shape[0]
    ms = np.empty(n, np.int64)
    me = np.empty(n, np.int64)
    m = 0
    for i in range(n):
        if ends[i] <= starts[i]:
            continue
        if m > 0 and starts[i] <= me[m - 1]:
            if ends[i] > me[m - 1]:
                me[m - 1] = ends[i]
        else:
            ms[m] = starts[i]
            me[m] = ends[i]
            m += 1
    return ms[:m], me[:m]


@njit(**NJIT)
def _emit(doc_offsets, d, a, b, k, rs, re_, rk, per_doc, m, fill):
    """The run [a, b) of kind k cut at document ends (from document ``d``
    on); returns the next run index and the document where the run ends."""
    while doc_offsets[d + 1] <= a:
        d += 1
    while a < b:
        e = min(b, doc_offsets[d + 1])
        if e > a:
            if fill:
                rs[m] = a
                re_[m] = e
                rk[m] = k
                per_doc[d] += e - a
            m += 1
        a = e
        if a < b:
            d += 1
    return m, d


@njit(**NJIT)
def _walk_runs(ps, pe, ts, te, doc_offsets, rs, re_, rk, per_doc, fill):
    """One walk of :func:`labelled_runs` over the disjoint phrase
    ranges ``ps, pe`` and template ranges ``ts, te``: the runs in position
    order, the template ranges' parts outside every phrase range as kind 2."""
    m = 0
    d = 0
    i = 0
    j = 0
    cur = -1  # the template range being cut: its part from cur to te[j]
    while i < ps.shape[0] or j < ts.shape[0]:
        if j < ts.shape[0] and cur < ts[j]:
            cur = ts[j]
        if j < ts.shape[0] and cur >= te[j]:
            j += 1
            continue
        if i < ps.shape[0] and (j == ts.shape[0] or ps[i] <= cur):
            m, d = _emit(doc_offsets, d, ps[i], pe[i], np.int8(1), rs, re_, rk, per_doc, m, fill)
            if j < ts.shape[0] and pe[i] > cur:
                cur = pe[i]
            i += 1
            continue
        # the template part [cur, next phrase start or its end)
        b = te[j]
        if i < ps.shape[0] and ps[i] < b:
            b = ps[i]
        m, d = _emit(doc_offsets, d, cur, b, np.int8(2), rs, re_, rk, per_doc, m, fill)
        cur = b
    return m


@njit(**NJIT)
def labelled_runs(p_start, p_end, t_start, t_end, doc_offsets):
    """Coverage by phrases (their ranges ``[p_start, p_end)``) and by the
    ranges ``[t_start, t_end)``, both sorted by start, and its runs.

    Returns the covered positions of each document (``doc_offsets``) and the
    runs of covered positions of one kind within one document: ``run_start,
    run_end, run_kind`` (1: a phrase covers them, 2: only a range does).
    Each kind's ranges merged into disjoint ones, then one walk over both
    that cuts the template ranges around the phrases' (twice: count, then
    fill): O(ranges + documents), nothing of the corpus' size."""
    ps, pe = _merged(p_start, p_end)
    ts, te = _merged(t_start, t_end)
    n_docs = doc_offsets.shape[0] - 1
    per_doc = np.zeros(n_docs, np.int64)
    e8 = np.empty(0, np.int8)
    e64 = np.empty(0, np.int64)
    m = _walk_runs(ps, pe, ts, te, doc_offsets, e64, e64, e8, per_doc, False)
    rs = np.empty(m, np.int64)
    re_ = np.empty(m, np.int64)
    rk = np.empty(m, np.int8)
    _walk_runs(ps, pe, ts, te, doc_offsets, rs, re_, rk, per_doc, True)
    return per_doc, rs, re_, rk
