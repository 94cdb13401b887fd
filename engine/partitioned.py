"""Step 4 of the Spark job, partitioned: exact mining of the maximal phrases
across executors, the driver holding nothing that grows with the corpus.

The functions here are the maps and per-partition reductions of that step,
on Arrow batches and numpy arrays; :mod:`engine.spark` wires them with
Spark's shuffles (and :func:`engine.simulate.simulate` with in-process ones, for the tests
that run without Spark).  They take the *segments* of step 3 (per document,
the maximal runs of tokens under a window whose hash passed the frequent
L-gram filter; every occurrence of every frequent phrase of length >= L lies
inside one segment).

Decomposition
-------------
A frequent phrase X (length >= L) has a first L-gram g(X), its *seed*; every
occurrence of X starts at an occurrence of g(X).

A. *Seeds, exactly* (map, shuffle by the L-gram's hash, reduce).  Every
   window of a segment whose hash passes the filter is grouped by its exact
   text (the map groups a batch's windows by token ids and sends one row per
   distinct L-gram with its documents and positions; the reduce groups rows
   by the L-gram's text).  Its df is counted exactly; the frequent ones give
   the coverage mask (a token is covered when it lies in an occurrence of a
   frequent L-gram: the definition's mask, since every frequent phrase of
   length >= L is a union of frequent L-grams).  A frequent L-gram whose
   occurrences all have the same left token inside their segment is *pruned*:
   every phrase starting with it has the same occurrences shifted one token
   left, so none is maximal (the local engine's left-neighbour prune, applied
   to the seeds).  The others are the seeds.
B. *Contexts* (join with the segments by document).  Seeds are dealt to P
   parts by their hash; in each document, each seed occurrence at p asks for
   the interval [p-1, p+C) of its segment (p-1 only inside the segment),
   clipped to the segment; the intervals of one part in one segment are
   merged.  A part's text is therefore disjoint pieces of real text, at most
   its documents' segments, each piece marked *truncated* when it ends before
   its segment does.
C. *Mining a part* (reduce by part).  The part's intervals become a
   pseudo-corpus: one pseudo-document per document, a separator token of its
   own between two intervals, mined by the local engine
   (:func:`engine.planner.mine_tokens`) with the same sigma and L.

Why C is exact for the seeds of the part (sigma >= 2).  Every pseudo
occurrence is a real occurrence in the same document (the intervals are
disjoint real text, separators occur once), so a pseudo df never exceeds
the real one.  Every real occurrence of a phrase Y of length <= C starting
with one of the part's seeds is visible (its interval holds at least C tokens
from p, or reaches the segment's end, and Y lies inside the segment), so for
such Y the pseudo df is the real df.  A left extension a.Y that is frequent
lies inside a segment, so its occurrences' left tokens are visible too: left
maximality is decided exactly.  Right maximality of Y needs its extensions of
length |Y| + 1: exact while |Y| < C.  So if no phrase of length >= C grows
from the seed's occurrences, its answer is exact.  *Truncation test*
(:func:`long_seeds`): a phrase of length >= C has a prefix of exactly C
tokens, as frequent, and that prefix is fully visible at all its
occurrences; so the C-grams at the seed starts with room for one are hashed
and counted in distinct documents, and a seed with a frequent C-gram one of
whose occurrences lies in a truncated interval is *flagged*: its answer is
dropped and its occurrences go to the next round with C multiplied by
CONTEXT_GROWTH (8: fewer rounds than doubling, each one a join with the
segments; any growth keeps the argument) (a hash
collision only merges counts: a flag for nothing, never a miss).  An interval
that reaches its segment's end is never truncated, so the rounds end once C
exceeds the longest segment; each round reads the segments again but mines
only the flagged seeds' occurrences.

A reported maximal phrase belongs to the part's round when its occurrences
are starts of the round's seeds (all of them are, or none: an occurrence at a
seed start begins with that seed).  Its occurrences are the real ones, each
once (the intervals are disjoint), with their documents' positions.

Departures and limits
---------------------
* sigma 1 is not partitioned (its maximal phrases are whole documents, a
  comparison of whole documents, not of seeds); :mod:`engine.spark` says so.
* A part holds every occurrence of its seeds with C tokens each, and phase A
  every occurrence of an L-gram in one task: a seed found in most documents
  (a header opening every page, never pruned since its left token is outside
  the segments) makes its task and its part large, growing with each round
  its phrase needs.  The part counts grow with the seed occurrences, so the
  *share* is bounded on average, but one seed is not split (nor, within a
  part, are more than 2^31 tokens: the local engine's positions).
* The frequent-window filter has at most 64 Mi buckets: past a few GB of
  text most buckets pass, and the segments grow toward the whole corpus
  (results unchanged, cost up).
* Nested repeats (a run of k copies of one token) merge into one interval
  per run and part: linear text, and the engine's own quadratic growth.

Complexity: A is linear in the segments' windows (one sort per batch and per
reduce partition); B linear in the seed occurrences times C; C the local
engine's cost on each part's text; rounds at most log8(longest segment / C0)
+ 1, each on the flagged seeds only.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .coverage import distinct_per_group
from .kernels.hashing import POLY
from .tokenizer import string_buffers

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------
# the job's document maps (steps 2 and 3 of engine.spark, both paths)

WINDOW_MULT = POLY   # odd: the window hash's multiplier (the kernels' polynomial base)


def token_hashes(vocab) -> np.ndarray:
    """A 64-bit hash of each token's text (a list of str or an Arrow string
    array; the same in every partition)."""
    from .kernels.filters import string_hashes
    offsets, data = string_buffers(vocab if isinstance(vocab, pa.Array) else pa.array(vocab, pa.large_string()))
    out = np.empty(offsets.shape[0] - 1, np.uint64)
    string_hashes(data, offsets, out)
    return out


def window_hashes(th: np.ndarray, doc_offsets: np.ndarray, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Hash of every L-token window inside one document: (hashes, start positions)."""
    from .kernels.filters import window_hashes as kernel
    lengths = np.diff(doc_offsets)
    n = int(np.maximum(lengths - L + 1, 0).sum()) if lengths.shape[0] else 0
    h, starts = np.empty(n, np.uint64), np.empty(n, np.int64)
    if n:
        kernel(np.ascontiguousarray(th, np.uint64), np.ascontiguousarray(doc_offsets, np.int64), L, h, starts)
    return h, starts


