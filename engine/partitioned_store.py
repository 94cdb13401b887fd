"""The partitioned Spark job's run in a store: ``mine --engine spark
--partitioned --db STORE``.

The store keeps, beside the result files' rows, every occurrence of every
phrase it lists and *covered spans*: ranges of a document's covered tokens,
each explained by a phrase (the Document view highlights them and says why;
:meth:`engine.store.Store.run_coverage_mask` rebuilds the coverage mask from
them, for ``clean``).  The local engine's spans are the ranges where its
depth-first growth stopped, each explained by the node it stopped at, often
a non-maximal one.  The partitioned job never grows one tree over the corpus
(each part grows its own seeds' trees on pieces of text), so it explains the
covered tokens by a definition of its own, computed per document from what
its phases already hold (:func:`store_span_rows`, one map over the documents
with their segments, frequent L-gram occurrences and maximal phrase
occurrences):

1. every occurrence of a maximal phrase is a span, explained by that phrase;
2. a covered token outside every such occurrence (an occurrence of a
   frequent phrase none of whose frequent extensions reaches it) lies in an
   occurrence of a frequent L-gram (the definition of the mask).  A greedy
   pass from the left takes, for the first such token t, the occurrence of
   the frequent L-gram starting at the last frequent L-gram start <= t (of
   the ones holding t, the one reaching furthest), and goes on from its end.
   Those L-grams are stored as non-maximal phrases, with their exact df and
   every occurrence.

The union of the spans is the mask exactly: (1) adds covered tokens only
(a maximal phrase's L-grams are frequent), and (2) covers every covered
token (1) leaves.  Each span's tokens are its phrase's tokens, and its
characters are those of its first and last token (step 3 keeps each segment
token's characters).  What differs from a local run of the same snapshot:
the non-maximal phrases (L-grams here, the growth's stopping nodes there),
so the spans that explain the rest of the mask, and the phrase ids; the
maximal phrases, their occurrences, the per-document coverage, the mask and
the blocks are the same rows (``tests/test_spark.py``).

Complexity: per batch of documents, linear in their segment tokens and
their frequent L-gram and maximal phrase occurrences (one sort), plus one
step of Python per span of (2).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: The map's rows: a span (kind 0: a maximal phrase's occurrence, ``key``
#: the SHA-256 of its text; kind 1: a frequent L-gram's, (h, g) its key, with
#: its text and df).
STORE_SPAN_ROWS = ("kind int, doc_id long, start long, end long, char_start int, char_end int, key string, "
                   "h long, g long, text string, df long")


def greedy_cover(rest: np.ndarray, starts: np.ndarray, L: int) -> np.ndarray:
    """Indexes into the sorted ``starts`` (of L-token windows) of a cover of
    the sorted positions ``rest``, each of which some window holds: from the
    first position not yet covered, the window starting last at or before
    it (the one reaching furthest), then on from its end."""
    out = []
    i, n = 0, rest.shape[0]
    while i < n:
        t = int(rest[i])
        j = int(np.searchsorted(starts, t, side="right")) - 1
        if j < 0 or int(starts[j]) + L <= t:
            raise AssertionError(f"covered position {t} is in no frequent L-gram")
        out.append(j)
        i = int(np.searchsorted(rest, int(starts[j]) + L, side="left"))
    return np.asarray(out, np.int64)


def _flat(table: pa.Table, name: str) -> tuple[np.ndarray, pa.Array]:
    """The row of each element of a list column, and its elements (null lists: none)."""
    col = table.column(name).combine_chunks()
    counts = pc.fill_null(pc.list_value_length(col), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.repeat(np.arange(len(col), dtype=np.int64), counts), col.flatten()


def _ints(arr) -> np.ndarray:
    return np.asarray(arr.to_numpy(zero_copy_only=False), np.int64)


def store_span_rows(table: pa.Table | pa.RecordBatch, L: int) -> pa.RecordBatch:
    """The covered spans of each document of ``table`` (rows: doc_id,
    segments, starts, cs, ce as step 3 writes them; ``lg`` its frequent
    L-gram occurrences (pos, h, g, df); ``mx`` its maximal phrases'
    occurrences (pos, length, key), null when none).  All documents at once:
    each document's positions are moved to a range of their own on one line
    (its base, then a gap), so that masks, sorts and searches run once."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    table = table.combine_chunks()
    n = table.num_rows
    doc_id = _ints(table.column("doc_id"))
    seg_row, seg_text = _flat(table, "segments")
    _, seg_first = _flat(table, "starts")
    seg_first = _ints(seg_first)
    words = pc.split_pattern(seg_text, " ")
    seg_len = _ints(pc.list_value_length(words))
    flat_words = words.flatten()
    seg_tok = np.zeros(seg_len.shape[0] + 1, np.int64)
    np.cumsum(seg_len, out=seg_tok[1:])
    cs = _ints(_flat(table, "cs")[1])
    ce = _ints(_flat(table, "ce")[1])
    lg_row, lg = _flat(table, "lg")
    mx_row, mx = _flat(table, "mx")
    lg_pos, mx_pos = _ints(lg.field("pos")), _ints(mx.field("pos"))
    mx_len = _ints(mx.field("length"))
    # each document's positions on a line of its own: base + position
    extent = np.zeros(n, np.int64)
    for rows, ends in ((seg_row, seg_first + seg_len), (lg_row, lg_pos + L), (mx_row, mx_pos + mx_len)):
        if rows.shape[0]:
            np.maximum.at(extent, rows, ends)
    base = np.zeros(n + 1, np.int64)
    np.cumsum(extent + 1, out=base[1:])
    total = int(base[-1])
    seg_x = base[seg_row] + seg_first                    # sorted: rows, then segments in order

    def tok(x):  # a position on the line (inside a segment) -> its index among the segment tokens
        k = np.searchsorted(seg_x, x, side="right") - 1
        return seg_tok[k] + (x - seg_x[k])

    lg_x = base[lg_row] + lg_pos
    order = np.argsort(lg_x, kind="stable")
    lg_sorted = lg_x[order]
    mx_x = base[mx_row] + mx_pos

    def mask(starts, lengths):
        d = np.zeros(total + 1, np.int32)
        np.add.at(d, starts, 1)
        np.add.at(d, starts + lengths, -1)
        return np.cumsum(d[:total]) > 0

    rest = np.flatnonzero(mask(lg_x, np.full(lg_x.shape[0], L, np.int64)) & ~mask(mx_x, mx_len))
    pick = order[greedy_cover(rest, lg_sorted, L)]       # the L-gram occurrences of (2)
    px = lg_x[pick]
    first = tok(px)
    idx = (first[:, None] + np.arange(L)).ravel()
    texts = pc.binary_join(pa.ListArray.from_arrays(pa.array(np.arange(0, idx.shape[0] + 1, L, dtype=np.int32)),
                                                    pc.take(flat_words, pa.array(idx))), " ")
    m, k = mx_x.shape[0], pick.shape[0]
    mx_first, mx_last = tok(mx_x), tok(mx_x + mx_len - 1)
    nulls = lambda t, c: pa.nulls(c, t)  # noqa: E731
    cols = [
        pa.array(np.concatenate((np.zeros(m, np.int32), np.ones(k, np.int32)))),
        pa.array(np.concatenate((doc_id[mx_row], doc_id[lg_row[pick]]))),
        pa.array(np.concatenate((mx_pos, lg_pos[pick]))),
        pa.array(np.concatenate((mx_pos + mx_len, lg_pos[pick] + L))),
        pa.array(np.concatenate((cs[mx_first], cs[first])).astype(np.int32)),
        pa.array(np.concatenate((ce[mx_last], ce[first + L - 1])).astype(np.int32)),
        pa.concat_arrays([mx.field("key").cast(pa.string()), nulls(pa.string(), k)]),
        pa.concat_arrays([nulls(pa.int64(), m), pc.take(lg.field("h"), pa.array(pick)).cast(pa.int64())]),
        pa.concat_arrays([nulls(pa.int64(), m), pc.take(lg.field("g"), pa.array(pick)).cast(pa.int64())]),
        pa.concat_arrays([nulls(pa.string(), m), texts.cast(pa.string())]),
        pa.concat_arrays([nulls(pa.int64(), m), pc.take(lg.field("df"), pa.array(pick)).cast(pa.int64())]),
    ]
    return pa.RecordBatch.from_arrays(cols, names=["kind", "doc_id", "start", "end", "char_start", "char_end", "key",
                                                   "h", "g", "text", "df"])
