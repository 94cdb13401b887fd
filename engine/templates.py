"""Templates with variable slots: «posted by * on * leave a comment».

A *pattern* is a sequence of constant segments joined by slots,
``c_0 * c_1 * ... * c_k``; a slot stands for 1 to W tokens (``max_slot``).
An occurrence is a run ``tokens[s:e]`` of one document that matches it; df is
the number of documents with an occurrence.  A *template* is a pattern with

* at least one slot (a pattern without slots is a verbatim phrase, mined by
  :mod:`engine.bloomspan`);
* an *anchor*: its leftmost constant segment of at least
  ``A = max(2, ceil(L / 2))`` tokens (templates extend verbatim phrases);
* df >= sigma, and df >= a quarter of the anchor's df as a phrase
  (*cohesion*: the parts joined across slots belong together, so a banner
  followed within W tokens by "the" in a fifth of its documents is not a
  template, while two to four templates sharing a first segment are);
* at least L constant tokens;
* *maximality*: no single-step extension has the same df.  The steps are a
  token added at either end (``x T``, ``T x``), a slot and a token added at
  either end (``x * T``, ``T * x``), and a slot made constant (a filler of 1
  to W tokens).  An extension occurs only where the pattern occurs, so its
  df is never larger, and a slot with a single filler is never maximal.
  Nor is a template whose slot can be *narrowed*: when, in every one of its
  documents, a filler of that slot begins (or ends) with the same tokens f
  (the whole filler included), f belongs to the constant part: ``posted by
  * smith on`` wins over ``posted by * on`` when every name ends in smith,
  and ``a * b`` is not reported when its fillers are ``x`` in some
  documents and ``x y`` in the others (``a x b`` and ``a x y b`` are
  verbatim phrases).  Counting a whole filler as f is what lets the growth
  prune closed chains (below) without losing a template.
* not *subsumed*: a maximal template that, in each of its documents, has an
  occurrence inside an occurrence of another maximal template with more
  documents (or as many, and not the other way round) is its special case (``copyright * acme corp all
  rights reserved`` inside ``copyright * all rights reserved``) and is not
  reported.

``tests/naive.py`` (:func:`templates`) enumerates every pattern of a small
corpus and applies these rules by brute force; this module must return the
same set.

Method
------
1. *Seeds* (reuses steps 3b-3c of the verbatim pipeline,
   :func:`engine.kernels.bloomspan.lgram_filter`): saturating byte counters
   of the A-gram hashes drop, in two linear scans, every position whose
   A-gram occurs fewer than sigma times (the Zipf tail: 63% of webdocs'
   positions); the survivors are sorted by a 64-bit hash (an LSD radix
   sort of (hash, position) pairs, each half of the hash range in its own
   thread), split into runs with df >= sigma and verified token by token.
   A seed is the first A tokens of a template's anchor, which makes the
   generation unique.
2. *Right growth* from each seed, depth first over *embeddings*: each way
   an occurrence matches, its (start, end) and the (start, width) of each
   slot's filler.  A child appends a token (the segment grows) or a slot
   and a token (``* x``, for each width 1..W) to each embedding.  The
   anchor is complete when the first slot is appended; from then on every
   node needs df >= a quarter of its df.
3. *Left growth* from each right node: first ``x *`` (the anchor starts at
   the seed), then tokens or ``x *`` prepended, left segments staying
   shorter than A (else they would be the anchor).
4. Each node with a slot and L constants is checked for maximality on its
   own embeddings, by counts of distinct documents per token id (no sort,
   no hash): the tokens around them (only for the extensions its children
   did not already count), and the first and the last token of each slot's
   fillers (a common prefix f of the fillers in every document implies a
   common first token, and a slot made constant is such an f, so the two
   counts decide both rules).  The check is skipped when one of the node's
   children keeps its df: that child is an extension of the rule.
5. The most frequent fillers of each slot are counted from the reported
   templates' embeddings (an exact open-addressing table, in the worker
   thread that grew the seed), and subsumed templates are dropped; both
   are kernels.  The result frames (:func:`template_frames`) are built by
   columns: texts joined by Arrow's kernels from the vocabulary, spans and
   per-document coverage from one kernel pass.

Out of core (``out_of_core``, :class:`OutOfCore`; the runs whose
snapshot's ``IN_MEMORY_TEMPLATE_BYTES_PER_TOKEN`` exceed the ``--memory``
budget, :func:`engine.memory.template_plan`): nothing of the corpus' size
in anonymous memory.  The documents' array is a scratch file, memory-mapped
(the growth reads it through the page cache, as it reads the token
array); step 1's two filter scans read a chunk of documents at a time (the
counters accumulate over the chunks, which no document spans, so they
hold what one scan of the corpus puts in them) and keep each chunk's
survivors as bits; then the hash range is cut into ``2^b`` parts (b the
least for which the survivors over ``2^b`` fit ``part_entries``), and for
each part in turn, in hash order, the survivors hashing into it are
collected, sorted and cut into seeds as above, and those seeds grown
(steps 2-5) before the next part.  All the positions of a seed hash alike,
so each seed is whole in one part, and the parts in hash order give the
seeds in the in-memory order: the same templates (the tests compare both
paths with the brute force and with each other).  Cost: one more scan of
the survivors' bits and one hashing of the survivors per part.  On
webdocs at ``--memory 2GB`` (two parts) the result files are the in-memory
run's, byte for byte.

Pruning, all of it exact:

* df is antimonotone along both growths and the cohesion bound only rises;
* *narrowable slots*: when the fillers of one slot begin (or end) with one
  token in every embedding of a node, so do they in every embedding of
  every extension (an extension's embedding restricted to the node's part
  is one of the node's embeddings, with the same filler), so that slot can
  be narrowed in each of them: the node is dropped with its subtree.  This
  is checked at every node, for every slot, and for the slot a child adds
  before the child is made (the first and last filler tokens of each key,
  in the pass that counts the keys: three quarters of the slot candidates
  on webdocs go no further); it is what keeps lists with varying entries
  (the pandas and SciPy sidebars) from branching into every placement of
  slots over them;
* *closed chains* (the pruning of closed-pattern miners such as LCM and
  BIDE, here on occurrence sets): when one token x precedes every
  occurrence of a right node, nothing in its subtree is maximal (x extends
  each right descendant; a slot put before it has fillers ending in x in
  every document, so it can be narrowed); when one token follows every
  occurrence of a right node, only that token is appended (a slot there
  would have fillers beginning with it, and the node and its left growth
  extend by it), in place and as many times as the chain lasts (the node
  becomes its only descendant, with the same embeddings: a 2,900-token
  sidebar costs one pass per token, not a node); a left node preceded
  everywhere by x only grows by x, in place in the same way (while its
  left segment stays shorter than A).
  Seeds inside a longer repeat and the nodes along a repeated run are thus
  passed through, not branched from.

Cost: each node costs O(embeddings x W): the candidates of a family of
children (each its key, document, source embedding and width: the rest
follows from those) are counted per key (distinct documents, in
per-thread scratch arrays indexed by token id), and those of the keys at the threshold are
grouped by a stable bucket sort on the key, which keeps them grouped by
document (all the counts need); nothing is sorted but a reported
template's occurrences.  Seeds are independent: worker threads grow
batches of them (the kernel releases the GIL) and the results are read back
in seed order, so the answer never depends on the number of threads (tested
against one thread).  The embeddings hold positions in int32 when the
snapshot has fewer than 2^31 tokens (half the memory traffic; tested equal
to int64).  Periodic text is the worst case: an index page listing
35 ``is month end pandas tseries offsets <class>`` entries in each of 954
documents gives seeds of 33,000 embeddings per node (up to 0.5 s each);
the work bound (100M units per seed) stops only runs of one repeated
token (``0 0 0 0 0``: one seed of 119,639 on webdocs, one of 228,124 on
prose), whose occurrences match in a number of ways that grows with each
slot.  docs/performance.md has the measured figures.  Departure from a plain
closed-pattern miner: the embeddings are kept instead of occurrence sets, which costs memory when an
occurrence matches in many ways (periodic runs such as ``0 0 0 0``) but
saves the search for fillers at every check.
"""
from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .config import default_workers
from .constants import DEFAULT_MAX_SLOT, DEFAULT_MAX_SLOTS, MAX_TOKENS_32
from .errors import BoilerscopeError
from .params import check_max_slot
from .kernels import bloomspan as BK
from .kernels import templates as KT
from .kernels.templates import SLOT
from .memory import Pager
from .steps import doc_chunks, filter_bytes_for, run_parallel, split_docs

