"""Kernels of the cut rule: mark token positions covered by stop L-grams."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import FNV_OFFSET, FNV_PRIME


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