def normalize_batch(batch: pa.RecordBatch) -> tuple[pa.Array, pa.Array, list, list]:
    """doc_id, text (nulls empty), site and url lists of one batch, as engine.snapshot."""
    from .snapshot import sites_of
    names = batch.schema.names
    text = batch.column(names.index("text")).cast(pa.large_string())
    text = pc.fill_null(text, "") if text.null_count else text
    urls = batch.column(names.index("url")).to_pylist() if "url" in names else [None] * batch.num_rows
    sites = batch.column(names.index("site")).to_pylist() if "site" in names else [None] * batch.num_rows
    sites = sites_of(sites, urls)
    return batch.column(names.index("doc_id")).cast(pa.int64()), text, sites, urls


def tokenize_text(text):
    from .tokenizer import tokenize_arrow
    return tokenize_arrow(text, workers=1)


def count_windows(batches, L: int):
    """Step 2's map: (window hash, documents of the batch holding it)."""
    for b in batches:
        _, text, _, _ = normalize_batch(b)
        tk = tokenize_text(text)
        h, starts = window_hashes(token_hashes(tk.vocab)[tk.tokens], tk.doc_offsets, L)
        if h.shape[0] == 0:
            continue
        doc = np.searchsorted(tk.doc_offsets, starts, side="right") - 1
        order = np.lexsort((doc, h))
        h, doc = h[order], doc[order]
        new = np.ones(h.shape[0], bool)
        new[1:] = (h[1:] != h[:-1]) | (doc[1:] != doc[:-1])
        keys, counts = np.unique(h[new], return_counts=True)
        yield pa.RecordBatch.from_arrays([pa.array(keys.view(np.int64)), pa.array(counts.astype(np.int64))],
                                         names=["h", "n"])


def segments(batches, L: int, frequent, bits: bool = False, written: bool = False, snapshot=None):
    """Step 3's map: per document its id, site, url, token count and
    segments (the tokens of each, joined by spaces), with ``starts`` (each
    segment's first token's place in its document).  ``frequent``: the
    sorted frequent window hashes, or with ``bits`` the partitioned job's
    filter (:func:`engine.partitioned.filter_has`); either may be a broadcast.
    ``written``: also ``raw`` (each segment's text as written, from its first
    token's first character to its last token's end) and ``cs`` / ``ce``
    (each segment token's characters in its document, the document's
    segments in order), for the blocks (:mod:`engine.partitioned_blocks`).
    ``snapshot``: called with each batch's tokenization, doc_ids, sites,
    URLs and text (the executors' snapshot parts: :mod:`engine.partitioned_snapshot`)."""
    F = frequent.value if hasattr(frequent, "value") else frequent  # a broadcast: read once per partition
    for b in batches:
        doc_id, text, sites, urls = normalize_batch(b)
        tk = tokenize_text(text)
        if snapshot is not None:
            snapshot(tk, doc_id, sites, urls, text)
        voc = pa.array(tk.vocab, pa.large_string())  # hashed, and copied into the segments' text
        h, starts = window_hashes(token_hashes(voc)[tk.tokens], tk.doc_offsets, L)
        n = tk.tokens.shape[0]
        if h.shape[0]:
            hit = starts[filter_has(F, h) if bits else np.isin(h, F)]
        else:
            hit = starts
        delta = np.zeros(n + 1, np.int64)
        np.add.at(delta, hit, 1)
        np.add.at(delta, hit + L, -1)
        covered = np.cumsum(delta[:n]) > 0
        seg_a, seg_e, seg_doc = covered_runs_of(covered, tk.doc_offsets)
        per_doc = np.bincount(seg_doc, minlength=tk.n_docs).astype(np.int64)
        cols = [doc_id, pa.array(sites, pa.string()), pa.array(urls, pa.string()),
                pa.array(np.diff(tk.doc_offsets).astype(np.int64)),
                list_array(joined_tokens(voc, tk.tokens, seg_a, seg_e), per_doc),
                list_array(pa.array(seg_a - tk.doc_offsets[seg_doc]), per_doc)]
        names = ["doc_id", "site", "url", "n_tokens", "segments", "starts"]
        if written:
            where = np.flatnonzero(covered)
            doc_tok = np.bincount(seg_doc, weights=seg_e - seg_a, minlength=tk.n_docs).astype(np.int64)
            raw = text_slices(text, seg_doc, tk.span_start[seg_a], tk.span_end[seg_e - 1])
            cols += [list_array(raw, per_doc), list_array(pa.array(tk.span_start[where].astype(np.int32)), doc_tok),
                     list_array(pa.array(tk.span_end[where].astype(np.int32)), doc_tok)]
            names += ["raw", "cs", "ce"]
        yield pa.RecordBatch.from_arrays(cols, names=names)


