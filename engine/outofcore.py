"""BloomSpan out of core: the same steps over chunks of documents.

When a snapshot does not fit the run's memory budget (:mod:`engine.memory`),
:func:`engine.planner.mine_tokens` runs the steps of the BloomSpan
pipeline (see :mod:`engine.bloomspan` for the steps and their proofs) with
memory bounded by the budget instead of by the corpus:

* Steps 1-2 (word filter, counting filter of bigrams) read the tokens in
  chunks of whole documents (``Plan.chunk_tokens``); each chunk's token
  pages are given back after it (:class:`engine.memory.Pager`).  A word's df
  is the sum of its per-chunk df, since no document spans two chunks; the
  saturating counters accumulate over the chunks, so they hold exactly what
  one pass over the corpus puts in them.
* The counters are larger than in memory (``Plan.filter_bytes``: near a
  third of the token count, at most a sixteenth of the budget, 256 MiB at
  8 GB): the in-memory 16 MiB, sized for the L3 cache, saturates past a few
  hundred million tokens, and at 3B tokens the false positives filled one
  first token's group with about 370M entries (its arrays, seen in the
  process' memory map: the run took 15 GB of anonymous memory and
  thrashed the page cache; it was stopped).  With 256 MiB, 200M starts
  pass at 3B tokens (6.7%), 310k of them false positives.  Exactness never
  depends on the size: step 4 verifies every seed.
* Step 3 (the run-length test and the L-gram counting filter) writes its
  start flags into one chunk-sized byte buffer instead of one byte per token
  of the corpus; between the passes each chunk's flags are kept packed, one
  bit per token (125 MB at 1B tokens), so that no pass recomputes them.  The
  L-gram counters are their own array here: the in-memory path reuses the
  bigram counters' memory for them, which it can because it runs the
  run-length test on all positions first; here the run-length test of a
  chunk and the L-gram counting of the same chunk alternate.
* The kept starts (16 bytes each: position, document, next and previous
  token; 20 past 2^31 - 2 tokens, where positions are int64) are counted per first token in one pass, then cut into groups of
  first tokens of at most ``Plan.group_entries`` starts (one first token
  forms a group of its own when it alone is larger).  Each group is
  bucketed in one more pass (the counting sort of step 3, restricted to the
  group's first tokens), split into exact seeds (step 4) and grown (steps
  6-8) on the memory-mapped token array, then freed.  This replaces an
  external sort of the survivors: the groups are the sorted runs, and the
  corpus is read once more per group instead of the survivors being written
  and merged.
* The growth reads an *excerpt* of the token array instead of the array
  (:class:`Excerpt`, kernels in :mod:`engine.kernels.excerpt`).  On the
  memory-mapped array its reads are random over the whole file: at 3B
  tokens (a 12 GB file) they no longer fit the pages kept mapped, and the
  growth took 194 s against 12.5 s at 1B.  The excerpt holds, per document,
  the window ``[u - 1, v + L)`` of each run ``[u, v)`` of kept starts (cut
  to the document, merged when two overlap or touch, a -1 between two
  windows), copied in position order while the first group is bucketed;
  the kept starts' positions are moved into it, the growth, the merge and
  the coverage sweep run there, and the outputs' positions are moved back
  (the map is increasing, so every order is the corpus' order).  Why the
  growth reads nothing outside the windows: every node it visits is a
  phrase of df >= sigma (the seeds' exact df, then children of df >= sigma
  and chains that keep every occurrence); for an occurrence at ``p`` in the
  run ``[u, v)`` and a node of length ``m``, either ``m < L`` or every
  L-gram of the phrase is frequent, so every one of its starts ``p ..
  p + m - L`` is kept and ``p + m - L < v``; either way the next token it
  reads, ``p + m``, is before ``v + L``; the left neighbour is ``p - 1 >=
  u - 1``.  The chain skip compares occurrences further, but an extension
  it keeps is such a node, and a gap (-1) ends a comparison.  A document's
  excerpt starts at a kept start only when its document does, so "starts
  its document" reads the same.  The excerpt is made when it fits
  ``Plan.excerpt_bytes`` (a quarter of the budget); otherwise the growth
  reads the array, and its pages are given back between growth chunks
  whenever the process holds more than ``Plan.release_at`` bytes.

Why the answer is the in-memory answer: a seed's growth reads only its own
occurrences and the token array, and the seeds of a first token are all in
one group with all their occurrences (every kept start whose first token is
in the group is bucketed), so every group yields exactly the nodes,
occurrences and ranges the in-memory run yields for those seeds; the merge
(:func:`engine.result.canonical`) and the coverage sweep (step 9) then see
the same multiset of outputs.  The oracle tests run both paths.

Complexity: the in-memory steps' time, plus one linear pass over the tokens
for each group (the number of groups is the kept starts' 16 bytes over a
quarter of the budget: 2 at 1B generated tokens in 8 GB, 3 at 3B).  The
excerpt is copied in the first group's pass and the positions moved in by
the bucketing; moving the ranges' and the nodes' positions back is linear
(they are sorted), the occurrences' a bisection per node.  Memory: the
chunk (4 bytes per token of pages and 1 of flags), the packed flags (n / 8
bytes), the counters (``filter_bytes`` per worker, twice), the group's kept
starts, the growth scratch and outputs, the excerpt (4 bytes per excerpt
token, 16 per window and 32 per document), and O(vocabulary) per worker.
"""
from __future__ import annotations

