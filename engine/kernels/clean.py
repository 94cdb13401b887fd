"""Kernels of the cut rule: mark token positions covered by stop L-grams."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import FNV_OFFSET, FNV_PRIME
from .templates import SLOT


@njit(**NJIT)
def _hash_window(tokens, p, L):
    """FNV-1a of the L token ids from ``p`` (O(L); the stop L-grams are few)."""
    h = FNV_OFFSET
    for k in range(L):
        h = (h ^ np.uint64(np.uint32(tokens[p + k]))) * FNV_PRIME
    h ^= h >> np.uint64(29)
    return h


@njit(**NJIT)
def gram_hashes(grams, L):
    """Hash of each row of ``grams`` (an (m, L) int32 array)."""
    out = np.empty(grams.shape[0], np.uint64)
    for i in range(grams.shape[0]):
        out[i] = _hash_window(grams[i], 0, L)
    return out


@njit(**NJIT)
def mark_cut(tokens, doc_offsets, L, sorted_hash, sorted_grams):
    """1 for every position inside an occurrence of one of the L-grams.

    ``sorted_hash`` is sorted; ``sorted_grams`` holds the grams in the same
    order, so a hash match is confirmed token by token (exact).
    """
    n = tokens.shape[0]
    cut = np.zeros(n, np.uint8)
    m = sorted_hash.shape[0]
    if m == 0:
        return cut
    for d in range(doc_offsets.shape[0] - 1):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        end = s
        for p in range(s, e - L + 1):
            h = _hash_window(tokens, p, L)
            i = np.searchsorted(sorted_hash, h)
            found = False
            while i < m and sorted_hash[i] == h:
                same = True
                for k in range(L):
                    if sorted_grams[i, k] != tokens[p + k]:
                        same = False
                        break
                if same:
                    found = True
                    break
                i += 1
            if found:
                end = p + L
            if p < end:
                cut[p] = 1
        for p in range(max(s, e - L + 1), e):
            if p < end:
                cut[p] = 1
    return cut




@njit(**NJIT)
def _longest_match(tokens, p, e, pats, a, b, w_max, pos, width):
    """The end of the longest run ``tokens[p:end]`` (``end <= e``) matching
    the pattern ``pats[a:b]`` (each SLOT 1..w_max tokens), or -1.
    Backtracking over the slot widths, O(w_max ** slots) at worst."""
    m = b - a
    for i in range(m + 1):
        width[i] = 0
    pos[0] = p
    i = 0
    best = -1
    while i >= 0:
        if i == m:
            if pos[m] > best:
                best = pos[m]
            i -= 1
            continue
        tok = pats[a + i]
        if tok == SLOT:
            w = width[i] + 1
            if w <= w_max and pos[i] + w <= e:
                width[i] = w
                pos[i + 1] = pos[i] + w
                i += 1
                continue
        elif width[i] == 0 and pos[i] < e and tokens[pos[i]] == tok:
            width[i] = 1
            pos[i + 1] = pos[i] + 1
            i += 1
            continue
        width[i] = 0
        i -= 1
    return best


@njit(**NJIT)
def mark_templates(tokens, doc_offsets, pats, pat_off, firsts, order, w_max):
    """1 for every position inside an occurrence (in one document) of one of
    the template patterns ``pats[pat_off[k]:pat_off[k + 1]]``.

    ``firsts`` holds the patterns' first tokens sorted, ``order`` the pattern
    of each; a position is tried against the patterns beginning with its
    token only.  All the occurrences from one start cover one run up to the
    longest, so that run is marked.  O(n log k + candidates x w_max ** slots).
    """
    n = tokens.shape[0]
    out = np.zeros(n, np.uint8)
    k = firsts.shape[0]
    if k == 0:
        return out
    longest = 0
    for j in range(pat_off.shape[0] - 1):
        longest = max(longest, pat_off[j + 1] - pat_off[j])
    pos = np.empty(longest + 1, np.int64)
    width = np.zeros(longest + 1, np.int64)
    for d in range(doc_offsets.shape[0] - 1):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        cover = s
        for p in range(s, e):
            t = tokens[p]
            i = np.searchsorted(firsts, t)
            while i < k and firsts[i] == t:
                j = order[i]
                end = _longest_match(tokens, p, e, pats, pat_off[j], pat_off[j + 1], w_max, pos, width)
                if end > cover:
                    cover = end
                i += 1
            if p < cover:
                out[p] = 1
    return out
