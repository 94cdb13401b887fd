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
* The growth reads the tokens at random; the token pages are given back
  between growth chunks whenever the process holds more than
  ``Plan.release_at`` bytes.

Why the answer is the in-memory answer: a seed's growth reads only its own
occurrences and the token array, and the seeds of a first token are all in
one group with all their occurrences (every kept start whose first token is
in the group is bucketed), so every group yields exactly the nodes,
occurrences and ranges the in-memory run yields for those seeds; the merge
(:func:`engine.result.canonical`) and the coverage sweep (step 9) then see
the same multiset of outputs.  The oracle tests run both paths.

Complexity: the in-memory steps' time, plus one linear pass over the tokens
for each group (the number of groups is the kept starts' 16 bytes over a
quarter of the budget: 2 at 1B generated tokens in 8 GB, 3 at 3B).  Memory: the
chunk (4 bytes per token of pages and 1 of flags), the packed flags (n / 8
bytes), the counters (``filter_bytes`` per worker, twice), the group's kept
starts, the growth scratch and outputs, and O(vocabulary) per worker.
"""
from __future__ import annotations

import logging

import numpy as np

from . import steps as S
from .config import KERNEL_LOCK
from .kernels import bloomspan as K
from .memory import Pager, Plan
from .result import MiningResult, pos_dtype

log = logging.getLogger(__name__)


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
        outputs = _steps(tokens, doc_offsets, vocab_size, sigma, min_len, workers, filter_bytes, plan, stats,
                         stage, report, chunks, buffer_start)
        with stage("coverage"):
            merged, covered, kept = S.coverage(outputs, tokens.shape[0], doc_offsets)
    return S.to_result(merged, covered, kept, stats, stage)


def _steps(tokens, doc_offsets, vocab_size: int, sigma: int, min_len: int, workers: int,
           fbytes: int, plan: Plan, stats: dict, stage, report, n_chunks=None,
           buffer_start=None) -> list[tuple]:
    """Steps 1-8 within ``plan``; returns the growth outputs (one tuple per
    growth chunk, every group's in turn) for step 9."""
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

    with stage("second_pass"):
        first_count = [np.zeros(vocab_size, np.int64) for _ in range(n_workers)]
        total = 0
        for ci, (_, _, tok, offs) in enumerate(chunks):
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
                counts = [np.zeros(vocab_size, np.int64) for _ in parts]
                S.run_parallel(lambda ir, tok=tok, offs=offs, counts=counts: K.count_first(
                    tok, offs, ir[1][0], ir[1][1], keep, counts[ir[0]]), parts)
                fills = []
                for c in counts:
                    fills.append(acc.copy())
                    acc += c
                S.run_parallel(lambda ir, tok=tok, offs=offs, d0=d0, o0=o0: K.bucket_by_first(
                    tok, offs, ir[1][0], ir[1][1], keep, fills[ir[0]], pos, doc, nxt, prv,
                    a_lo, a_hi, o0, d0), parts)
        with stage("seeds"):
            seeds, order = S.seeds((pos, doc, nxt, prv, first_start - first_start[a_lo]), sigma, vocab_size,
                                  n_workers, stats, (a_lo, a_hi))
            del nxt, prv
        with stage("grow"):
            def grow_report(name, frac, gi=gi):
                report(name, (gi + frac) / len(groups))
            outputs += S.grow(tokens, doc_offsets, seeds, order, sigma, min_len, vocab_size, n_workers,
                             grow_report, n_chunks, buffer_start,
                             after_chunk=lambda: pager.release_above(plan.release_at))
        del seeds, pos, doc
        pager.release()
    stats["memory"]["releases"] = pager.releases
    return outputs
