"""BloomSpan: exact mining of Maximal Contiguous Frequent Phrases.

Definitions (the contract)
--------------------------
A phrase is a contiguous run of tokens inside one document; its support df is
the number of distinct documents that contain it.  It is frequent when
``df >= sigma`` and maximal when it is frequent and neither one-token
extension (left or right) is frequent.  A run answers every maximal frequent
phrase of length ``>= L`` (``min_len``), and the coverage mask: a token
position is covered when it lies inside an occurrence of any frequent phrase
of length ``>= L``.

The pipeline (the steps of the BloomSpan paper)
-----------------------------------------------
1. Word filter: exact df of every token (one pass, ``last seen document`` per
   token); a phrase can only be frequent if all its words are.
2. Counting filter: one linear pass over all bigrams of frequent words into
   saturating byte counters indexed by FNV-1a of the two ids.  Counters count
   occurrences, an upper bound of df, so a frequent bigram always reaches
   ``min(sigma, 255)``: no frequent phrase is lost.  With ``workers`` threads
   each counts a slice of the documents into its own counters, merged by a
   saturating sum (numba has no atomics: a shared racy counter would lose
   increments, and a lost increment can lose a frequent phrase).
3. Second pass: a position is kept when the L-1 bigrams starting there all
   pass both filters (a run-length test, one backward scan per document),
   then when its L-gram passes a second counting filter (a rolling window
   hash into the same saturating counters, reused); the survivors are
   bucketed by first token with a counting sort (the paper sorts packed
   (bigram, doc, pos) entries; the counting sort gives the same grouping in
   O(n), in parallel over document slices with per-slice offsets).
4. Exact seeds: each bucket is regrouped by second token, df is counted
   exactly and the filters' false positives are dropped; the left-neighbour
   prune (step 7) is applied to the seeds here, from left neighbours recorded
   sequentially in step 3.
5. Seeds are ordered by Ψ = length × df (ties: by token ids), so output is
   deterministic and the largest work is scheduled first.
6. Depth-first right growth directly on the token array: a node is an
   occurrence list of one phrase; its occurrences are grouped by their next
   token (a stable counting sort through per-token scratch arrays) and every
   group reaching sigma documents becomes a child.  A chain (all occurrences
   continue with one token) advances in place without copying.
7. Left-neighbour prune (below).
8. Maximality check: a right-maximal node (no frequent child) is maximal when
   no group of its occurrences by left neighbour reaches sigma documents.
   This exact local check replaces the paper's inverted index on the rarest
   token.
9. Coverage: every occurrence that stops growing at a node of length ``>= L``
   contributes the range of that node's phrase; the union of the ranges is
   the mask (:mod:`engine.coverage`).

Departures from the paper, and why they are exact
-------------------------------------------------
The paper skips a seed whose occurrences all lie in already-marked positions.
That rule loses phrases (minimal case: sigma 2, L 2, documents «x p q m»,
«z p q m», «x p q», «z p q», six «x p wI», six «z p vI»; the literal rule
drops «p q m»), so it is not used.  What is used instead:

*Left-neighbour prune.*  If every occurrence of a node N (a seed or deeper)
has the same left token ``a`` and none starts its document, the subtree of N
is skipped.  Proof: call L(X) the left closure of a frequent phrase X (extend
X to the left while all its occurrences share the left token).  L(X) has the
same occurrences as X, shifted, and the same df.  (i) L(X) is visited: no
prefix of L(X) of length >= 2 is prunable, since a prefix's occurrence starts
include L(X)'s, so a uniform left token for the prefix would be one for L(X);
all prefixes are frequent, so the DFS from L(X)'s first bigram reaches it.
(ii) A maximal phrase X has no frequent left extension, so X = L(X) is
visited and found.  (iii) Coverage: for an occurrence of a frequent X with
``|X| >= L``, follow the matching occurrence of L(X) down the tree until it
stops at a node Z (|Z| >= |X| >= L): Z's range contains X's occurrence; if it
stops because its child C is pruned, repeat from L(C), which is longer, so
this ends.  Hence the union of reported ranges is exactly the mask.

*Start filter (run-length test and L-gram counting filter).*  Only positions
that may start a frequent L-gram enter the seeds.  Every occurrence of a
frequent phrase of length >= L starts a frequent L-gram (its prefix), whose
L-1 bigrams are frequent and whose occurrence count reaches sigma, so both
tests keep it: the occurrence sets of all nodes of length >= L stay
complete, and their df, maximality and ranges are exact.  Nodes shorter than
L may lose occurrences; they are never reported, and the prune stays safe on
them: in (i) the kept occurrences of a prefix of L(X) still include all of
L(X)'s, so the prefix is not prunable; nodes pruned in (iii) are longer than
L(X) >= L, so their sets are complete.

*Chain skip.*  When all occurrences of a node continue with the same tokens,
the node advances by their longest common extension in one step (read along
each occurrence) instead of one level at a time; each skipped level has a
single child holding every occurrence, so nothing is reported there.

Complexity
----------
Steps 1-4: O(n L) time (O(n) with the rolling hash).  Growth: O(sum over
visited branching nodes of their occurrences); on natural text a fraction of
n; on densely nested repeats (long runs of one token: a run of k copies costs
k^2/2) it grows quadratically, where the suffix-array baseline is the better
choice (measured: one seed of 800k occurrences in runs of "0" tokens takes
0.6 s of webdocs' growth).  Memory: the token array (4 bytes per token), one
byte per token of start flags, 16 bytes per kept start (position, document,
next and previous token), the filter (``filter_bytes`` per worker), and per
worker scratch of O(vocabulary + largest seed x depth).
"""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .config import KERNEL_LOCK, default_workers
from .kernels import bloomspan as K
from .kernels import coverage as C
from .result import MiningResult, check_input  # noqa: F401  (the contract both miners share)