import logging

import numpy as np

from . import steps as S
from .config import KERNEL_LOCK
from .kernels import bloomspan as K
from .kernels import excerpt as X
from .memory import Pager, Plan
from .steps import doc_chunks
from .result import MiningResult, pos_dtype

log = logging.getLogger(__name__)


def first_token_groups(first_start: np.ndarray, group_entries: int) -> list[tuple[int, int]]:
    """Ranges of first tokens holding at most ``group_entries`` kept starts
    each (a larger single token is a group of its own); empty ones skipped."""
    vocab_size = first_start.shape[0] - 1
    out, a = [], 0
    while a < vocab_size:
        b = int(np.searchsorted(first_start, first_start[a] + group_entries, side="right")) - 1
        b = min(max(b, a + 1), vocab_size)
        if first_start[b] > first_start[a]:
            out.append((a, b))
        a = b
    return out


class _Chunks:
    """The chunks of a corpus, each as (first document, first position, the
    chunk's token view, its offsets from 0), with the token pages given back
    after each one."""

    def __init__(self, tokens, doc_offsets, chunk_tokens: int, pager: Pager):
        self.tokens, self.doc_offsets, self.pager = tokens, doc_offsets, pager
        self.ranges = doc_chunks(doc_offsets, chunk_tokens)
        self.largest = max((int(doc_offsets[e] - doc_offsets[d]) for d, e in self.ranges), default=0)

    def __iter__(self):
        for d0, d1 in self.ranges:
            o0, o1 = int(self.doc_offsets[d0]), int(self.doc_offsets[d1])
            offs = np.ascontiguousarray(self.doc_offsets[d0:d1 + 1] - o0)
            yield d0, o0, self.tokens[o0:o1], offs
            self.pager.release()


def mine_out_of_core(tokens, doc_offsets, vocab_size: int, sigma: int, min_len: int, *, workers: int,
                     filter_bytes: int, plan: Plan, progress=None, chunks: int | None = None,
                     buffer_start: int | None = None) -> MiningResult:
    """Steps 1-9 within ``plan`` (inputs checked and planned by
    :mod:`engine.planner`); same arguments and answer as
    :func:`engine.bloomspan.mine_bloomspan`."""
    stats: dict = {"workers": workers, "filter_bytes": filter_bytes}
    stage = S.Stages()
    report = progress or (lambda name, frac: None)
    with KERNEL_LOCK:
        outputs, excerpt = _steps(tokens, doc_offsets, vocab_size, sigma, min_len, workers, filter_bytes, plan,
                                  stats, stage, report, chunks, buffer_start)
        with stage("coverage"):
            # in the excerpt the order of positions is the corpus' order and
            # a document's ranges stay in its excerpt: the merge and the sweep
            # give the same arrays there, whose positions then go back
            merged, covered, kept = S.coverage(outputs, tokens.shape[0],
                                               doc_offsets if excerpt is None else excerpt.doc)
            if excerpt is not None:
                for name in ("node_rep", "occ_pos", "rng_pos"):
                    excerpt.to_corpus(merged[name], workers)
    return S.to_result(merged, covered, kept, stats, stage)


