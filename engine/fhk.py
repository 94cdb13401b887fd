"""FHK: exact frequent-phrase mining with a suffix array and its LCP array.

The string-mining baseline the BloomSpan article compares with (after
Fischer, Heun and Kramer's distinct-document counting in LCP intervals).

Steps
-----
1. Text: the token ids with a distinct separator after every document, so no
   common prefix runs past a document end.
2. Suffix array with ``pydivsufsort`` (libdivsufsort on int32 symbols; about
   200 ns per token here, the fastest construction measured on this machine).
3. LCP array with Kasai's algorithm (O(n)).
4. Bottom-up traversal of the LCP intervals.  An interval with LCP value ℓ is
   the occurrence set of its ℓ-token prefix; its document count is its size
   minus one correction per suffix whose previous same-document suffix lies in
   it (Hui's method).  A frequent interval (df >= sigma, ℓ >= L) with no
   frequent child is right-maximal; it is maximal when no group of its
   occurrences by left neighbour reaches sigma documents (explicit left
   maximality).
At sigma 1 every suffix is a frequent leaf: :mod:`engine.sigma1` answers it
with the same machinery at sigma 2 (whole documents).

5. Coverage: every suffix gets the length of its longest frequent prefix (the
   deepest frequent interval holding it, assigned children-first with a
   skip-pointer union-find), and contributes that range.

The output is a :class:`engine.bloomspan.MiningResult`, so phrases, df and the
coverage must equal BloomSpan's (tested).

Complexity: O(n log n) time for the suffix array, O(n) for the rest; memory
about 30 bytes per token (text, suffix array, rank, LCP, per-suffix arrays).

References
----------
.. [1] J. Fischer, V. Heun, S. Kramer. Optimal String Mining Under Frequency
   Constraints. PKDD 2006, LNCS 4213.
.. [2] L. C. K. Hui. Color Set Size Problem with Applications to String
   Matching. CPM 1992 (distinct documents per LCP interval).
.. [3] T. Kasai, G. Lee, H. Arimura, S. Arikawa, K. Park. Linear-Time
   Longest-Common-Prefix Computation in Suffix Arrays and Its Applications.
   CPM 2001.
.. [4] Y. Mori. libdivsufsort (the suffix array, through ``pydivsufsort``).
"""
from __future__ import annotations

import time

import numpy as np

from .result import MiningResult, canonical
from .config import KERNEL_LOCK
from .kernels import coverage as C
from .kernels import fhk as K


def suffix_array(text: np.ndarray) -> np.ndarray:
    import pydivsufsort
    return np.ascontiguousarray(pydivsufsort.divsufsort(np.ascontiguousarray(text, dtype=np.int32)),
                                dtype=np.int32)


def lcp_intervals(tokens, doc_offsets, vocab_size: int, sigma: int, min_len: int, report, timings: dict):
    """Steps 1-4: the text with separators, its suffix array, the LCP array and
    the traversal of the LCP intervals at (sigma, L).  Returns (text, sdoc, sa,
    the traversal's outputs); stage seconds go to ``timings``."""
    n_docs = int(doc_offsets.shape[0] - 1)
    t = time.perf_counter()
    text, sdoc = K.with_separators(tokens, doc_offsets, vocab_size)
    sa = suffix_array(text) if text.shape[0] else np.zeros(0, np.int32)
    timings["suffix_array"] = time.perf_counter() - t
    report("suffix array", 0.5)
    t = time.perf_counter()
    lcp = K.kasai(text, sa)
    timings["lcp"] = time.perf_counter() - t
    report("lcp", 0.7)
    t = time.perf_counter()
    out = K.traverse(text, sdoc, doc_offsets[:-1] + np.arange(n_docs), sa, lcp, n_docs, sigma, min_len,
                     vocab_size + n_docs)
    timings["traverse"] = time.perf_counter() - t
    report("traverse", 0.9)
    return text, sdoc, sa, out


