"""Coverage: from the mined ranges to the share of the index that repeats.

A token position is covered when it lies inside an occurrence of any frequent
phrase of length ``>= L`` (equivalently, inside an occurrence of a frequent
L-gram).  The mask is monotone: raising sigma or L never covers more.  The
mining kernels report one range per occurrence that stops growing at a node of
length ``>= L`` (see :mod:`engine.bloomspan` for why their union is exactly the
mask); :func:`engine.kernels.coverage.sweep` counts covered tokens per document
and keeps the ranges not contained in another, each with the phrase that
explains it (the longest frequent phrase at that place, which need not be
maximal).

The frames built from it (documents, sites, spans) are in :mod:`engine.frames`.
Per document: covered tokens and contamination = covered / tokens (0 for an
empty document).  Per site: documents, tokens, covered tokens, coverage =
covered / tokens, and the median and 90th percentile (linear interpolation)
of the contamination of its documents.

Complexity: the sweep is O(ranges + documents), with no per-token array;
the coverage mask, when one is made, O(covered tokens).
"""
from __future__ import annotations

import numpy as np

from .kernels import coverage as C


def ranges_mask(n_tokens: int, starts, ends) -> np.ndarray:
    """Bool mask over ``n_tokens`` positions: True inside any [start, end)."""
    return C.ranges_mask(int(n_tokens), np.ascontiguousarray(starts, dtype=np.int64),
                         np.ascontiguousarray(ends, dtype=np.int64))


def distinct_per_group(group_lo, group_hi, values, n_values: int) -> np.ndarray:
    """Number of distinct ``values`` (0 .. n_values - 1) in each slice
    ``[group_lo, group_hi)``."""
    return C.distinct_per_group(np.ascontiguousarray(group_lo, dtype=np.int64),
                                np.ascontiguousarray(group_hi, dtype=np.int64),
                                np.ascontiguousarray(values, dtype=np.int64), int(n_values))


def covered_runs(p_start, p_end, t_start, t_end, doc_offsets):
    """Coverage by the phrases' ranges ``[p_start, p_end)`` (by increasing
    start, as the miner gives them) or by the ranges ``[t_start, t_end)``
    (template occurrences, in any order): the covered tokens of each
    document, and the runs of one kind within a document as ``start, end,
    kind`` arrays (1: phrase, 2: range only).  Memory and time in the
    ranges, not the corpus (:func:`engine.kernels.coverage.labelled_runs`)."""
    p_start = np.ascontiguousarray(p_start, dtype=np.int64)
    p_end = np.ascontiguousarray(p_end, dtype=np.int64)
    if p_start.shape[0] > 1 and (np.diff(p_start) < 0).any():
        o = np.argsort(p_start, kind="stable")
        p_start, p_end = p_start[o], p_end[o]
    t_start = np.asarray(t_start, dtype=np.int64)
    o = np.argsort(t_start, kind="stable")
    return C.labelled_runs(p_start, p_end, t_start[o], np.asarray(t_end, dtype=np.int64)[o],
                           np.ascontiguousarray(doc_offsets, dtype=np.int64))