class Excerpt:
    """The windows of the kept runs of every document, copied out of the
    token array (see the module's docstring): ``doc`` the excerpt's
    document offsets, ``tokens`` its ids (-1 between two windows of a
    document), ``win_real`` and ``win_t`` each window's first position in the
    corpus and in the excerpt, ``win_off`` each document's first window."""

    def __init__(self, ex_len: np.ndarray, ex_nwin: np.ndarray):
        n_docs = ex_len.shape[0]
        self.doc = np.zeros(n_docs + 1, np.int64)
        np.cumsum(ex_len, out=self.doc[1:])
        self.win_off = np.zeros(n_docs + 1, np.int64)
        np.cumsum(ex_nwin, out=self.win_off[1:])
        self.tokens = np.empty(int(self.doc[-1]), np.int32)
        self.win_real = np.empty(int(self.win_off[-1]), np.int64)
        self.win_t = np.empty(int(self.win_off[-1]), np.int64)

    @staticmethod
    def nbytes_for(ex_len: np.ndarray, ex_nwin: np.ndarray) -> int:
        return int(4 * ex_len.sum() + 16 * ex_nwin.sum() + 16 * (ex_len.shape[0] + 1))

    def fill(self, tok, keep, offs, parts, min_len: int, o0: int, d0: int) -> None:
        """Copy the windows of one chunk (its tokens, final start flags and
        offsets from 0; ``o0``, ``d0`` its first position and document)."""
        none = np.zeros(0, np.int64)
        S.run_parallel(lambda r: X.windows(keep, offs, r[0], r[1], min_len, True, tok, none, none,
                                           self.tokens, self.doc, self.win_off, self.win_real, self.win_t,
                                           o0, d0), parts)

    def to_corpus(self, pos: np.ndarray, workers: int) -> None:
        """Excerpt indices (inside windows) to corpus positions, in place
        (the way in is written by the bucketing)."""
        n, workers = pos.shape[0], max(workers, 1)
        cuts = [n * i // workers for i in range(workers + 1)]
        S.run_parallel(lambda r: X.translate(pos, self.win_t, self.win_real, r[0], r[1]),
                       [(cuts[i], cuts[i + 1]) for i in range(workers) if cuts[i] < cuts[i + 1]])


def _steps(tokens, doc_offsets, vocab_size: int, sigma: int, min_len: int, workers: int,
           fbytes: int, plan: Plan, stats: dict, stage, report, n_chunks=None,
           buffer_start=None) -> list[tuple]:
    """Steps 1-8 within ``plan``; returns the growth outputs (one tuple per
    growth chunk, every group's in turn) for step 9, and the excerpt they
    were grown on (None: on the token array)."""
    pager = Pager(tokens)
    chunks = _Chunks(tokens, doc_offsets, plan.chunk_tokens, pager)
    stats["memory"] = {**plan.as_dict(), "chunks": len(chunks.ranges), "mapped": pager.mapped}
    threshold = min(sigma, 255)
    n_workers = max(workers, 1)

    with stage("word_filter"):
        wdf = [np.zeros(vocab_size, np.int64) for _ in range(n_workers)]
        for _, _, tok, offs in chunks:
            parts = S.split_docs(offs, n_workers)

            def word_df(ir, tok=tok, offs=offs):
                i, (p0, p1) = ir
                wdf[i] += K.word_df(tok[offs[p0]:offs[p1]], offs[p0:p1 + 1] - offs[p0], vocab_size)
            S.run_parallel(word_df, list(enumerate(parts)))
        frequent_word = (np.sum(wdf, axis=0) >= sigma).astype(np.uint8)
        del wdf
    stats["words"] = int(vocab_size)
    stats["words_frequent"] = int(frequent_word.sum())
    report("filter", 0.2)

    with stage("counting_filter"):
        counters = [np.zeros(fbytes, np.uint8) for _ in range(n_workers)]
        for _, _, tok, offs in chunks:
            S.run_parallel(lambda ir, tok=tok, offs=offs: K.bloom_count(
                tok, offs, ir[1][0], ir[1][1], frequent_word, counters[ir[0]]),
                list(enumerate(S.split_docs(offs, n_workers))))
        for c in counters[1:]:
            K.merge_counters(counters[0], c)
        bigram = counters[0]
        del counters
    report("filter", 0.4)

    keep = np.empty(max(chunks.largest, 1), np.uint8)

    def load(bits, m):
        keep[:m] = np.unpackbits(bits, count=m)

    # the start flags of every chunk, one bit per token, between the passes
    flags: list = []
    lgram = None
    after_bigrams = 0
    with stage("mark_runs"):
        for _, _, tok, offs in chunks:
            parts = list(enumerate(S.split_docs(offs, n_workers)))
            after_bigrams += sum(S.run_parallel(lambda ir, tok=tok, offs=offs: K.mark_runs(
                tok, offs, ir[1][0], ir[1][1], frequent_word, bigram, threshold, min_len, keep), parts))
            if min_len > 2:
                with stage("lgram_filter"):
                    if lgram is None:
                        lcounters = [np.zeros(fbytes, np.uint8) for _ in range(n_workers)]
                    lgram = lcounters
                    S.run_parallel(lambda ir, tok=tok, offs=offs: K.lgram_filter(
                        tok, offs, ir[1][0], ir[1][1], keep, min_len, lcounters[ir[0]], threshold,
                        np.zeros(1, np.int64), True), parts)
            flags.append(np.packbits(keep[:tok.shape[0]]))
        if lgram is not None:
            for c in lgram[1:]:
                K.merge_counters(lgram[0], c)
            lgram = lgram[0]
            del lcounters
    stats["positions_after_bigram_filter"] = int(after_bigrams)

    n_docs = doc_offsets.shape[0] - 1
    ex_len = np.zeros(n_docs, np.int64)
    ex_nwin = np.zeros(n_docs, np.int64)
    none32, none64 = np.zeros(0, np.int32), np.zeros(0, np.int64)
    with stage("second_pass"):
        first_count = [np.zeros(vocab_size, np.int64) for _ in range(n_workers)]
        total = 0
        for ci, (d0, _, tok, offs) in enumerate(chunks):
            parts = list(enumerate(S.split_docs(offs, n_workers)))
            load(flags[ci], tok.shape[0])
            if lgram is None:
                total += sum(S.run_parallel(lambda ir, tok=tok, offs=offs: K.count_first(
                    tok, offs, ir[1][0], ir[1][1], keep, first_count[ir[0]]), parts))
            else:
                total += sum(S.run_parallel(lambda ir, tok=tok, offs=offs: K.lgram_filter(
                    tok, offs, ir[1][0], ir[1][1], keep, min_len, lgram, threshold, first_count[ir[0]], False),
                    parts))
                flags[ci] = np.packbits(keep[:tok.shape[0]])
            # the excerpt's sizes, from the final flags
            S.run_parallel(lambda ir, offs=offs, d0=d0: X.windows(
                keep, offs, ir[1][0], ir[1][1], min_len, False, none32, ex_len, ex_nwin, none32,
                none64, none64, none64, none64, 0, d0), parts)
        first_start = np.zeros(vocab_size + 1, np.int64)
        np.cumsum(np.sum(first_count, axis=0), out=first_start[1:])
        del first_count, lgram, bigram
    stats["positions_after_lgram_filter"] = int(total)
    stats["bigrams_passing_filter"] = int(total)
    groups = first_token_groups(first_start, plan.group_entries)
    stats["memory"]["groups"] = len(groups)
    stats["memory"]["flag_bytes"] = int(sum(f.nbytes for f in flags))
    log.info("out of core: %d chunks, %d groups of first tokens, %d kept starts",
             len(chunks.ranges), len(groups), total)
    report("filter", 0.5)
    ex_bytes = Excerpt.nbytes_for(ex_len, ex_nwin)
    excerpt = Excerpt(ex_len, ex_nwin) if ex_bytes <= plan.excerpt_bytes else None
    stats["memory"]["excerpt_size_bytes"] = ex_bytes
    stats["memory"]["excerpt"] = excerpt is not None
    stats["memory"]["excerpt_tokens"] = int(ex_len.sum())
    stats["memory"]["excerpt_windows"] = int(ex_nwin.sum())
    log.info("out of core: the growth reads %s (%d tokens in %d windows, %.2f GB)",
             "an excerpt" if excerpt is not None else "the token array (the excerpt is over its budget)",
             int(ex_len.sum()), int(ex_nwin.sum()), ex_bytes / 1e9)
    del ex_len, ex_nwin
    # the bucketing writes the excerpt's positions when there is one
    windows = ((excerpt.win_off, excerpt.win_real, excerpt.win_t) if excerpt is not None
               else (S.NO_WINDOWS,) * 3)

    for key in ("seed_occurrences", "false_positive_occurrences", "seeds", "seeds_pruned_left",
                "seed_occurrences_pruned_left"):
        stats[key] = 0
    outputs: list = []
    for gi, (a_lo, a_hi) in enumerate(groups):
        size = int(first_start[a_hi] - first_start[a_lo])
        with stage("bucket"):
            pos = np.empty(size, pos_dtype(tokens.shape[0]))
            doc = np.empty(size, np.int32)
            nxt = np.empty(size, np.int32)
            prv = np.empty(size, np.int32)
            acc = first_start[:-1] - first_start[a_lo]
            for ci, (d0, o0, tok, offs) in enumerate(chunks):
                parts = list(enumerate(S.split_docs(offs, n_workers)))
                load(flags[ci], tok.shape[0])
                if excerpt is not None and gi == 0:
                    with stage("excerpt"):
                        excerpt.fill(tok, keep, offs, [r for _, r in parts], min_len, o0, d0)
                counts = [np.zeros(vocab_size, np.int64) for _ in parts]
                S.run_parallel(lambda ir, tok=tok, offs=offs, counts=counts: K.count_first(
                    tok, offs, ir[1][0], ir[1][1], keep, counts[ir[0]]), parts)
                fills = []
                for c in counts:
                    fills.append(acc.copy())
                    acc += c
                S.run_parallel(lambda ir, tok=tok, offs=offs, d0=d0, o0=o0: K.bucket_by_first(
                    tok, offs, ir[1][0], ir[1][1], keep, fills[ir[0]], pos, doc, nxt, prv,
                    a_lo, a_hi, o0, d0, *windows), parts)
        with stage("seeds"):
            seeds, order = S.seeds((pos, doc, nxt, prv, first_start - first_start[a_lo]), sigma, vocab_size,
                                  n_workers, stats, (a_lo, a_hi))
            del nxt, prv
        with stage("grow"):
            def grow_report(name, frac, gi=gi):
                report(name, (gi + frac) / len(groups))
            if excerpt is None:
                outputs += S.grow(tokens, doc_offsets, seeds, order, sigma, min_len, vocab_size, n_workers,
                                  grow_report, n_chunks, buffer_start,
                                  after_chunk=lambda: pager.release_above(plan.release_at))
            else:
                outputs += S.grow(excerpt.tokens, excerpt.doc, seeds, order, sigma, min_len, vocab_size,
                                  n_workers, grow_report, n_chunks, buffer_start)
        del seeds, pos, doc
        pager.release()
    stats["memory"]["releases"] = pager.releases
    return outputs, excerpt