log = logging.getLogger(__name__)


def filter_bytes_for(n_tokens: int) -> int:
    """Counter array size: a power of two about a third of the token count,
    1 MiB to 16 MiB (one byte per counter).  Measured on webdocs (48M
    tokens): 16 MiB keeps the counters in the 32 MiB L3 cache and passes only
    1% more positions than 64 MiB, for less time; 8 MiB passes 3% more."""
    size = 1 << 20
    while size * 3 < n_tokens and size < (1 << 24):
        size <<= 1
    return size


def run_parallel(fn, items):
    """``fn`` over ``items``, one thread each (nogil kernels); results in order."""
    items = list(items)
    if len(items) <= 1:
        return [fn(x) for x in items]
    with ThreadPoolExecutor(len(items)) as ex:
        return list(ex.map(fn, items))


def _split_docs(doc_offsets: np.ndarray, parts: int) -> list[tuple[int, int]]:
    n_docs = doc_offsets.shape[0] - 1
    total = int(doc_offsets[-1])
    bounds = [0]
    for i in range(1, parts):
        bounds.append(int(np.searchsorted(doc_offsets, total * i // parts)))
    bounds.append(n_docs)
    return [(bounds[i], bounds[i + 1]) for i in range(parts) if bounds[i] < bounds[i + 1]]


class _Worker:
    """Buffers of one growth thread (scratch, work stack, outputs)."""

    def __init__(self, vocab_size: int, max_seed: int):
        self.cnt = np.zeros(vocab_size, np.int64)
        self.dfc = np.zeros(vocab_size, np.int64)
        self.lastd = np.full(vocab_size, -1, np.int64)
        self.touched = np.empty(vocab_size, np.int32)
        self.child_lo = np.empty(vocab_size, np.int64)
        self.keys = np.empty(max(max_seed, 1), np.int32)
        cap = max(1024, 4 * max_seed)
        self.bpos = np.empty(cap, np.int32)
        self.bdoc = np.empty(cap, np.int32)
        self._stack(4096)
        out = max(1024, 2 * max_seed)
        self.node_rep = np.empty(out, np.int64)
        self.node_len = np.empty(out, np.int32)
        self.node_df = np.empty(out, np.int64)
        self.node_occ = np.empty(out, np.int64)
        self.node_max = np.empty(out, np.uint8)
        self.occ_pos = np.empty(out, np.int32)
        self.occ_doc = np.empty(out, np.int32)
        self.occ_node = np.empty(out, np.int32)
        self.rng_pos = np.empty(out, np.int32)
        self.rng_len = np.empty(out, np.int32)
        self.rng_node = np.empty(out, np.int32)
        self.counts = np.zeros(4, np.int64)

    def _stack(self, size):
        self.st_lo = np.empty(size, np.int64)
        self.st_hi = np.empty(size, np.int64)
        self.st_len = np.empty(size, np.int64)
        self.st_df = np.empty(size, np.int64)
        self.st_chk = np.empty(size, np.uint8)

    def run(self, tokens, doc_offsets, seeds, order, sigma, min_len):
        pos, doc, lo, hi, df = seeds
        self.counts[0] = 0
        while True:
            status, need = K.grow(
                tokens, doc_offsets, pos, doc, lo, hi, df, order, sigma, min_len,
                self.cnt, self.dfc, self.lastd, self.touched, self.child_lo,
                self.keys, self.bpos, self.bdoc, self.st_lo, self.st_hi,
                self.st_len, self.st_df, self.st_chk, self.node_rep,
                self.node_len, self.node_df, self.node_occ, self.node_max,
                self.occ_pos, self.occ_doc, self.occ_node, self.rng_pos,
                self.rng_len, self.rng_node, self.counts)
            if status == 0:
                return
            if status == 1:
                size = max(int(need), 2 * self.bpos.shape[0])
                self.bpos = np.resize(self.bpos, size)
                self.bdoc = np.resize(self.bdoc, size)
                self._stack(max(2 * self.st_lo.shape[0], size // 8 + 16))
            else:
                n_nodes, n_occ, n_rng = (int(x) for x in self.counts[1:])
                for name, used in (("node_rep", n_nodes), ("node_len", n_nodes),
                                   ("node_df", n_nodes), ("node_occ", n_nodes),
                                   ("node_max", n_nodes), ("occ_pos", n_occ),
                                   ("occ_doc", n_occ), ("occ_node", n_occ),
                                   ("rng_pos", n_rng), ("rng_len", n_rng),
                                   ("rng_node", n_rng)):
                    arr = getattr(self, name)
                    if used + need + 1 > arr.shape[0]:
                        setattr(self, name, np.resize(arr, max(2 * arr.shape[0],
                                                               used + 2 * need + 1)))

    def outputs(self):
        n_nodes, n_occ, n_rng = (int(x) for x in self.counts[1:])
        return (self.node_rep[:n_nodes], self.node_len[:n_nodes],
                self.node_df[:n_nodes], self.node_occ[:n_nodes],
                self.node_max[:n_nodes], self.occ_pos[:n_occ],
                self.occ_doc[:n_occ], self.occ_node[:n_occ],
                self.rng_pos[:n_rng], self.rng_len[:n_rng], self.rng_node[:n_rng])


def mine_tokens(tokens, doc_offsets, vocab_size: int, sigma: int, min_len: int,
                *, workers: int | None = None, filter_bytes: int | None = None,
                progress=None) -> MiningResult:
    """Mine the maximal frequent phrases and the coverage of a token array.

    Parameters
    ----------
    tokens : array of int
        Token ids (0 .. vocab_size - 1), documents concatenated.
    doc_offsets : array of int
        ``len = docs + 1``; document ``d`` is ``tokens[doc_offsets[d]:doc_offsets[d+1]]``.
    vocab_size : int
    sigma : int
        Minimum number of documents (>= 1).
    min_len : int
        Minimum phrase length L (>= 2).
    workers : int, optional
        Threads for the counting filter and the growth (1 = the serial twin).
    filter_bytes : int, optional
        Counters per worker (a power of two); default :func:`filter_bytes_for`.
    progress : callable(str, float) or None
        Called with a stage name and the fraction done.

    Returns
    -------
    MiningResult
    """
    tokens, doc_offsets = check_input(tokens, doc_offsets, sigma, min_len)
    if sigma == 1:
        # every phrase is frequent: the answer is whole documents (engine.sigma1),
        # where the growth would cost k^2/2 on a run of k copies of one token
        from .sigma1 import mine_sigma1
        return mine_sigma1(tokens, doc_offsets, max(int(vocab_size), 1), min_len, progress)
    workers = workers or default_workers()
    fbytes = filter_bytes or filter_bytes_for(tokens.shape[0])
    if fbytes & (fbytes - 1):
        raise ValueError("filter_bytes must be a power of two")
    vocab_size = max(int(vocab_size), 1)
    n = int(tokens.shape[0])
    stats: dict = {"workers": workers, "filter_bytes": fbytes}
    timings: dict = {}
    report = progress or (lambda stage, frac: None)

    with KERNEL_LOCK:
        t = time.perf_counter()
        wdf = K.word_df(tokens, doc_offsets, vocab_size)
        frequent_word = (wdf >= sigma).astype(np.uint8)
        timings["word_filter"] = time.perf_counter() - t
        stats["words"] = int(vocab_size)
        stats["words_frequent"] = int(frequent_word.sum())
        report("filter", 0.2)

        t = time.perf_counter()
        parts = _split_docs(doc_offsets, workers)
        counters = [np.zeros(fbytes, np.uint8) for _ in parts]
        run_parallel(lambda ir: K.bloom_count(tokens, doc_offsets, ir[1][0], ir[1][1],
                                              frequent_word, counters[ir[0]]), list(enumerate(parts)))
        for c in counters[1:]:
            K.merge_counters(counters[0], c)
        counter = counters[0] if counters else np.zeros(fbytes, np.uint8)
        timings["counting_filter"] = time.perf_counter() - t
        report("filter", 0.5)

        t = time.perf_counter()
        threshold = min(sigma, 255)
        keep = np.empty(n, np.uint8)
        t1 = time.perf_counter()
        kept = run_parallel(lambda r: K.mark_runs(tokens, doc_offsets, r[0], r[1], frequent_word,
                                                  counter, threshold, min_len, keep), parts)
        stats["positions_after_bigram_filter"] = int(sum(kept))
        timings["mark_runs"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        first_counts = [np.zeros(vocab_size, np.int64) for _ in parts]
        if min_len > 2:
            # the L-gram counting filter (a departure, see the module docstring)
            for c in counters:  # reuse the bigram counters' memory
                c.fill(0)
            lcounters = counters
            run_parallel(lambda ir: K.lgram_filter(tokens, doc_offsets, ir[1][0], ir[1][1], keep, min_len,
                                                   lcounters[ir[0]], threshold, first_counts[ir[0]], True),
                         list(enumerate(parts)))
            for c in lcounters[1:]:
                K.merge_counters(lcounters[0], c)
            lcounter = lcounters[0]
            kept = run_parallel(lambda ir: K.lgram_filter(tokens, doc_offsets, ir[1][0], ir[1][1], keep,
                                                          min_len, lcounter, threshold, first_counts[ir[0]],
                                                          False),
                                list(enumerate(parts)))
        else:
            kept = run_parallel(lambda ir: K.count_first(tokens, doc_offsets, ir[1][0], ir[1][1], keep,
                                                         first_counts[ir[0]]), list(enumerate(parts)))
        stats["positions_after_lgram_filter"] = int(sum(kept))
        timings["lgram_filter"] = time.perf_counter() - t1
        t1 = time.perf_counter()
        del counters, counter
        first_count = np.sum(first_counts, axis=0) if first_counts else np.zeros(vocab_size, np.int64)
        first_start = np.zeros(vocab_size + 1, np.int64)
        np.cumsum(first_count, out=first_start[1:])
        stats["bigrams_passing_filter"] = int(first_start[-1])
        total = int(first_start[-1])
        pos = np.empty(total, np.int32)
        doc = np.empty(total, np.int32)
        nxt = np.empty(total, np.int32)
        prv = np.empty(total, np.int32)
        fills = []
        acc = first_start[:-1].copy()
        for fc in first_counts:
            fills.append(acc.copy())
            acc += fc
        run_parallel(lambda ir: K.bucket_by_first(tokens, doc_offsets, ir[1][0], ir[1][1], keep,
                                                  fills[ir[0]], pos, doc, nxt, prv), list(enumerate(parts)))
        del keep, fills, first_counts
        timings["bucket"] = time.perf_counter() - t1
        timings["second_pass"] = time.perf_counter() - t
        report("filter", 0.7)

        t = time.perf_counter()
        # disjoint first-token ranges of about equal size, one per worker
        cuts = [0] + [int(np.searchsorted(first_start, first_start[-1] * i // workers))
                      for i in range(1, workers)] + [vocab_size]
        ranges = [(cuts[i], cuts[i + 1]) for i in range(workers) if cuts[i] < cuts[i + 1]]
        outs = run_parallel(lambda r: K.split_seeds(pos, doc, nxt, prv, first_start, r[0], r[1],
                                                    sigma, vocab_size), ranges)
        del nxt, prv
        seed_lo, seed_hi, seed_df, seed_a, seed_b = (
            np.concatenate([o[i] for o in outs]) if outs else np.zeros(0, np.int64)
            for i in range(5))
        stats["seed_occurrences"] = int(sum(o[5] for o in outs))
        stats["false_positive_occurrences"] = int(sum(o[6] for o in outs))
        stats["seeds"] = int(seed_lo.shape[0])
        stats["seeds_pruned_left"] = int(sum(o[7] for o in outs))
        stats["seed_occurrences_pruned_left"] = int(sum(o[8] for o in outs))
        # order by psi = 2 * df desc, then token ids (deterministic)
        order = np.lexsort((seed_b, seed_a, -seed_df)).astype(np.int64)
        timings["seeds"] = time.perf_counter() - t
        report("filter", 1.0)

        t = time.perf_counter()
        max_seed = int((seed_hi - seed_lo).max()) if seed_lo.shape[0] else 0
        seeds = (pos, doc, seed_lo, seed_hi, seed_df)
        n_chunks = max(1, min(256, order.shape[0] // 64))
        # strided chunks spread the heavy (high psi) seeds over all workers
        chunks = [order[i::n_chunks] for i in range(n_chunks)]
        lock = threading.Lock()
        state = {"next": 0, "done": 0}
        pool = [_Worker(vocab_size, max_seed) for _ in range(min(workers, n_chunks))]
        results: list[list] = [[] for _ in pool]

        def work(wi: int):
            w = pool[wi]
            while True:
                with lock:
                    ci = state["next"]
                    state["next"] += 1
                if ci >= n_chunks:
                    break
                w.run(tokens, doc_offsets, seeds, chunks[ci], sigma, min_len)
                results[wi].append(w.outputs())
                # outputs are kept by reference: start fresh buffers
                w.counts[1:] = 0
                for name in ("node_rep", "node_len", "node_df", "node_occ", "node_max",
                             "occ_pos", "occ_doc", "occ_node", "rng_pos", "rng_len",
                             "rng_node"):
                    arr = getattr(w, name)
                    setattr(w, name, np.empty_like(arr))
                with lock:
                    state["done"] += 1
                    report("grow", state["done"] / n_chunks)

        if len(pool) > 1:
            with ThreadPoolExecutor(len(pool)) as ex:
                list(ex.map(work, range(len(pool))))
        else:
            work(0)
        timings["grow"] = time.perf_counter() - t

        # merge per-chunk outputs (node ids are chunk-local); order the merge
        # by chunk index so the result does not depend on thread timing
        t = time.perf_counter()
        parts_out = [p for r in results for p in r]
        chunk_ids = [ci for r in results for ci in range(len(r))]
        del chunk_ids
        merged = _merge(parts_out)
        # ranges by start (packed keys: numpy's vectorised sort), then the sweep
        keys = (merged["rng_pos"].astype(np.int64) << 32) | np.arange(merged["rng_pos"].shape[0], dtype=np.int64)
        keys.sort()
        by_start = keys & 0xFFFFFFFF
        for name in ("rng_pos", "rng_len", "rng_node"):
            merged[name] = merged[name][by_start]
        covered, keep = C.sweep(n, doc_offsets, merged["rng_pos"], merged["rng_len"])
        timings["coverage"] = time.perf_counter() - t

    stats["nodes"] = int(merged["node_rep"].shape[0])
    stats["phrases"] = int(merged["node_max"].sum())
    stats["timings"] = timings
    return MiningResult(
        node_rep=merged["node_rep"], node_len=merged["node_len"],
        node_df=merged["node_df"], node_occ=merged["node_occ"],
        node_max=merged["node_max"], occ_pos=merged["occ_pos"],
        occ_doc=merged["occ_doc"], occ_node=merged["occ_node"],
        rng_pos=merged["rng_pos"][keep], rng_len=merged["rng_len"][keep],
        rng_node=merged["rng_node"][keep], covered=covered, stats=stats)


def _merge(parts) -> dict:
    """Concatenate per-chunk outputs, renumbering nodes, then put the nodes in
    a canonical order (by first occurrence, then length) so that the result
    does not depend on how chunks were spread over threads."""
    names = ("node_rep", "node_len", "node_df", "node_occ", "node_max", "occ_pos",
             "occ_doc", "occ_node", "rng_pos", "rng_len", "rng_node")
    dtypes = (np.int64, np.int32, np.int64, np.int64, np.uint8, np.int32, np.int32,
              np.int32, np.int32, np.int32, np.int32)
    if not parts:
        return {n: np.zeros(0, d) for n, d in zip(names, dtypes)}
    base = 0
    cols: dict[str, list] = {n: [] for n in names}
    for p in parts:
        for n, arr in zip(names, p):
            if n in ("occ_node", "rng_node"):
                arr = arr + base
            cols[n].append(arr)
        base += p[0].shape[0]
    m = {n: np.concatenate(cols[n]).astype(d, copy=False) for n, d in zip(names, dtypes)}
    # canonical node order
    perm = np.lexsort((m["node_len"], m["node_rep"]))
    inv = np.empty_like(perm)
    inv[perm] = np.arange(perm.shape[0])
    for n in ("node_rep", "node_len", "node_df", "node_occ", "node_max"):
        m[n] = m[n][perm]
    m["occ_node"] = inv[m["occ_node"]].astype(np.int32)
    m["rng_node"] = inv[m["rng_node"]].astype(np.int32)
    o = np.lexsort((m["occ_pos"], m["occ_node"]))
    for n in ("occ_pos", "occ_doc", "occ_node"):
        m[n] = m[n][o]
    return m
