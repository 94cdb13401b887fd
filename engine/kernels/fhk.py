"""FHK kernels: LCP array (Kasai) and the bottom-up LCP-interval traversal.

The text is the token stream with one separator after each document, every
separator a distinct symbol, so no common prefix crosses a document end (the
LCP is clipped at the end of its document by construction).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .maximal import left_maximal


@njit(**NJIT)
def with_separators(tokens, doc_offsets, vocab_size):
    """The text: tokens with the distinct separator ``vocab_size + d`` after
    document ``d``; and for each text position its document (-1 for a separator)."""
    n_docs = doc_offsets.shape[0] - 1
    n = tokens.shape[0] + n_docs
    text = np.empty(n, np.int32)
    sdoc = np.empty(n, np.int32)
    k = 0
    for d in range(n_docs):
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            text[k] = tokens[p]
            sdoc[k] = d
            k += 1
        text[k] = vocab_size + d
        sdoc[k] = -1
        k += 1
    return text, sdoc


@njit(**NJIT)
def kasai(text, sa):
    """LCP array: ``lcp[i]`` = common prefix of suffixes ``sa[i-1]`` and ``sa[i]``
    (``lcp[0] = 0``).  O(n) (Kasai et al. 2001)."""
    n = text.shape[0]
    rank = np.empty(n, np.int32)
    for i in range(n):
        rank[sa[i]] = i
    lcp = np.zeros(n + 1, np.int32)
    h = 0
    for p in range(n):
        r = rank[p]
        if r > 0:
            q = sa[r - 1]
            while p + h < n and q + h < n and text[p + h] == text[q + h]:
                h += 1
            lcp[r] = h
            if h > 0:
                h -= 1
        else:
            h = 0
    return lcp


@njit(**NJIT)
def _find(nxt, k):
    root = k
    while nxt[root] != root:
        root = nxt[root]
    while nxt[k] != root:
        up = nxt[k]
        nxt[k] = root
        k = up
    return root


@njit(**NJIT)
def traverse(text, sdoc, doc_first, sa, lcp, n_docs, sigma, min_len, vocab_total):
    """Bottom-up traversal of the LCP intervals with distinct-document counts.

    Distinct documents of an interval = its size minus the corrections in its
    subtree, one correction for each suffix whose previous suffix (in suffix
    order) of the same document lies in the interval (Hui's method; the
    correction goes to the lowest interval holding both, found by binary
    search on the stack).  ``doc_first[d]`` is the text position where
    document ``d`` starts (for the left-maximality test).

    Returns
    -------
    max_lb, max_rb, max_len, max_df : maximal frequent phrases (intervals)
    f, owner_lb, owner_rb, owner_len, owner_df, owner : for every suffix the
        length of its longest frequent prefix of length >= min_len (0: none)
        and the interval that gave it.
    """
    n = sa.shape[0]
    st_lcp = np.empty(n + 2, np.int32)
    st_lb = np.empty(n + 2, np.int64)
    st_corr = np.zeros(n + 2, np.int64)
    st_freq = np.zeros(n + 2, np.uint8)
    last = np.full(n_docs, -1, np.int64)
    nxt = np.arange(n + 1).astype(np.int64)
    f = np.zeros(n, np.int32)
    owner = np.full(n, -1, np.int32)
    cap = 1024
    max_lb = np.empty(cap, np.int64)
    max_rb = np.empty(cap, np.int64)
    max_len = np.empty(cap, np.int32)
    max_df = np.empty(cap, np.int64)
    n_max = 0
    ocap = 1024
    own_lb = np.empty(ocap, np.int64)
    own_rb = np.empty(ocap, np.int64)
    own_len = np.empty(ocap, np.int32)
    own_df = np.empty(ocap, np.int64)
    n_own = 0
    lcnt = np.zeros(vocab_total, np.int64)
    ldf = np.zeros(vocab_total, np.int64)
    llast = np.full(vocab_total, -1, np.int64)
    touched = np.empty(vocab_total, np.int32)

    top = 0
    st_lcp[0] = 0
    st_lb[0] = 0
    st_corr[0] = 0
    st_freq[0] = 0
    for i in range(n + 1):
        cur = lcp[i] if i < n else 0
        if i == 0:
            cur = 0
        lb = i - 1 if i > 0 else 0
        carry_corr = 0
        carry_freq = 0
        have_carry = False
        while i > 0 and cur < st_lcp[top]:
            # pop the interval [st_lb[top], i - 1]
            ell = st_lcp[top]
            a = st_lb[top]
            b = i - 1
            corr = st_corr[top]
            childfreq = st_freq[top]
            top -= 1
            df = (b - a + 1) - corr
            frequent = df >= sigma
            if frequent and ell >= min_len:
                if not childfreq:
                    # left-maximality: no left-neighbour group reaches sigma
                    # (in text order, so that equal documents are adjacent)
                    occ = np.sort(sa[a:b + 1])
                    occ_doc = np.empty(occ.shape[0], np.int32)
                    for k in range(occ.shape[0]):
                        occ_doc[k] = sdoc[occ[k]]
                    ok = left_maximal(text, doc_first, occ, occ_doc, 0, occ.shape[0], sigma,
                                      lcnt, ldf, llast, touched)
                    if ok:
                        if n_max == max_lb.shape[0]:
                            max_lb = np.concatenate((max_lb, np.empty_like(max_lb)))
                            max_rb = np.concatenate((max_rb, np.empty_like(max_rb)))
                            max_len = np.concatenate((max_len, np.empty_like(max_len)))
                            max_df = np.concatenate((max_df, np.empty_like(max_df)))
                        max_lb[n_max] = a
                        max_rb[n_max] = b
                        max_len[n_max] = ell
                        max_df[n_max] = df
                        n_max += 1
                # suffixes of this interval not yet given a longer prefix
                k = _find(nxt, a)
                oid = -1
                while k <= b:
                    if oid == -1:
                        if n_own == own_lb.shape[0]:
                            own_lb = np.concatenate((own_lb, np.empty_like(own_lb)))
                            own_rb = np.concatenate((own_rb, np.empty_like(own_rb)))
                            own_len = np.concatenate((own_len, np.empty_like(own_len)))
                            own_df = np.concatenate((own_df, np.empty_like(own_df)))
                        oid = n_own
                        own_lb[oid] = a
                        own_rb[oid] = b
                        own_len[oid] = ell
                        own_df[oid] = df
                        n_own += 1
                    f[k] = ell
                    owner[k] = oid
                    nxt[k] = k + 1
                    k = _find(nxt, k + 1)
            # hand the subtree's corrections and frequency to the parent
            if cur <= st_lcp[top]:
                st_corr[top] += corr
                if frequent:
                    st_freq[top] = 1
            else:
                carry_corr += corr
                if frequent:
                    carry_freq = 1
                have_carry = True
            lb = a
        if i == n:
            break
        if i > 0 and cur > st_lcp[top]:
            top += 1
            st_lcp[top] = cur
            st_lb[top] = lb
            st_corr[top] = carry_corr if have_carry else 0
            st_freq[top] = carry_freq if have_carry else 0
        # the correction for suffix i: lowest stack interval holding last[d] and i
        d = sdoc[sa[i]]
        if d >= 0:
            p = last[d]
            if p >= 0:
                lo = 0
                hi = top
                while lo < hi:
                    mid = (lo + hi + 1) // 2
                    if st_lb[mid] <= p:
                        lo = mid
                    else:
                        hi = mid - 1
                st_corr[lo] += 1
            last[d] = i
    return (max_lb[:n_max], max_rb[:n_max], max_len[:n_max], max_df[:n_max],
            f, owner, own_lb[:n_own], own_len[:n_own], own_df[:n_own],
            own_rb[:n_own])
