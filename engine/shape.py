"""Corpus shape, and the choice between BloomSpan and FHK (``--algo auto``).

The article's rule of thumb: suffix methods win at soft thresholds and on
densely nested repeats, BloomSpan on natural text with strict thresholds.
Measured here (``make bench``), BloomSpan wins on every natural corpus and
even at sigma 2, and on the article's Synthetic 2; it loses, quadratically,
on periodic runs (a run of k copies of one token, or of a short period, costs
BloomSpan's growth about k^2/2 occurrence visits; the suffix array does not
care).  So the statistic that predicts the winner is the squared length of
periodic runs per token, ``runs = sum(k^2 / q) / n`` over maximal runs of
period q = 1, 2, estimated on an even sample of documents.  The LZ78 ratio
c/n, the article's measure, is computed by :func:`lz78_ratio` for the
benchmark tables (the c/n column) but is not used by the decision, since it
does not separate the cases measured here (webdocs 0.34 and Synthetic 2 0.28
are both BloomSpan's).

Rule (sigma 1 never gets here: :mod:`engine.sigma1` answers it): FHK when
sigma >= 2 and runs > ``RUNS_THRESHOLD`` (crossover measured
between 9.5, where BloomSpan is still 12% faster, and 200, where FHK is 16x
faster), else BloomSpan.  The decision costs one sequential pass over at
most ``SAMPLE_TOKENS`` tokens.

References
----------
.. [1] J. Ziv, A. Lempel. Compression of Individual Sequences via
   Variable-Rate Coding. IEEE Trans. Inf. Theory 24(5), 1978 (LZ78, c/n).
"""
from __future__ import annotations

import numpy as np

from .kernels import shape as K

RUNS_THRESHOLD = 25.0
SAMPLE_TOKENS = 4_000_000


def sample_docs(doc_offsets: np.ndarray, budget: int = SAMPLE_TOKENS) -> np.ndarray:
    """Every k-th document so that about ``budget`` tokens are read."""
    n_docs = doc_offsets.shape[0] - 1
    n = int(doc_offsets[-1])
    stride = max(1, int(np.ceil(n / budget))) if n else 1
    return np.arange(0, n_docs, stride)


def runs_statistic(tokens, doc_offsets, budget: int = SAMPLE_TOKENS) -> tuple[float, int]:
    """(sum of squared periodic-run lengths per token, longest run) on a sample."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    docs = sample_docs(doc_offsets, budget)
    if docs.shape[0] == doc_offsets.shape[0] - 1:
        sub, off = tokens, doc_offsets
    else:
        lens = doc_offsets[docs + 1] - doc_offsets[docs]
        off = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
        sub = np.concatenate([tokens[doc_offsets[d]:doc_offsets[d + 1]] for d in docs]) if docs.shape[0] \
            else np.zeros(0, np.int32)
    total, longest = K.periodic_runs(sub, off, 2)
    return (total / sub.shape[0] if sub.shape[0] else 0.0), int(longest)


def lz78_ratio(tokens, doc_offsets, limit: int = 2_000_000) -> float:
    """c/n: LZ78 phrases over tokens, on the first ``limit`` tokens."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    n = min(limit, int(tokens.shape[0]))
    return K.lz78_phrases(tokens, doc_offsets, n) / n if n else 0.0


def choose_algorithm(tokens, doc_offsets, sigma: int, min_len: int) -> tuple[str, dict]:
    """'bloomspan' or 'fhk', and the statistics behind the choice."""
    runs, longest = runs_statistic(tokens, doc_offsets)
    algo = "fhk" if sigma >= 2 and runs > RUNS_THRESHOLD else "bloomspan"
    return algo, {"runs_per_token": round(runs, 4), "longest_run": longest,
                  "threshold": RUNS_THRESHOLD}