def mine_fhk(tokens, doc_offsets, vocab_size: int, sigma: int, min_len: int, *, progress=None) -> MiningResult:
    """The answer of :func:`engine.planner.mine_tokens`, by suffix array
    (inputs checked and planned there: sigma >= 2, positions in 32 bits;
    sigma 1 is :mod:`engine.sigma1`'s)."""
    n_docs = int(doc_offsets.shape[0] - 1)
    report = progress or (lambda stage, frac: None)
    timings: dict = {}
    with KERNEL_LOCK:
        text, sdoc, sa, (max_lb, max_rb, max_len, max_df, f, owner, own_lb, own_len, own_df, own_rb) = \
            lcp_intervals(tokens, doc_offsets, vocab_size, sigma, min_len, report, timings)
        t = time.perf_counter()
        # text position -> token position (separators precede later documents)
        tokpos = np.arange(text.shape[0], dtype=np.int64) - np.maximum(
            np.searchsorted(doc_offsets + np.arange(n_docs + 1), np.arange(text.shape[0]), side="right") - 1, 0)
        # maximal phrases and their occurrences
        occ_pos, occ_doc, occ_node, node_rep = [], [], [], []
        for j in range(max_lb.shape[0]):
            sl = np.sort(sa[max_lb[j]:max_rb[j] + 1])
            occ_pos.append(tokpos[sl])
            occ_doc.append(sdoc[sl])
            occ_node.append(np.full(sl.shape[0], j, np.int32))
            node_rep.append(tokpos[sl[0]])
        n_max = max_lb.shape[0]
        # explaining intervals of the ranges
        keep_k = np.flatnonzero(f >= min_len)
        rng_start = tokpos[sa[keep_k]]
        rng_len = f[keep_k].astype(np.int32)
        rng_owner = owner[keep_k]
        order = np.argsort(rng_start, kind="stable")
        rng_start, rng_len, rng_owner = rng_start[order], rng_len[order], rng_owner[order]
        covered, kept = C.sweep(int(tokens.shape[0]), doc_offsets, rng_start.astype(np.int32), rng_len)
        rng_start, rng_len, rng_owner = rng_start[kept], rng_len[kept], rng_owner[kept]
        # one node per owner interval used by a kept range; a maximal interval
        # that explains ranges is the same node
        max_key = {(int(max_lb[j]), int(max_len[j])): j for j in range(n_max)}
        owners, inv = np.unique(rng_owner, return_inverse=True)
        owner_node = np.empty(owners.shape[0], np.int64)
        extra_rep, extra_len, extra_df, extra_occ = [], [], [], []
        first_start = np.full(owners.shape[0], -1, np.int64)
        for idx in range(rng_start.shape[0] - 1, -1, -1):
            first_start[inv[idx]] = rng_start[idx]
        for u, o in enumerate(owners.tolist()):
            j = max_key.get((int(own_lb[o]), int(own_len[o])))
            if j is not None:
                owner_node[u] = j
            else:
                owner_node[u] = n_max + len(extra_rep)
                extra_rep.append(first_start[u])
                extra_len.append(own_len[o])
                extra_df.append(own_df[o])
                extra_occ.append(own_rb[o] - own_lb[o] + 1)
        rng_node = owner_node[inv].astype(np.int32) if inv.shape[0] else np.zeros(0, np.int32)
        node_rep_a = np.concatenate((np.asarray(node_rep, np.int64), np.asarray(extra_rep, np.int64)))
        node_len_a = np.concatenate((max_len.astype(np.int32), np.asarray(extra_len, np.int32)))
        node_df_a = np.concatenate((max_df.astype(np.int64), np.asarray(extra_df, np.int64)))
        node_occ_a = np.concatenate(((max_rb - max_lb + 1).astype(np.int64), np.asarray(extra_occ, np.int64)))
        node_max_a = np.concatenate((np.ones(n_max, np.uint8), np.zeros(len(extra_rep), np.uint8)))
        occ_node_a = np.concatenate(occ_node) if occ_node else np.zeros(0, np.int64)
        occ_pos_a = np.concatenate(occ_pos) if occ_pos else np.zeros(0, np.int64)
        occ_doc_a = np.concatenate(occ_doc) if occ_doc else np.zeros(0, np.int32)
        timings["collect"] = time.perf_counter() - t
    fields = canonical({
        "node_rep": node_rep_a, "node_len": node_len_a, "node_df": node_df_a, "node_occ": node_occ_a,
        "node_max": node_max_a, "occ_pos": occ_pos_a, "occ_doc": occ_doc_a, "occ_node": occ_node_a,
        "rng_pos": rng_start, "rng_len": rng_len, "rng_node": rng_node})
    return MiningResult(**fields, covered=covered,
                        stats={"phrases": int(n_max), "nodes": int(node_rep_a.shape[0]), "workers": 1,
                               "filter_bytes": 0, "timings": timings})
