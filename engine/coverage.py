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

Complexity: O(n) time, 4 bytes per token of scratch for the sweep.
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


def covered_runs(phrase_mask: np.ndarray, starts, ends, doc_offsets):
    """Coverage by phrases (``phrase_mask``) or by ranges ``[starts, ends)``
    (template occurrences): the covered tokens of each document, and the
    runs of one kind within a document as ``start, end, kind`` arrays (1:
    phrase, 2: range only)."""
    return C.labelled_runs(np.ascontiguousarray(phrase_mask, dtype=np.bool_),
                           np.ascontiguousarray(starts, dtype=np.int64), np.ascontiguousarray(ends, dtype=np.int64),
                           np.ascontiguousarray(doc_offsets, dtype=np.int64))