log = logging.getLogger(__name__)

COHESION = 4  #: a template's df is at least 1/COHESION of its anchor's df
DEFAULT_MAX_WORK = 100_000_000  #: work bound per seed (see mine_templates)
SEED_BATCH = 32  #: seeds per task of a worker thread


FILLERS_STORED = 20  #: fillers kept per slot in the store (the most frequent)


@dataclass
class Template:
    """One reported template: ``ids`` (its token ids, ``SLOT`` for a slot),
    its df, its occurrences (global token positions, end exclusive) and the
    most frequent fillers of each slot, as rows of ``filler_rows`` (int64,
    one per filler: slot, start, width, count; by slot, most frequent
    first, at most ``FILLERS_STORED`` per slot)."""

    ids: np.ndarray
    df: int
    starts: np.ndarray
    ends: np.ndarray
    filler_rows: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int64))

    @property
    def pattern(self) -> tuple:
        """The token ids as a tuple (``SLOT`` for a slot)."""
        return tuple(self.ids.tolist())

    def fillers(self, tokens) -> list:
        """Per slot, ``[(filler token tuple, count), ...]``, most frequent first."""
        out = [[] for _ in range(int(np.count_nonzero(self.ids == SLOT)))]
        for j, a, w, n in self.filler_rows.tolist():
            out[j].append((tuple(np.asarray(tokens[a:a + w]).tolist()), n))
        return out


