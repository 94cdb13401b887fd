"""Corpus shape statistics (for choosing an algorithm)."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT


@njit(**NJIT)
def lz78_phrases(tokens, doc_offsets, limit):
    """Number of LZ78 phrases in the first ``limit`` tokens (the dictionary is
    shared across documents, a phrase never crosses a document end).

    The trie is an open-addressing table keyed by (node, token)."""
    n = min(limit, tokens.shape[0])
    cap = 1
    while cap < 4 * n + 16:
        cap *= 2
    keys_node = np.full(cap, -1, np.int64)
    keys_tok = np.empty(cap, np.int64)
    child = np.empty(cap, np.int64)
    mask = cap - 1
    nodes = 1
    phrases = 0
    d = 0
    node = 0
    for p in range(n):
        while doc_offsets[d + 1] <= p:
            if node != 0:
                phrases += 1
                node = 0
            d += 1
        t = np.int64(tokens[p])
        h = ((node * np.int64(1000003)) ^ (t * np.int64(0x9E3779B1))) & mask
        found = -1
        while keys_node[h] != -1:
            if keys_node[h] == node and keys_tok[h] == t:
                found = child[h]
                break
            h = (h + 1) & mask
        if found >= 0:
            node = found
        else:
            keys_node[h] = node
            keys_tok[h] = t
            child[h] = nodes
            nodes += 1
            phrases += 1
            node = 0
    if node != 0:
        phrases += 1
    return phrases


@njit(**NJIT)
def periodic_runs(tokens, doc_offsets, max_period):
    """Sum over maximal periodic runs (period 1 .. max_period) of the squared
    run length, and the longest run: BloomSpan's growth costs about k^2 / 2
    occurrence visits for a run of k tokens, the suffix array does not."""
    total = 0.0
    longest = 0
    for q in range(1, max_period + 1):
        for d in range(doc_offsets.shape[0] - 1):
            s = doc_offsets[d]
            e = doc_offsets[d + 1]
            run = 0
            for p in range(s, e - q):
                if tokens[p] == tokens[p + q]:
                    run += 1
                else:
                    if run >= q:
                        total += (run + q) * (run + q) / q
                        if run + q > longest:
                            longest = run + q
                    run = 0
            if run >= q:
                total += (run + q) * (run + q) / q
                if run + q > longest:
                    longest = run + q
    return total, longest
