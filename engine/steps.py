"""The steps of the BloomSpan method, shared by every path that runs them.

:mod:`engine.bloomspan` runs them in memory, :mod:`engine.outofcore` over
chunks of documents and groups of first tokens, and :mod:`engine.templates`
borrows the document split, the filter size and the thread pool.  Each
function names the step of the method it implements (the numbering of
:mod:`engine.bloomspan`'s docstring); the kernels they call are in
:mod:`engine.kernels.bloomspan` and :mod:`engine.kernels.coverage`.

Parallel work: each worker thread calls a ``nogil`` kernel on a disjoint
slice of the documents with its own buffers, merged afterwards in a fixed
order, so the answer does not depend on the number of workers
(``workers=1`` is the serial twin, tested equal).
"""
from __future__ import annotations

import logging
import threading
import time
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .kernels import bloomspan as K
from .kernels import coverage as C
from .result import OUTPUT_FIELDS, POSITION_FIELDS, MiningResult, canonical, pos_dtype

log = logging.getLogger(__name__)

#: The windows of no excerpt (:func:`engine.kernels.bloomspan.bucket_by_first`
#: then writes corpus positions).
NO_WINDOWS = np.zeros(0, np.int64)


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


def split_docs(doc_offsets: np.ndarray, parts: int) -> list[tuple[int, int]]:
    n_docs = doc_offsets.shape[0] - 1
    total = int(doc_offsets[-1])
    bounds = [0]
    for i in range(1, parts):
        bounds.append(int(np.searchsorted(doc_offsets, total * i // parts)))
    bounds.append(n_docs)
    return [(bounds[i], bounds[i + 1]) for i in range(parts) if bounds[i] < bounds[i + 1]]


def doc_chunks(doc_offsets: np.ndarray, chunk_tokens: int) -> list[tuple[int, int]]:
    """Consecutive document ranges of at most ``chunk_tokens`` tokens each
    (a longer document is a chunk of its own)."""
    n_docs = doc_offsets.shape[0] - 1
    out, d = [], 0
    while d < n_docs:
        e = int(np.searchsorted(doc_offsets, doc_offsets[d] + chunk_tokens, side="right")) - 1
        e = min(max(e, d + 1), n_docs)
        out.append((d, e))
        d = e
    return out


class Worker:
    """Buffers of one growth thread (scratch, work stack, outputs).

    ``start`` sets the initial sizes of the work buffer and the outputs
    (tests pass tiny ones so that every regrowth path runs)."""

    def __init__(self, vocab_size: int, max_seed: int, start: int | None = None, pos=np.int32):
        self.pos = pos  # the dtype of positions (int64 past 2^31 - 2 tokens)
        self.cnt = np.zeros(vocab_size, np.int64)
        self.dfc = np.zeros(vocab_size, np.int64)
        self.lastd = np.full(vocab_size, -1, np.int64)
        self.touched = np.empty(vocab_size, np.int32)
        self.child_lo = np.empty(vocab_size, np.int64)
        self.keys = np.empty(max(max_seed, 1), np.int32)
        cap = start or max(1024, 4 * max_seed)
        self.bpos = np.empty(cap, self.pos)
        self.bdoc = np.empty(cap, np.int32)
        self._stack(start or 4096)
        self._out_size = start or max(1024, 2 * max_seed)
        self.counts = np.zeros(4, np.int64)
        self.fresh_outputs()

    def fresh_outputs(self):
        """New output buffers (the previous ones are kept by reference)."""
        for name, dtype, _ in OUTPUT_FIELDS:
            setattr(self, name, np.empty(self._out_size, self.pos if name in POSITION_FIELDS else dtype))
        self.counts[1:] = 0

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
                self.st_len, self.st_df, self.st_chk,
                *(getattr(self, name) for name, _, _ in OUTPUT_FIELDS), self.counts)
            if status == 0:
                return
            if status == 1:
                size = max(int(need), 2 * self.bpos.shape[0])
                self.bpos = np.resize(self.bpos, size)
                self.bdoc = np.resize(self.bdoc, size)
                self._stack(max(2 * self.st_lo.shape[0], size // 8 + 16))
            else:
                used = self._used()
                for name, _, count in OUTPUT_FIELDS:
                    arr = getattr(self, name)
                    if used[count] + need + 1 > arr.shape[0]:
                        setattr(self, name, np.resize(arr, max(2 * arr.shape[0], used[count] + 2 * need + 1)))

    def _used(self) -> dict:
        n_nodes, n_occ, n_rng = (int(x) for x in self.counts[1:])
        return {"nodes": n_nodes, "occurrences": n_occ, "ranges": n_rng}

    def outputs(self) -> tuple:
        used = self._used()
        return tuple(getattr(self, name)[:used[count]] for name, _, count in OUTPUT_FIELDS)


class Stages:
    """Named stages with one timer: ``with stages("grow"): ...`` adds the
    stage's seconds to ``timings`` (the summary's per-stage seconds)."""

    def __init__(self):
        self.timings: dict = {}

    @contextmanager
    def __call__(self, name: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - t
            log.debug("stage %s: %.3f s", name, self.timings[name])


def to_result(merged, covered, kept, stats, stage) -> MiningResult:
    stats["nodes"] = int(merged["node_rep"].shape[0])
    stats["phrases"] = int(merged["node_max"].sum())
    stats["timings"] = stage.timings
    for name in ("rng_pos", "rng_len", "rng_node"):
        merged[name] = merged[name][kept]
    return MiningResult(**merged, covered=covered, stats=stats)


def word_filter(tokens, doc_offsets, vocab_size, sigma, stats) -> np.ndarray:
    """Step 1: exact df of every word; 1 for the frequent ones."""
    wdf = K.word_df(tokens, doc_offsets, vocab_size)
    frequent_word = (wdf >= sigma).astype(np.uint8)
    stats["words"] = int(vocab_size)
    stats["words_frequent"] = int(frequent_word.sum())
    return frequent_word


def bigram_filter(tokens, doc_offsets, parts, frequent_word, fbytes) -> list[np.ndarray]:
    """Step 2: the counting filter of bigrams, one counter array per worker
    (merged into the first by a saturating sum)."""
    counters = [np.zeros(fbytes, np.uint8) for _ in parts] or [np.zeros(fbytes, np.uint8)]
    run_parallel(lambda ir: K.bloom_count(tokens, doc_offsets, ir[1][0], ir[1][1],
                                          frequent_word, counters[ir[0]]), list(enumerate(parts)))
    for c in counters[1:]:
        K.merge_counters(counters[0], c)
    return counters


def start_filter(tokens, doc_offsets, parts, frequent_word, counters, sigma, min_len, vocab_size,
                  stats, stage):
    """Step 3: keep the positions that may start a frequent L-gram (the run
    test on the L-1 bigrams, then the L-gram counting filter, which reuses the
    bigram counters' memory); count the kept starts per first token and
    slice."""
    threshold = min(sigma, 255)
    keep = np.empty(tokens.shape[0], np.uint8)
    with stage("mark_runs"):
        kept = run_parallel(lambda r: K.mark_runs(tokens, doc_offsets, r[0], r[1], frequent_word,
                                                  counters[0], threshold, min_len, keep), parts)
    stats["positions_after_bigram_filter"] = int(sum(kept))
    first_counts = [np.zeros(vocab_size, np.int64) for _ in parts]
    with stage("lgram_filter"):
        if min_len > 2:
            for c in counters:
                c.fill(0)
            run_parallel(lambda ir: K.lgram_filter(tokens, doc_offsets, ir[1][0], ir[1][1], keep, min_len,
                                                   counters[ir[0]], threshold, first_counts[ir[0]], True),
                         list(enumerate(parts)))
            for c in counters[1:]:
                K.merge_counters(counters[0], c)
            kept = run_parallel(lambda ir: K.lgram_filter(tokens, doc_offsets, ir[1][0], ir[1][1], keep,
                                                          min_len, counters[0], threshold, first_counts[ir[0]],
                                                          False), list(enumerate(parts)))
        else:
            kept = run_parallel(lambda ir: K.count_first(tokens, doc_offsets, ir[1][0], ir[1][1], keep,
                                                         first_counts[ir[0]]), list(enumerate(parts)))
    stats["positions_after_lgram_filter"] = int(sum(kept))
    return keep, first_counts


def buckets(tokens, doc_offsets, parts, keep, first_counts, vocab_size, stats):
    """Step 3 (end): the kept starts bucketed by first token (a counting sort,
    each slice writing at its own offsets), with next and previous tokens."""
    first_count = np.sum(first_counts, axis=0) if first_counts else np.zeros(vocab_size, np.int64)
    first_start = np.zeros(vocab_size + 1, np.int64)
    np.cumsum(first_count, out=first_start[1:])
    total = int(first_start[-1])
    stats["bigrams_passing_filter"] = total
    pos = np.empty(total, pos_dtype(tokens.shape[0]))
    doc = np.empty(total, np.int32)
    nxt = np.empty(total, np.int32)
    prv = np.empty(total, np.int32)
    fills = []
    acc = first_start[:-1].copy()
    for fc in first_counts:
        fills.append(acc.copy())
        acc += fc
    run_parallel(lambda ir: K.bucket_by_first(tokens, doc_offsets, ir[1][0], ir[1][1], keep,
                                              fills[ir[0]], pos, doc, nxt, prv, 0, vocab_size, 0, 0,
                                              NO_WINDOWS, NO_WINDOWS, NO_WINDOWS),
                 list(enumerate(parts)))
    return pos, doc, nxt, prv, first_start


def seeds(buckets, sigma, vocab_size, workers, stats, a_range=None):
    """Steps 4-5: exact seeds (regrouped by second token, df counted, filter
    false positives and left-uniform seeds dropped), ordered by psi.

    ``a_range`` restricts the buckets to first tokens ``[a_lo, a_hi)`` (the
    out-of-core path's groups); the counts are added to ``stats``."""
    pos, doc, nxt, prv, first_start = buckets
    a_lo, a_hi = a_range or (0, vocab_size)
    # disjoint first-token ranges of about equal size, one per worker
    lo_n, hi_n = int(first_start[a_lo]), int(first_start[a_hi])
    cuts = [a_lo] + [min(max(int(np.searchsorted(first_start, lo_n + (hi_n - lo_n) * i // workers)), a_lo), a_hi)
                     for i in range(1, workers)] + [a_hi]
    ranges = [(cuts[i], cuts[i + 1]) for i in range(workers) if cuts[i] < cuts[i + 1]]
    outs = run_parallel(lambda r: K.split_seeds(pos, doc, nxt, prv, first_start, r[0], r[1],
                                                sigma, vocab_size), ranges)
    seed_lo, seed_hi, seed_df, seed_a, seed_b = (
        np.concatenate([o[i] for o in outs]) if outs else np.zeros(0, np.int64) for i in range(5))
    for key, i in (("seed_occurrences", 5), ("false_positive_occurrences", 6),
                   ("seeds_pruned_left", 7), ("seed_occurrences_pruned_left", 8)):
        stats[key] = stats.get(key, 0) + int(sum(o[i] for o in outs))
    stats["seeds"] = stats.get("seeds", 0) + int(seed_lo.shape[0])
    # order by psi = 2 * df desc, then token ids (deterministic)
    order = np.lexsort((seed_b, seed_a, -seed_df)).astype(np.int64)
    return (pos, doc, seed_lo, seed_hi, seed_df), order


def grow(tokens, doc_offsets, seeds, order, sigma, min_len, vocab_size, workers, report,
          n_chunks=None, buffer_start=None, after_chunk=None) -> list[tuple]:
    """Steps 6-8: depth-first growth of the seeds, in strided chunks taken by
    the workers from a shared counter; one output tuple per chunk, in chunk
    order (so the merge does not depend on thread timing)."""
    _, _, seed_lo, seed_hi, _ = seeds
    max_seed = int((seed_hi - seed_lo).max()) if seed_lo.shape[0] else 0
    n_chunks = n_chunks or max(1, min(256, order.shape[0] // 64))
    n_chunks = max(1, min(n_chunks, max(order.shape[0], 1)))
    # strided chunks spread the heavy (high psi) seeds over all workers
    chunks = [order[i::n_chunks] for i in range(n_chunks)]
    lock = threading.Lock()
    state = {"next": 0, "done": 0}
    pool = [Worker(vocab_size, max_seed, buffer_start, seeds[0].dtype) for _ in range(min(workers, n_chunks))]
    results: list = [None] * n_chunks

    def work(wi: int):
        w = pool[wi]
        while True:
            with lock:
                ci = state["next"]
                state["next"] += 1
            if ci >= n_chunks:
                break
            w.run(tokens, doc_offsets, seeds, chunks[ci], sigma, min_len)
            results[ci] = w.outputs()
            w.fresh_outputs()  # the outputs are kept by reference
            if after_chunk is not None:
                after_chunk()
            with lock:
                state["done"] += 1
                report("grow", state["done"] / n_chunks)

    run_parallel(work, range(len(pool)))
    return results


def coverage(parts_out, n_tokens, doc_offsets):
    """Step 9: the merged result, ranges by start, and the sweep that keeps
    the ranges not contained in another and counts covered tokens."""
    merged = merge(parts_out, n_tokens)
    # ranges by start (packed keys: numpy's vectorised sort; with int64
    # positions or 2^32 ranges the keys do not fit, an argsort), then the sweep
    n_rng = merged["rng_pos"].shape[0]
    if merged["rng_pos"].dtype.itemsize == 4 and n_rng < 2**32:
        keys = (merged["rng_pos"].astype(np.int64) << 32) | np.arange(n_rng, dtype=np.int64)
        keys.sort()
        by_start = keys & 0xFFFFFFFF
    else:
        by_start = np.argsort(merged["rng_pos"], kind="stable")
    for name in ("rng_pos", "rng_len", "rng_node"):
        merged[name] = merged[name][by_start]
    covered, kept = C.sweep(int(n_tokens), doc_offsets, merged["rng_pos"], merged["rng_len"])
    return merged, covered, kept


def merge(parts, n_tokens: int = 0) -> dict:
    """Concatenate per-chunk outputs (in chunk order), renumbering nodes, then
    put the nodes in a canonical order (by first occurrence, then length) and
    the occurrences by node and position, so that the result depends neither
    on how chunks were spread over threads nor on the number of chunks."""
    if not parts:
        return canonical({name: np.zeros(0, dtype) for name, dtype, _ in OUTPUT_FIELDS}, n_tokens)
    base = 0
    cols: dict[str, list] = {name: [] for name, _, _ in OUTPUT_FIELDS}
    for p in parts:
        for (name, _, _), arr in zip(OUTPUT_FIELDS, p):
            if name in ("occ_node", "rng_node"):
                arr = arr + base
            cols[name].append(arr)
        base += p[0].shape[0]
    return canonical({name: np.concatenate(cols[name]) for name, _, _ in OUTPUT_FIELDS}, n_tokens)