def anchor_length(min_len: int) -> int:
    return max(2, -(-int(min_len) // 2))


class Corpus:
    """The token ids as given (int32 or int64), each position's document
    (int32) and the document offsets: what the kernels read.  ``doc_of``:
    the documents' array when made elsewhere (out of core: a memory-mapped
    scratch file, :func:`_doc_of_file`)."""

    def __init__(self, tokens, doc_offsets, doc_of=None):
        self.tokens = np.ascontiguousarray(tokens)
        if self.tokens.dtype not in (np.int32, np.int64):
            self.tokens = self.tokens.astype(np.int64)
        self.doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
        n_docs = self.doc_offsets.shape[0] - 1
        self.doc_of = doc_of if doc_of is not None else \
            np.repeat(np.arange(n_docs, dtype=np.int32), np.diff(self.doc_offsets))

    def df(self, starts) -> int:
        """Distinct documents of sorted positions."""
        if starts.shape[0] == 0:
            return 0
        d = self.doc_of[starts]
        return 1 + int(np.count_nonzero(d[1:] != d[:-1]))


def _seeds_of_pairs(c: Corpus, pairs: list, a: int, sigma: int, workers: int, bit: int):
    """The seeds of (hash, position) pairs (``pairs``: the two arrays,
    positions increasing; the list is emptied, so that the arrays are freed
    once split): sorted by hash, the two halves of the range (split at
    ``bit``: a run of equal hashes never spans both) in two threads, then
    cut into runs apart."""
    h, pos = pairs
    pairs.clear()
    if workers > 1:
        h0, p0, h1, p1 = KT.split_on_bit(h, pos, bit)
        halves = [(h0, p0), (h1, p1)]
        del h0, p0, h1, p1
    else:
        halves = [(h, pos)]
    del h, pos

    def sort_half(half):  # the half's arrays are the sort's buffers
        hh, p = KT.radix_sort_pairs(half[0], half[1])
        return p, KT.seed_groups(c.tokens, c.doc_of, p, hh, a, sigma)

    for p_half, (lo, hi, exact) in run_parallel(sort_half, halves):
        for g in range(lo.shape[0]):
            p = p_half[lo[g]:hi[g]]
            if exact[g]:
                yield p
                continue
            win = np.stack([c.tokens[p + k] for k in range(a)], axis=1)
            keys, inv = np.unique(win, axis=0, return_inverse=True)
            for j in range(keys.shape[0]):
                q = np.sort(p[inv.ravel() == j])
                if c.df(q) >= sigma:
                    yield q


@dataclass(frozen=True)
class OutOfCore:
    """How the template miner stays within a memory budget.

    ``chunk_tokens``: tokens of the documents the filters scan at once;
    ``part_entries``: surviving a-gram positions sorted at once, on average
    (32 bytes each with the sort's buffers; the pairs are freed once split
    between the sort's two threads): past it the hash range is cut into
    2^b parts, each sorted and grown in its own pass (a part holds every
    occurrence of its a-grams, so a very frequent one can make it larger);
    ``filter_bytes``: the counters (0: the in-memory size);
    ``scratch``: the folder of the documents' scratch file (the runner
    gives the store's arrays folder, whose leftovers the store removes;
    None: the system's temporary folder)."""

    chunk_tokens: int
    part_entries: int
    filter_bytes: int = 0
    scratch: str | None = None

    @classmethod
    def of_plan(cls, plan, scratch: str | None = None) -> "OutOfCore":
        """The sizes of an out-of-core :class:`engine.memory.Plan`: its chunks,
        its filters, and a part of the a-gram positions in half its group
        share (the sort's second buffer)."""
        return cls(chunk_tokens=plan.chunk_tokens, part_entries=max(1, plan.group_entries // 2),
                   filter_bytes=plan.filter_bytes, scratch=scratch)


#: At most 2^this parts of the hash range.
MAX_PART_BITS = 12


def _doc_of_file(doc_offsets, folder: str, chunk_tokens: int):
    """Each position's document (int32) in a memory-mapped scratch file in
    ``folder``, written a chunk of documents at a time: the growth reads it
    from the page cache, not from anonymous memory."""
    n = int(doc_offsets[-1])
    path = os.path.join(folder, "doc_of.i32")
    try:  # the disk space reserved first: a full disk is this error, not a crash when the map is written
        with open(path, "wb") as fh:
            os.posix_fallocate(fh.fileno(), 0, 4 * max(n, 1))
    except OSError as exc:
        raise BoilerscopeError(f"no room for the template miner's scratch file ({4 * n:,} bytes) in {folder} "
                               f"({exc.strerror or exc}); free disk space there") from None
    mm = np.memmap(path, np.int32, "r+", shape=(max(n, 1),))
    for d0, d1 in doc_chunks(doc_offsets, chunk_tokens):
        lo, hi = int(doc_offsets[d0]), int(doc_offsets[d1])
        mm[lo:hi] = np.repeat(np.arange(d0, d1, dtype=np.int32), np.diff(doc_offsets[d0:d1 + 1]))
        Pager(mm).release()
    mm.flush()
    return np.asarray(mm)[:n]


def _seed_parts(c: Corpus, a: int, sigma: int, workers: int, ooc: OutOfCore, n_keys: int, progress=None,
                release: bool = True):
    """Position arrays (sorted) of every distinct a-gram with df >= sigma, in
    the order of their hashes, one list per part of the hash range (one
    part, one chunk in memory: ``ooc`` as large as the corpus).

    The verbatim pipeline's steps 3b-3c (:func:`engine.kernels.bloomspan.lgram_filter`:
    saturating counters of the a-gram hashes, one set per worker over its
    share of a chunk's documents, merged; then the positions whose counter
    reaches sigma) drop the Zipf tail in two linear scans, a chunk of
    documents at a time (the counters accumulate over the chunks, which no
    document spans), each chunk's survivors kept as bits.  Then for each
    part of the hash range (its top bits: the parts come in hash order) the
    survivors whose a-gram hashes into it are collected (their hashes
    computed again in each part's pass), sorted by hash
    (:func:`_seeds_of_pairs`) and split into runs, each verified token by
    token.  A seed's positions all hash alike, so every seed is in one
    part, whole.  ``progress`` hears ("template seeds", fraction) after each
    chunk of the two scans (a cancelled run stops there); ``release``: give
    back the token pages each chunk read (out of core)."""
    n = c.tokens.shape[0]
    if n == 0:
        return
    chunks = doc_chunks(c.doc_offsets, ooc.chunk_tokens)
    size = ooc.filter_bytes or filter_bytes_for(n)
    threshold = min(sigma, 255)
    pager = Pager(c.tokens if release else None)

    def chunk_view(d0, d1):
        lo, hi = int(c.doc_offsets[d0]), int(c.doc_offsets[d1])
        return lo, hi, c.tokens[lo:hi], c.doc_offsets[d0:d1 + 1] - lo

    def scan(counters, counting, d0, d1):
        lo, hi, tok, off = chunk_view(d0, d1)
        keep = np.ones(hi - lo, np.uint8)
        jobs = list(enumerate(split_docs(off, workers)))
        run_parallel(lambda ir: BK.lgram_filter(tok, off, ir[1][0], ir[1][1], keep, a,
                                                counters[ir[0]] if counting else counters[0], threshold,
                                                first[ir[0]], counting), jobs)
        pager.release()
        return keep

    counters = [np.zeros(size, np.uint8) for _ in range(max(1, workers))]
    first = [np.zeros(n_keys, np.int64) for _ in counters]  # per-first-token counts, unused here
    report = progress or (lambda stage, fraction: None)
    for i, (d0, d1) in enumerate(chunks):
        scan(counters, True, d0, d1)
        report("template seeds", (i + 1) / (2 * len(chunks)))
    for other in counters[1:]:
        BK.merge_counters(counters[0], other)
    del counters[1:]
    packed, survivors = [], 0
    for i, (d0, d1) in enumerate(chunks):
        keep = scan(counters, False, d0, d1)
        survivors += int(np.count_nonzero(keep))
        packed.append(np.packbits(keep))
        del keep
        report("template seeds", (len(chunks) + i + 1) / (2 * len(chunks)))
    del counters, first
    bits = 0
    while survivors > (ooc.part_entries << bits) and bits < MAX_PART_BITS:
        bits += 1
    log.info("templates: %d a-gram positions pass the filter, sorted in %d part(s) of the hash range",
             survivors, 1 << bits)
    largest = 0
    for part in range(1 << bits):
        hs, ps = [], []
        for (d0, d1), bits_of in zip(chunks, packed):
            lo, hi = int(c.doc_offsets[d0]), int(c.doc_offsets[d1])
            p = np.flatnonzero(np.unpackbits(bits_of, count=hi - lo)).astype(np.int64, copy=False)
            if lo:
                p += lo
            h = KT.agram_hashes(c.tokens, p, a)
            if bits:  # the part's share: its top bits
                inside = (h >> np.uint64(64 - bits)) == np.uint64(part)
                h, p = h[inside], p[inside]
            hs.append(h)
            ps.append(p)
            pager.release()
        pairs = [hs[0], ps[0]] if len(hs) == 1 else [np.concatenate(hs), np.concatenate(ps)]
        del hs, ps
        largest = max(largest, pairs[0].shape[0])
        seeds = list(_seeds_of_pairs(c, pairs, a, sigma, workers, 63 - bits))  # (frees the pairs)
        yield seeds, part, 1 << bits
        del seeds
    if largest > ooc.part_entries:
        log.info("templates: the largest part of the hash range held %d a-gram positions (%d planned)",
                 largest, ooc.part_entries)


def mine_templates(tokens, doc_offsets, sigma: int, min_len: int, max_slot: int = DEFAULT_MAX_SLOT,
                   max_slots: int = DEFAULT_MAX_SLOTS, max_work: int = DEFAULT_MAX_WORK,
                   stats: dict | None = None, progress=None, workers: int | None = None,
                   out_of_core: "OutOfCore | None" = None) -> list[Template]:
    """All maximal frequent templates (see the module docstring), in a
    canonical order: by first occurrence, then pattern.

    Parameters
    ----------
    tokens : int array (n_tokens,)
    doc_offsets : int64 array (n_docs + 1,)
    sigma : int
        Minimum df (>= 1).
    min_len : int
        L: minimum number of constant tokens (>= 2).
    max_slot : int
        W: a slot stands for 1 to W tokens (1..16).
    max_slots : int
        The most slots a template has (1..64).
    max_work : int
        Work bound per seed (embeddings x (W + 1) plus the pattern's length,
        summed over its nodes, and the embeddings once per token a closed
        chain adds: what the growth reads and writes; 0: none).  A seed
        past it is *truncated*: its growth stops, so the answer may miss
        templates of that anchor.  ``stats`` receives
        ``seeds``, ``nodes``, ``truncated_seeds`` and up to 20
        ``truncated_examples`` (the seed's first occurrence and df).
    progress : callable(str, float) or None
        Called with the stage ("templates") and the fraction of seeds done.
    workers : int, optional
        Threads growing the seeds (default: the cores, ``BOILERSCOPE_WORKERS``);
        the seeds go to them in batches and their results are read back in
        seed order, so the answer never depends on the number of threads.
    out_of_core : OutOfCore, optional
        Mine within a memory budget (:class:`OutOfCore`): the documents'
        array in a scratch file, the a-gram filter a chunk at a time and
        the seeds sorted and grown one part of the hash range at a time.
        The same answer.
    """
    w_max = check_max_slot(max_slot)
    sigma = max(1, int(sigma))
    min_len = int(min_len)
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if out_of_core is None:
            c = Corpus(tokens, doc_offsets)
        else:  # the documents' array in a scratch file, removed at the end
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="boilerscope-templates-",
                                                                     dir=out_of_core.scratch))
            offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
            c = Corpus(tokens, offsets, _doc_of_file(offsets, folder, out_of_core.chunk_tokens))
        return _mine(c, sigma, min_len, w_max, max_slots, max_work, stats, progress, workers, out_of_core,
                     time.perf_counter() - t0)


def _mine(c: Corpus, sigma, min_len, w_max, max_slots, max_work, stats, progress, workers, out_of_core,
          t_corpus: float):
    """:func:`mine_templates` on a :class:`Corpus` made in ``t_corpus``
    seconds (counted with the seeds)."""
    a = anchor_length(min_len)
    workers = max(1, int(workers or default_workers()))
    n_keys = int(c.tokens.max()) + 1 if c.tokens.shape[0] else 1
    whole = max(1, c.tokens.shape[0])  # in memory: one chunk, one part
    parts = _seed_parts(c, a, sigma, workers, out_of_core or OutOfCore(chunk_tokens=whole, part_entries=whole),
                        n_keys, progress, release=out_of_core is not None)
    scratch = threading.local()

    # the growth's embeddings hold positions in the seeds' width: int32 when
    # they fit (half the memory traffic of its pools)
    pos_dtype = np.int32 if c.tokens.shape[0] <= MAX_TOKENS_32 else np.int64

    def grow(batch):
        # one worker thread: its own scratch, the kernels release the GIL;
        # the fillers of the seed's templates are ranked here too
        if not hasattr(scratch, "key_docs"):
            scratch.key_docs = np.zeros(n_keys, np.int64)
            scratch.key_last = np.full(n_keys, -1, np.int64)
            scratch.key_ff = np.full(n_keys, -1, np.int64)
            scratch.key_lf = np.full(n_keys, -1, np.int64)
        out = []
        for pos in batch:
            pat, pat_off, dfs, occ_s, occ_e, occ_off, fill_s, fill_w, fill_off, nodes, cut = KT.grow_seed(
                c.tokens, c.doc_of, c.doc_offsets, pos.astype(pos_dtype), a, sigma, min_len, w_max, max_slots, COHESION,
                int(max_work), scratch.key_docs, scratch.key_last, scratch.key_ff, scratch.key_lf)
            if dfs.shape[0]:
                n_slots = np.add.reduceat((pat == SLOT).astype(np.int64), pat_off[:-1])
                top = KT.top_fillers(c.tokens, fill_s, fill_w, fill_off, n_slots, FILLERS_STORED)
            else:
                top = None
            out.append((pat, pat_off, dfs, occ_s, occ_e, occ_off, top, nodes, cut))
        return out

    found, n_seeds, n_nodes, truncated = [], 0, 0, []
    t_seeds, t_growth = t_corpus, 0.0
    with ThreadPoolExecutor(workers) if workers > 1 else contextlib.nullcontext() as pool:
        k = 0
        while True:
            t = time.perf_counter()
            nxt = next(parts, None)  # (out of core: one part of the hash range at a time)
            t_seeds += time.perf_counter() - t
            if nxt is None:
                break
            seeds, part, n_parts = nxt
            t = time.perf_counter()
            batches = [seeds[i:i + SEED_BATCH] for i in range(0, len(seeds), SEED_BATCH)]
            grown = pool.map(grow, batches) if pool is not None else map(grow, batches)
            results = (r for batch in grown for r in batch)  # in seed order, whichever thread grew them
            report = None if progress is None else \
                (lambda stage, f, part=part, n_parts=n_parts: progress(stage, (part + f) / n_parts))
            f, ns, nn, tr = _collect(c, seeds, results, report)
            found += f
            n_seeds += ns
            n_nodes += nn
            truncated += tr
            del seeds, batches, f, nxt
            t_growth += time.perf_counter() - t
            k += 1
    t = time.perf_counter()
    if truncated:
        log.warning("templates: %d of %d seeds stopped at the work bound %d (their anchors may miss templates)",
                    len(truncated), n_seeds, max_work)
    n_maximal = len(found)
    found = _drop_subsumed(found, c.doc_of)
    if stats is not None:
        stats.update({"seeds": n_seeds, "nodes": n_nodes, "truncated_seeds": len(truncated),
                      "truncated_examples": truncated[:20], "max_work": int(max_work), "workers": workers,
                      "parts": k,
                      "seconds": {"seeds": round(t_seeds, 3), "growth": round(t_growth, 3),
                                  "subsumed": round(time.perf_counter() - t, 3)}})
    log.info("templates: %d seeds, %d maximal, %d not subsumed", n_seeds, n_maximal, len(found))
    found.sort(key=lambda t: (int(t.starts[0]), t.pattern))
    return found


def _collect(c: Corpus, seeds, results, progress):
    """The templates of the grown seeds, in seed order, each with the most
    frequent fillers of its slots (ranked by
    :func:`engine.kernels.templates.top_fillers` in the worker threads)."""
    found: list[Template] = []
    n_seeds = n_nodes = 0
    truncated = []
    for k, (pos, grown) in enumerate(zip(seeds, results)):
        n_seeds += 1
        pat, pat_off, dfs, occ_s, occ_e, occ_off, top, nodes, cut = grown
        n_nodes += int(nodes)
        if cut:
            truncated.append((int(pos[0]), c.df(pos)))
        if dfs.shape[0] == 0:
            continue
        ft, fj, fs, fw, fc = top
        rows = np.stack([fj, fs, fw, fc], axis=1)
        f_off = np.searchsorted(ft, np.arange(dfs.shape[0] + 1))
        po, oo = pat_off.tolist(), occ_off.tolist()
        for i, d in enumerate(dfs.tolist()):
            found.append(Template(ids=pat[po[i]:po[i + 1]], df=d, starts=occ_s[oo[i]:oo[i + 1]],
                                  ends=occ_e[oo[i]:oo[i + 1]], filler_rows=rows[f_off[i]:f_off[i + 1]]))
        if progress is not None and k % 256 == 0:
            progress("templates", k / max(len(seeds), 1))
    return found, n_seeds, n_nodes, truncated


def _drop_subsumed(found: list[Template], doc_of) -> list[Template]:
    """Drop each template that, in each of its documents, has an occurrence
    inside an occurrence of another one with more documents (or as many, and
    not the other way round): the other is the general form (``copyright *
    all rights reserved`` against ``copyright * acme corp all rights
    reserved``).  The candidates are the templates with an occurrence around
    the template's first occurrence (:func:`engine.kernels.templates.subsumed`).
    """
    if len(found) < 2:
        return found
    t_off = np.zeros(len(found) + 1, np.int64)
    np.cumsum([t.starts.shape[0] for t in found], out=t_off[1:])
    drop = KT.subsumed(np.concatenate([t.starts for t in found]), np.concatenate([t.ends for t in found]), t_off,
                       np.array([t.df for t in found], np.int64), doc_of)
    return [t for t, d in zip(found, drop.tolist()) if not d]