def covered_runs_of(covered: np.ndarray, doc_offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The maximal runs of covered tokens inside each document: (first
    token, end, document) of each, in order."""
    n = covered.shape[0]
    before = np.zeros(n, bool)              # the previous token, in the same document, is covered
    after = np.zeros(n, bool)
    if n:
        before[1:] = covered[:-1]
        after[:-1] = covered[1:]
        firsts, lasts = doc_offsets[:-1], doc_offsets[1:] - 1
        before[firsts[firsts < n]] = False
        after[lasts[lasts >= 0]] = False
    seg_a = np.flatnonzero(covered & ~before)
    seg_e = np.flatnonzero(covered & ~after) + 1
    return seg_a, seg_e, np.searchsorted(doc_offsets, seg_a, side="right") - 1


def joined_tokens(vocab: pa.Array, tokens: np.ndarray, seg_a: np.ndarray, seg_e: np.ndarray) -> pa.Array:
    """Each run ``tokens[seg_a[i]:seg_e[i]]`` (ids into the strings
    ``vocab``) as its tokens joined by spaces."""
    from .kernels.filters import join_tokens
    if seg_a.shape[0] == 0:
        return pa.array([], pa.large_string())
    voc_off, voc_data = string_buffers(vocab)
    tok_bytes = np.zeros(tokens.shape[0] + 1, np.int64)
    np.cumsum(np.diff(voc_off)[tokens] + 1, out=tok_bytes[1:])
    total = int((tok_bytes[seg_e] - tok_bytes[seg_a] - 1).sum())
    out = np.empty(total, np.uint8)
    offsets = np.empty(seg_a.shape[0] + 1, np.int64)
    join_tokens(voc_data, voc_off, tokens, seg_a, seg_e, out, offsets)
    return pa.LargeStringArray.from_buffers(seg_a.shape[0], pa.py_buffer(offsets), pa.py_buffer(out))


def text_slices(text: pa.Array, doc: np.ndarray, char_a: np.ndarray, char_e: np.ndarray) -> pa.Array:
    """``text[doc[i]][char_a[i]:char_e[i]]`` (code points), in order by
    document then position, as written."""
    from .kernels.filters import char_bytes, gather_bytes
    if doc.shape[0] == 0:
        return pa.array([], pa.large_string())
    offs, data = string_buffers(text)
    m = doc.shape[0]
    query_doc = np.repeat(doc, 2)
    chars = np.empty(2 * m, np.int64)
    chars[0::2], chars[1::2] = char_a, char_e
    at = np.empty(2 * m, np.int64)
    char_bytes(data, offs, query_doc, chars, at)
    out = np.empty(int((at[1::2] - at[0::2]).sum()), np.uint8)
    offsets = np.empty(m + 1, np.int64)
    gather_bytes(data, at[0::2], at[1::2], out, offsets)
    return pa.LargeStringArray.from_buffers(m, pa.py_buffer(offsets), pa.py_buffer(out))


#: The first round's context (tokens after a seed's start); multiplied by
#: CONTEXT_GROWTH for each later round.
FIRST_CONTEXT = 64
CONTEXT_GROWTH = 8


# --------------------------------------------------------------------------
# the frequent-window filter (step 2): saturating byte counters per bucket of
# window hashes, summed over the partitions; a bucket that reached sigma
# passes.  A bucket's count bounds the df of every window in it (occurrences
# >= documents, and collisions only add), so every frequent L-gram passes:
# a superset, whose false positives only add text to the segments.

#: Buckets per counter chunk (the unit the partitions' counters are summed in).
CHUNK = 1 << 20


def filter_buckets(est_windows: int, max_bytes: int = 64 << 20) -> int:
    """Buckets for about ``est_windows`` windows: a power of two, at least
    four per window (rare L-grams then seldom share a bucket with a frequent
    one), between 2^20 and ``max_bytes`` (one byte each, per task; the
    driver holds one bit each)."""
    n = CHUNK
    while n < 4 * max(est_windows, 1) and n < max_bytes:
        n <<= 1
    return n


def count_chunks(counters: np.ndarray):
    """(chunk, counters) of the chunks of ``counters`` with a count (the map
    side's output)."""
    for c in range(counters.shape[0] // CHUNK):
        part = counters[c * CHUNK:(c + 1) * CHUNK]
        if part.any():
            yield c, part


def window_counters(batches, L: int, n_buckets: int) -> np.ndarray:
    """Step 2's map: the counters of a partition's documents' windows."""
    from .kernels.filters import count_buckets
    counters = np.zeros(n_buckets, np.uint8)
    for b in batches:
        _, text, _, _ = normalize_batch(b)
        tk = tokenize_text(text)
        if tk.tokens.shape[0] == 0:
            continue
        h, _ = window_hashes(token_hashes(tk.vocab)[tk.tokens], tk.doc_offsets, L)
        count_buckets(counters, h)
    return counters


def chunk_bits(chunks: list[np.ndarray], sigma: int) -> np.ndarray:
    """Step 2's reduce for one chunk: the partitions' counters summed, and
    the bits (uint64 words) of the buckets that reached ``sigma``."""
    from .kernels.bloomspan import merge_counters
    from .kernels.filters import threshold_bits
    total = np.zeros(CHUNK, np.uint8)
    for c in chunks:
        merge_counters(total, c)
    bits = np.zeros(CHUNK // 64, np.uint64)
    threshold_bits(total, min(sigma, 255), bits)
    return bits


def filter_has(bits: np.ndarray, h: np.ndarray) -> np.ndarray:
    """True where the window hash ``h`` passes the filter (never False for a
    frequent L-gram)."""
    from .kernels.filters import bits_have
    out = np.zeros(h.shape[0], np.uint8)
    if h.shape[0]:
        bits_have(bits, np.ascontiguousarray(h).view(np.uint64), out)
    return out.astype(bool)


# --------------------------------------------------------------------------
# the segments of a batch of documents (step 3's rows)

@dataclass
class SegmentTokens:
    """A batch's segments, tokenized: ``ids`` (token ids into ``vocab``, the
    segments concatenated), per segment its row in the batch (``doc``), its
    first token's place in its document (``first``) and its slice of ``ids``
    (``off``, len = segments + 1)."""
    ids: np.ndarray
    vocab: np.ndarray
    doc: np.ndarray
    first: np.ndarray
    off: np.ndarray
    data: np.ndarray          # the segments' UTF-8 bytes
    byte_start: np.ndarray    # each token's first byte in ``data``
    byte_end: np.ndarray      # and its end

    @property
    def length(self) -> np.ndarray:
        return np.diff(self.off)

    def texts(self, a: np.ndarray, b: np.ndarray) -> pa.Array:
        """The text of tokens ``[a[i], b[i])`` (indices into ``ids``, inside
        one segment, b > a) as written in the segments: a string array."""
        from .kernels.filters import gather_bytes
        a, b = np.asarray(a, np.int64), np.asarray(b, np.int64)
        lo, hi = self.byte_start[a], self.byte_end[b - 1]
        out = np.empty(int((hi - lo).sum()), np.uint8)
        offsets = np.empty(a.shape[0] + 1, np.int64)
        gather_bytes(self.data, lo, hi, out, offsets)
        return pa.LargeStringArray.from_buffers(a.shape[0], pa.py_buffer(offsets), pa.py_buffer(out)).cast(pa.string())


def segment_tokens(segments: pa.Array, starts: pa.Array) -> SegmentTokens:
    """Tokenize a batch's ``segments`` column (list of space-joined token
    strings per document) with its ``starts`` (each segment's first token's
    place in its document)."""
    segments = segments.combine_chunks() if isinstance(segments, pa.ChunkedArray) else segments
    starts = starts.combine_chunks() if isinstance(starts, pa.ChunkedArray) else starts
    per_doc = pc.list_value_length(segments).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    flat = segments.flatten()
    words = pc.split_pattern(flat, " ")
    seg_len = pc.list_value_length(words).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    tok = words.flatten()
    if len(tok):
        enc = pc.dictionary_encode(tok)
        ids = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        vocab = np.asarray(enc.dictionary.to_pylist(), dtype=object)
    else:
        ids, vocab = np.zeros(0, np.int64), np.zeros(0, dtype=object)
    off = np.zeros(seg_len.shape[0] + 1, np.int64)
    np.cumsum(seg_len, out=off[1:])
    # each token's bytes in the segments' buffer: a segment's tokens are
    # separated by one space each
    seg_byte, data = string_buffers(flat)
    tok_len = pc.binary_length(tok).to_numpy(zero_copy_only=False).astype(np.int64) if len(tok) else \
        np.zeros(0, np.int64)
    step = tok_len + 1
    run = np.cumsum(step) - step                       # bytes before the token, from the batch's start
    seg_first_tok = off[:-1]
    base = np.repeat(seg_byte[:-1] - (run[seg_first_tok] if len(tok) else 0), seg_len)
    byte_start = base + run
    return SegmentTokens(ids=ids, vocab=vocab, doc=np.repeat(np.arange(per_doc.shape[0]), per_doc),
                         first=starts.flatten().to_numpy(zero_copy_only=False).astype(np.int64), off=off,
                         data=data, byte_start=byte_start, byte_end=byte_start + tok_len)


def list_array(values: pa.Array, counts: np.ndarray) -> pa.Array:
    """``values`` cut into consecutive lists of ``counts`` elements."""
    offsets = np.zeros(counts.shape[0] + 1, np.int32 if counts.sum() < 2**31 else np.int64)
    np.cumsum(counts, out=offsets[1:])
    cls = pa.ListArray if offsets.dtype == np.int32 else pa.LargeListArray
    return cls.from_arrays(pa.array(offsets), values)


def _groups(keys: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Sort rows by ``keys`` (the first the primary one); returns (order,
    group id of each sorted row)."""
    n = keys[0].shape[0]
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.lexsort(keys[::-1])
    new = np.zeros(n, bool)
    new[0] = True
    for k in keys:
        s = k[order]
        new[1:] |= s[1:] != s[:-1]
    return order, np.cumsum(new) - 1


def group_windows(h: np.ndarray, ids: np.ndarray, ws: np.ndarray, L: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_groups` of the windows at ``ws`` (keys: the hash as int64,
    then the L token ids), by one sort on the hash: equal L-grams have equal
    hashes, so the hash's runs are the groups unless two L-grams share a
    hash (then the sort on every key)."""
    from .kernels.filters import window_groups
    key = h.view(np.int64)
    order = np.argsort(key, kind="stable")  # ties in input order, as lexsort's
    gid = np.empty(order.shape[0], np.int64)
    if window_groups(key, ids.astype(np.int64, copy=False), ws, order, L, gid):
        return order, gid
    return _groups([key] + [ids[ws + j] for j in range(L)])


# --------------------------------------------------------------------------
# phase A: the seeds, exactly

#: The rows phase A's map sends (one per distinct L-gram of a batch).
WINDOW_ROWS = ("h long, lgram string, doc_id array<long>, pos array<long>, uniform boolean, "
               "left string")
#: The rows phase A's reduce gives (one per occurrence of a frequent L-gram).
FREQUENT_ROWS = "doc_id long, pos long, h long, df long, seed boolean, g long"


def window_rows(batch: pa.RecordBatch, L: int, bits: np.ndarray) -> pa.RecordBatch:
    """Phase A's map: the windows of a batch's segments whose hash passes
    the filter, one row per distinct L-gram: its hash, text, documents and
    positions (a document may repeat), and whether every occurrence here has
    the same left token inside its segment (``uniform``, that token in
    ``left``)."""
    names = batch.schema.names
    doc_ids = batch.column(names.index("doc_id")).to_numpy(zero_copy_only=False).astype(np.int64)
    st = segment_tokens(batch.column(names.index("segments")), batch.column(names.index("starts")))
    h, ws = window_hashes(token_hashes(st.vocab.tolist())[st.ids] if st.ids.shape[0] else
                          np.zeros(0, np.uint64), st.off, L)
    if h.shape[0]:
        keep = filter_has(bits, h)
        h, ws = h[keep], ws[keep]
    if h.shape[0] == 0:
        return empty_window_rows()
    seg = np.searchsorted(st.off, ws, side="right") - 1
    pos = st.first[seg] + (ws - st.off[seg])
    left = np.where(ws > st.off[seg], st.ids[np.maximum(ws - 1, 0)], -1)
    order, gid = group_windows(h, st.ids, ws, L)
    n_groups = int(gid[-1]) + 1
    h, ws, pos, left = h[order], ws[order], pos[order], left[order]
    doc = doc_ids[st.doc[seg[order]]]
    first = np.flatnonzero(np.concatenate(([True], gid[1:] != gid[:-1])))
    counts = np.diff(np.append(first, gid.shape[0]))
    lo = np.minimum.reduceat(left, first)
    hi = np.maximum.reduceat(left, first)
    uniform = (lo == hi) & (lo >= 0)
    texts = st.texts(ws[first], ws[first] + L)
    left_text = np.where(uniform, st.vocab[np.maximum(lo, 0)] if st.vocab.shape[0] else None, None)
    assert len(texts) == n_groups
    return pa.RecordBatch.from_arrays(
        [pa.array(h[first].view(np.int64)), texts,
         list_array(pa.array(doc), counts), list_array(pa.array(pos), counts), pa.array(uniform),
         pa.array(left_text.tolist(), pa.string())],
        names=["h", "lgram", "doc_id", "pos", "uniform", "left"])


def empty_window_rows() -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([], pa.int64()), pa.array([], pa.string()), pa.array([], pa.list_(pa.int64())),
         pa.array([], pa.list_(pa.int64())), pa.array([], pa.bool_()), pa.array([], pa.string())],
        names=["h", "lgram", "doc_id", "pos", "uniform", "left"])


def frequent_rows(table: pa.Table | pa.RecordBatch, sigma: int) -> pa.RecordBatch:
    """Phase A's reduce, on every row of some hashes (all rows of a hash in
    one call): each occurrence of an L-gram found in >= sigma documents,
    with its df, whether it is a seed (not pruned by a uniform left
    token) and its key ``g`` (with ``h``, one pair per distinct L-gram)."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    table = table.combine_chunks()
    if table.num_rows == 0:
        return empty_frequent_rows()
    gram = pc.dictionary_encode(table.column("lgram")).combine_chunks().indices.to_numpy(
        zero_copy_only=False).astype(np.int64)
    n_gram = int(gram.max()) + 1
    docs_col = table.column("doc_id").combine_chunks()
    counts = pc.list_value_length(docs_col).to_numpy(zero_copy_only=False).astype(np.int64)
    docs = docs_col.flatten().to_numpy(zero_copy_only=False).astype(np.int64)
    pos = table.column("pos").combine_chunks().flatten().to_numpy(zero_copy_only=False).astype(np.int64)
    g = np.repeat(gram, counts)
    order, pair = _groups([g, docs])
    first = np.concatenate(([True], pair[1:] != pair[:-1])) if pair.shape[0] else np.zeros(0, bool)
    df = np.bincount(g[order][first], minlength=n_gram)
    # a hash's L-gram is pruned when every row saw one left token, the same
    left = pc.dictionary_encode(table.column("left")).combine_chunks().indices
    left = np.asarray(left.fill_null(-1).to_numpy(zero_copy_only=False), np.int64)
    left = np.where(table.column("uniform").to_numpy(zero_copy_only=False), left, -1)
    lo = np.full(n_gram, np.iinfo(np.int64).max)
    hi = np.full(n_gram, -2)
    np.minimum.at(lo, gram, left)
    np.maximum.at(hi, gram, left)
    pruned = (lo == hi) & (lo >= 0)
    hashes = np.zeros(n_gram, np.int64)
    hashes[gram] = table.column("h").to_numpy()
    # the L-gram's exact key with its hash: its rank among this call's
    # L-grams of that hash (every row of a hash comes to one call)
    by_hash = np.lexsort((np.arange(n_gram), hashes))
    lead = np.concatenate(([True], hashes[by_hash][1:] != hashes[by_hash][:-1]))
    rank = np.empty(n_gram, np.int64)
    rank[by_hash] = np.arange(n_gram) - np.maximum.accumulate(np.where(lead, np.arange(n_gram), 0))
    keep = df[g] >= sigma
    gk = g[keep]
    return pa.RecordBatch.from_arrays(
        [pa.array(docs[keep]), pa.array(pos[keep]), pa.array(hashes[gk]), pa.array(df[gk].astype(np.int64)),
         pa.array(~pruned[gk]), pa.array(rank[gk])], names=["doc_id", "pos", "h", "df", "seed", "g"])


def empty_frequent_rows() -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([], pa.int64()) for _ in range(4)] + [pa.array([], pa.bool_()), pa.array([], pa.int64())],
        names=["doc_id", "pos", "h", "df", "seed", "g"])


def covered_tokens(doc: np.ndarray, pos: np.ndarray, L: int) -> tuple[np.ndarray, np.ndarray]:
    """Covered tokens per document from its frequent L-gram starts (the union
    of [pos, pos + L)): (documents, covered)."""
    if doc.shape[0] == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.lexsort((pos, doc))
    doc, pos = doc[order], pos[order]
    nxt = np.empty_like(pos)
    nxt[:-1] = pos[1:]
    last = np.ones(doc.shape[0], bool)
    last[:-1] = doc[1:] != doc[:-1]
    step = np.where(last, L, np.minimum(nxt - pos, L))
    first = np.flatnonzero(np.concatenate(([True], doc[1:] != doc[:-1])))
    return doc[first], np.add.reduceat(step, first)


# --------------------------------------------------------------------------
# phase B: the seeds' contexts

#: Phase B's rows: one interval of a part's text in one document.
INTERVAL_ROWS = ("part long, doc_id long, site string, istart long, text string, truncated boolean, "
                 "seed_h array<long>, seed_pos array<long>")


def part_of(h: np.ndarray, parts: int) -> np.ndarray:
    """The part of each seed hash."""
    return (np.asarray(h).view(np.uint64) % np.uint64(parts)).astype(np.int64)


def interval_rows(batch: pa.RecordBatch, context: int, parts: int) -> pa.RecordBatch:
    """Phase B: a batch of documents with their segments and seed
    occurrences (``seeds``: list of struct h, pos) -> the merged intervals
    of each part (:data:`INTERVAL_ROWS`)."""
    names = batch.schema.names
    doc_ids = batch.column(names.index("doc_id")).to_numpy(zero_copy_only=False).astype(np.int64)
    sites = batch.column(names.index("site")).to_pylist()
    st = segment_tokens(batch.column(names.index("segments")), batch.column(names.index("starts")))
    seeds = batch.column(names.index("seeds"))
    per_doc = pc.list_value_length(seeds).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    flat = seeds.flatten()
    sh = flat.field("h").to_numpy(zero_copy_only=False).astype(np.int64)
    sp = flat.field("pos").to_numpy(zero_copy_only=False).astype(np.int64)
    if sh.shape[0] == 0:
        return empty_interval_rows()
    row = np.repeat(np.arange(per_doc.shape[0]), per_doc)
    part = part_of(sh, parts)
    # the segment holding each seed start
    big = np.int64(1) << np.int64(40)
    seg_key = st.doc * big + st.first
    seg = np.searchsorted(seg_key, row * big + sp, side="right") - 1
    s_first, s_end = st.first[seg], st.first[seg] + st.length[seg]
    if np.any(seg < 0) or np.any(st.doc[seg] != row) or np.any(sp + 1 > s_end):
        raise ValueError("a seed start outside its document's segments")
    lo = np.maximum(s_first, sp - 1)
    hi = np.minimum(s_end, sp + context)
    order = np.lexsort((lo, seg, part))
    part, seg, lo, hi, sh, sp = part[order], seg[order], lo[order], hi[order], sh[order], sp[order]
    # merge the overlapping intervals of one (part, segment)
    new_grp = np.concatenate(([True], (part[1:] != part[:-1]) | (seg[1:] != seg[:-1])))
    grp_id = np.cumsum(new_grp) - 1
    span = np.int64(1) << np.int64(32)  # positions in a document are below 2^32, groups below 2^31
    hi_run = np.maximum.accumulate(grp_id * span + hi) - grp_id * span
    new = new_grp.copy()
    new[1:] |= lo[1:] > hi_run[:-1]
    first = np.flatnonzero(new)
    iv = np.cumsum(new) - 1
    i_lo = lo[first]
    i_hi = np.maximum.reduceat(hi, first)
    i_seg = seg[first]
    counts = np.bincount(iv, minlength=first.shape[0])
    seg_end = st.first[i_seg] + st.length[i_seg]
    a = st.off[i_seg] + (i_lo - st.first[i_seg])
    b = st.off[i_seg] + (i_hi - st.first[i_seg])
    texts = st.texts(a, b)
    i_row = st.doc[i_seg]
    return pa.RecordBatch.from_arrays(
        [pa.array(part[first]), pa.array(doc_ids[i_row]), pa.array([sites[r] for r in i_row.tolist()], pa.string()),
         pa.array(i_lo), texts, pa.array(i_hi < seg_end),
         list_array(pa.array(sh), counts), list_array(pa.array(sp), counts)],
        names=["part", "doc_id", "site", "istart", "text", "truncated", "seed_h", "seed_pos"])


def empty_interval_rows() -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays(
        [pa.array([], pa.int64()), pa.array([], pa.int64()), pa.array([], pa.string()), pa.array([], pa.int64()),
         pa.array([], pa.string()), pa.array([], pa.bool_()), pa.array([], pa.list_(pa.int64())),
         pa.array([], pa.list_(pa.int64()))],
        names=["part", "doc_id", "site", "istart", "text", "truncated", "seed_h", "seed_pos"])


# --------------------------------------------------------------------------
# phase C: mining a part

#: Phase C's rows: a maximal phrase (kind 0: its text, figures, occurrences)
#: or an occurrence of a flagged seed, for the next round (kind 1).
PART_ROWS = ("kind int, phrase string, length int, df long, occurrences long, sites long, psi long, "
             "occ_doc array<long>, occ_pos array<long>, h long, doc_id long, pos long")


def mine_part(table: pa.Table | pa.RecordBatch, sigma: int, L: int, context: int,
              workers: int = 1) -> pa.RecordBatch:
    """Phase C on every interval of some parts (all rows of a part in one
    call): the maximal phrases whose seeds these are and whose answer is
    exact at this context, and the occurrences of the seeds flagged for the
    next round."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    out = []
    if table.num_rows:
        parts = table.column("part").to_numpy()
        for p in np.unique(parts).tolist():
            out.append(_mine_one_part(table.filter(pc.equal(table.column("part"), p)), sigma, L, context,
                                      workers))
    if not out:
        return empty_part_rows()
    if len(out) == 1:
        return out[0]
    merged = pa.Table.from_batches(out).combine_chunks()
    return merged.to_batches()[0] if merged.num_rows else empty_part_rows()


def _mine_one_part(table: pa.Table, sigma: int, L: int, context: int, workers: int) -> pa.RecordBatch:
    from .planner import mine_tokens
    table = table.sort_by([("doc_id", "ascending"), ("istart", "ascending")]).combine_chunks()
    n_rows = table.num_rows
    doc_id = table.column("doc_id").to_numpy().astype(np.int64)
    istart = table.column("istart").to_numpy().astype(np.int64)
    truncated = table.column("truncated").to_numpy(zero_copy_only=False).astype(bool)
    words = pc.split_pattern(table.column("text").combine_chunks(), " ")
    row_len = pc.list_value_length(words).to_numpy(zero_copy_only=False).astype(np.int64)
    enc = pc.dictionary_encode(words.flatten())
    ids = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    vocab = np.asarray(enc.dictionary.to_pylist(), dtype=object)
    V = vocab.shape[0]
    # pseudo-documents: a document's intervals, a separator of its own between two
    first_of_doc = np.concatenate(([True], doc_id[1:] != doc_id[:-1]))
    sep_before = ~first_of_doc
    n_sep = int(sep_before.sum())
    total = row_len + sep_before
    row_at = np.zeros(n_rows + 1, np.int64)
    np.cumsum(total, out=row_at[1:])
    tok_start = row_at[:-1] + sep_before                 # each interval's first token
    tokens = np.empty(int(row_at[-1]), np.int64)
    tokens[row_at[:-1][sep_before]] = V + np.arange(n_sep)
    within = np.full(tokens.shape[0], -1, np.int64)      # the token's place in its document
    inner = np.arange(ids.shape[0]) - np.repeat(np.cumsum(row_len) - row_len, row_len)
    at = np.repeat(tok_start, row_len) + inner
    tokens[at] = ids
    within[at] = np.repeat(istart, row_len) + inner
    pdoc = np.cumsum(first_of_doc) - 1                  # pseudo-document of each row
    n_docs = int(pdoc[-1]) + 1
    doc_tokens = np.bincount(pdoc, weights=total, minlength=n_docs).astype(np.int64)
    offsets = np.zeros(n_docs + 1, np.int64)
    np.cumsum(doc_tokens, out=offsets[1:])
    pdoc_ids = doc_id[first_of_doc]
    sites = table.column("site").to_pylist()
    pdoc_sites = [sites[i] for i in np.flatnonzero(first_of_doc).tolist()]
    res = mine_tokens(tokens.astype(np.int32), offsets, V + n_sep, sigma, L, algo="bloomspan", workers=workers)
    # the seeds' starts, and each start's seed (its exact L-gram)
    seed_pos = table.column("seed_pos").combine_chunks()
    seed_counts = pc.list_value_length(seed_pos).to_numpy(zero_copy_only=False).astype(np.int64)
    s_pos = seed_pos.flatten().to_numpy(zero_copy_only=False).astype(np.int64)
    s_h = table.column("seed_h").combine_chunks().flatten().to_numpy(zero_copy_only=False).astype(np.int64)
    s_row = np.repeat(np.arange(n_rows), seed_counts)
    start = tok_start[s_row] + (s_pos - istart[s_row])
    order, seed = _groups([tokens[start + j] for j in range(L)])
    seed_of = np.empty_like(seed)
    seed_of[order] = seed
    n_seeds = int(seed.max()) + 1 if seed.shape[0] else 0
    flagged = long_seeds(tokens, start, seed_of, n_seeds, tok_start[s_row] + row_len[s_row], truncated[s_row],
                         pdoc[s_row], sigma, context)
    is_start = np.full(tokens.shape[0], -1, np.int64)
    is_start[start] = seed_of
    # the maximal phrases of this round's unflagged seeds
    occ_node = np.asarray(res.occ_node, np.int64)
    occ_pos = np.asarray(res.occ_pos, np.int64)
    occ_doc = np.asarray(res.occ_doc, np.int64)
    node_max = np.asarray(res.node_max).astype(bool)
    rows_out = {k: [] for k in ("phrase", "length", "df", "occurrences", "sites", "psi")}
    occ_lists_doc, occ_lists_pos, occ_counts = [], [], []
    if occ_node.shape[0]:
        bounds = np.flatnonzero(np.concatenate(([True], occ_node[1:] != occ_node[:-1])))
        ends = np.append(bounds[1:], occ_node.shape[0])
        nodes = occ_node[bounds]
        seed_hit = np.maximum.reduceat(is_start[occ_pos], bounds)
        seed_low = np.minimum.reduceat(is_start[occ_pos], bounds)
        ok = node_max[nodes] & (seed_hit >= 0)
        if np.any(ok & (seed_low < 0)):
            raise AssertionError("a maximal phrase with occurrences outside its seed's starts")
        ok &= ~flagged[np.maximum(seed_hit, 0)]
        codes = pl.Series(pdoc_sites, dtype=pl.String).cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
        n_sites = int(codes.max()) + 1 if codes.shape[0] else 1
        site_counts = distinct_per_group(bounds.astype(np.int64), ends.astype(np.int64),
                                         codes[occ_doc], max(n_sites, 1))
        node_rep = np.asarray(res.node_rep, np.int64)
        node_len = np.asarray(res.node_len, np.int64)
        node_df = np.asarray(res.node_df, np.int64)
        for k in np.flatnonzero(ok).tolist():
            n = int(nodes[k])
            a, b = int(bounds[k]), int(ends[k])
            r, m = int(node_rep[n]), int(node_len[n])
            rows_out["phrase"].append(" ".join(vocab[tokens[r:r + m]].tolist()))
            rows_out["length"].append(m)
            rows_out["df"].append(int(node_df[n]))
            rows_out["occurrences"].append(b - a)
            rows_out["sites"].append(int(site_counts[k]))
            rows_out["psi"].append(m * int(node_df[n]))
            occ_lists_doc.append(pdoc_ids[occ_doc[a:b]])
            occ_lists_pos.append(within[occ_pos[a:b]])
            occ_counts.append(b - a)
    n_ph = len(rows_out["phrase"])
    redo = np.flatnonzero(flagged[seed_of])
    n = n_ph + redo.shape[0]
    kind = np.concatenate((np.zeros(n_ph, np.int32), np.ones(redo.shape[0], np.int32)))
    counts = np.concatenate((np.asarray(occ_counts, np.int64), np.zeros(redo.shape[0], np.int64)))
    odoc = np.concatenate(occ_lists_doc) if occ_lists_doc else np.zeros(0, np.int64)
    opos = np.concatenate(occ_lists_pos) if occ_lists_pos else np.zeros(0, np.int64)

    def col(values, kind_):
        return pa.array(list(values) + [None] * redo.shape[0], kind_)

    def tail(values):
        return pa.array([None] * n_ph + values.tolist(), pa.int64())
    log.debug("part: %d intervals, %d tokens, %d phrases, %d seeds flagged", n_rows, tokens.shape[0], n_ph,
              int(flagged.sum()))
    return pa.RecordBatch.from_arrays(
        [pa.array(kind), col(rows_out["phrase"], pa.string()), col(rows_out["length"], pa.int32()),
         col(rows_out["df"], pa.int64()), col(rows_out["occurrences"], pa.int64()),
         col(rows_out["sites"], pa.int64()), col(rows_out["psi"], pa.int64()),
         list_array(pa.array(odoc, pa.int64()), counts), list_array(pa.array(opos, pa.int64()), counts),
         tail(s_h[redo]), tail(doc_id[s_row[redo]]), tail(s_pos[redo])],
        names=["kind", "phrase", "length", "df", "occurrences", "sites", "psi", "occ_doc", "occ_pos",
               "h", "doc_id", "pos"])


def long_seeds(tokens, start, seed_of, n_seeds, end, truncated, doc, sigma: int, context: int) -> np.ndarray:
    """The truncation test: seeds with a frequent phrase of ``context``
    tokens starting at one of their starts, one of whose occurrences sits in
    a truncated interval.  The context-grams of the starts with room for one
    (``end`` - start >= context) are hashed (a polynomial hash from prefix
    sums, O(1) each) and counted in distinct documents per hash; a collision
    only merges counts, so it can flag a seed for nothing (a redo), never
    miss one.  A seed not flagged has no frequent phrase of ``context``
    tokens, hence none longer: its answer is exact at this context."""
    from .kernels.hashing import poly_power, prefix_hashes
    flagged = np.zeros(n_seeds, bool)
    room = np.flatnonzero(end - start >= context)
    if room.shape[0] < sigma:
        return flagged
    prefix = np.empty(tokens.shape[0] + 1, np.uint64)
    prefix_hashes(tokens, prefix)
    with np.errstate(over="ignore"):
        s = start[room]
        h = prefix[s + context] - prefix[s] * poly_power(context + 1)  # POLY ** context
    order = np.lexsort((doc[room], h))
    h_o, d_o = h[order], doc[room][order]
    new_h = np.concatenate(([True], h_o[1:] != h_o[:-1]))
    new_doc = new_h | np.concatenate(([True], d_o[1:] != d_o[:-1]))
    grp = np.cumsum(new_h) - 1
    df = np.bincount(grp[new_doc], minlength=int(grp[-1]) + 1)
    hot = (df >= sigma)[grp] & truncated[room][order]
    flagged[seed_of[room[order][hot]]] = True
    return flagged


def empty_part_rows() -> pa.RecordBatch:
    i64 = pa.int64()
    return pa.RecordBatch.from_arrays(
        [pa.array([], pa.int32()), pa.array([], pa.string()), pa.array([], pa.int32())]
        + [pa.array([], i64) for _ in range(4)] + [pa.array([], pa.list_(i64)), pa.array([], pa.list_(i64))]
        + [pa.array([], i64) for _ in range(3)],
        names=["kind", "phrase", "length", "df", "occurrences", "sites", "psi", "occ_doc", "occ_pos",
               "h", "doc_id", "pos"])
