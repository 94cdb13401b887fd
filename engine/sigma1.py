"""The answer at sigma = 1: whole documents, in O(n log n) whatever the text.

At sigma 1 every phrase that occurs is frequent, so the definitions collapse:

* A phrase X is maximal iff no one-token extension of it occurs, i.e. iff
  every occurrence of X is a whole document.  A phrase that is not a whole
  document has a neighbour somewhere, and that extension occurs; a whole
  document D is maximal unless D also occurs inside another (longer)
  document.
* Coverage: every token of a document of length >= L lies in an occurrence of
  a frequent phrase of length >= L (the document itself); no token of a
  shorter document does.

So a run reports, for every distinct document D of length >= L, the phrase D:
maximal when all its occurrences are copies of D as whole documents, else
only as the explanation of its documents' covered range.  Its df is the
number of documents containing it and its occurrences their count.

Why a rule of its own: the general growth (:mod:`engine.bloomspan`) visits one
node per length along a run of k copies of one token, k^2/2 steps, and at
sigma 1 nothing prunes it (one document of 25,000 copies of "0" took minutes
before the buffers were compacted, and stays quadratic); the suffix-array
miner needs sigma >= 2 for its intervals.  Here both are answered exactly by
the FHK machinery at sigma 2, which is O(n log n) on any text:

1. Suffix array and LCP of the text with one distinct separator after every
   document (:mod:`engine.fhk`, steps 1-3), the traversal with distinct-document
   counts at sigma 2 and L (step 4): for each suffix, the deepest interval
   (df >= 2, length >= L) holding it.
2. For the suffix at the start of document D (|D| >= L): if that interval has
   length |D|, it is exactly the set of occurrences of D (the separator after
   D is unique, so no suffix shares more), which gives df and occurrences;
   otherwise D occurs only once (df 1).
3. Documents whose start suffixes share an interval of their own length are
   copies of one another (one node); D is maximal iff its occurrences are
   exactly its copies.

Complexity: O(n log n) for the suffix array, O(n) for the rest; memory as FHK.
"""
from __future__ import annotations

import time

import numpy as np

from .config import KERNEL_LOCK
from .fhk import lcp_intervals
from .kernels import coverage as C
from .result import MiningResult, canonical, pos_dtype


def mine_sigma1(tokens: np.ndarray, doc_offsets: np.ndarray, vocab_size: int, min_len: int,
                progress=None) -> MiningResult:
    """The sigma-1 answer (see the module docstring); inputs already checked."""
    report = progress or (lambda stage, frac: None)
    n_docs = int(doc_offsets.shape[0] - 1)
    lengths = np.diff(doc_offsets)
    timings: dict = {}
    with KERNEL_LOCK:
        _, sdoc, sa, (_, _, _, _, f, owner, own_lb, own_len, own_df, own_rb) = lcp_intervals(
            tokens, doc_offsets, vocab_size, 2, min_len, report, timings)
    t = time.perf_counter()
    rank = np.empty(sa.shape[0], np.int64)
    rank[sa] = np.arange(sa.shape[0])
    # text position of each document start (document d is preceded by d separators)
    text_start = doc_offsets[:-1] + np.arange(n_docs)
    docs = np.flatnonzero(lengths >= min_len)
    r = rank[text_start[docs]]
    shared = f[r] == lengths[docs]             # D occurs in another document too
    own = np.where(shared, owner[r], -1).astype(np.int64)
    df = np.ones(docs.shape[0], np.int64)
    occ = np.ones(docs.shape[0], np.int64)
    df[shared] = own_df[own[shared]]
    occ[shared] = own_rb[own[shared]] - own_lb[own[shared]] + 1
    # one node per distinct document: the interval when shared, else the document
    key = np.where(shared, own, -1 - docs.astype(np.int64))
    _, first_idx, node_of = np.unique(key, return_index=True, return_inverse=True)
    rep_doc = docs[first_idx]                   # the first such document
    node_df, node_occ = df[first_idx], occ[first_idx]
    # D is maximal iff all its occurrences are its whole-document copies
    copies = np.bincount(node_of, minlength=first_idx.shape[0])
    node_max = (node_occ == copies).astype(np.uint8)
    # occurrences of maximal nodes: their whole-document copies
    is_max = node_max[node_of].astype(bool)
    occ_doc = docs[is_max]
    rng_pos = doc_offsets[docs].astype(pos_dtype(tokens.shape[0]))
    rng_len = lengths[docs].astype(np.int32)
    covered, kept = C.sweep(int(tokens.shape[0]), doc_offsets, rng_pos, rng_len)
    timings["collect"] = time.perf_counter() - t
    fields = canonical({
        "node_rep": doc_offsets[rep_doc], "node_len": lengths[rep_doc], "node_df": node_df,
        "node_occ": node_occ, "node_max": node_max, "occ_pos": doc_offsets[occ_doc], "occ_doc": occ_doc,
        "occ_node": node_of[is_max], "rng_pos": rng_pos[kept], "rng_len": rng_len[kept],
        "rng_node": node_of[kept]}, tokens.shape[0])
    return MiningResult(**fields, covered=covered,
                        stats={"rule": "sigma 1: whole documents", "phrases": int(node_max.sum()),
                               "nodes": int(first_idx.shape[0]), "workers": 1, "filter_bytes": 0,
                               "timings": timings})
