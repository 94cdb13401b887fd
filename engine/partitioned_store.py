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

Complexity: linear in each document's frequent L-gram and maximal phrase
occurrences (one sort of each), plus one step of Python per span of (2).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

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


def store_span_rows(table: pa.Table | pa.RecordBatch, L: int) -> pa.RecordBatch:
    """The covered spans of each document of ``table`` (rows: doc_id,
    segments, starts, cs, ce as step 3 writes them; ``lg`` its frequent
    L-gram occurrences (pos, h, g, df); ``mx`` its maximal phrases'
    occurrences (pos, length, key), null when none)."""
    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    cols = {name: table.column(name).to_pylist() for name in ("doc_id", "segments", "starts", "lg", "mx")}
    cs_all = table.column("cs").to_pylist()
    ce_all = table.column("ce").to_pylist()
    out = {k: [] for k in ("kind", "doc_id", "start", "end", "char_start", "char_end", "key", "h", "g",
                            "text", "df")}

    def emit(kind, doc, a, e, cs_, ce_, key, h, g, text, df):
        for k, v in zip(out, (kind, doc, a, e, cs_, ce_, key, h, g, text, df)):
            out[k].append(v)

    for r in range(table.num_rows):
        doc = cols["doc_id"][r]
        words = [s.split(" ") for s in cols["segments"][r]]
        seg_len = np.array([len(w) for w in words], np.int64)
        seg_off = np.concatenate(([0], np.cumsum(seg_len)))
        first = np.asarray(cols["starts"][r], np.int64)
        flat = [t for w in words for t in w]
        cs, ce = cs_all[r], ce_all[r]

        def at(pos):  # a document position inside a segment -> its index among the segment tokens
            k = int(np.searchsorted(first, pos, side="right")) - 1
            return int(seg_off[k] + pos - first[k])

        lg = cols["lg"][r] or []
        mx = cols["mx"][r] or []
        lg_pos = np.array([x["pos"] for x in lg], np.int64)
        order = np.argsort(lg_pos, kind="stable")
        lg_pos = lg_pos[order]
        if lg_pos.shape[0] == 0:
            continue
        lo = int(lg_pos[0])
        size = int(lg_pos[-1]) + L - lo
        covered = np.zeros(size + 1, np.int64)
        np.add.at(covered, lg_pos - lo, 1)
        np.add.at(covered, lg_pos - lo + L, -1)
        covered = np.cumsum(covered[:size]) > 0
        inside = np.zeros(size + 1, np.int64)
        for x in mx:
            a, e = int(x["pos"]), int(x["pos"]) + int(x["length"])
            i, j = at(a), at(e - 1)
            emit(0, doc, a, e, cs[i], ce[j], x["key"], None, None, None, None)
            inside[a - lo] += 1
            inside[e - lo] -= 1
        inside = np.cumsum(inside[:size]) > 0
        rest = np.flatnonzero(covered & ~inside) + lo
        for j in greedy_cover(rest, lg_pos, L).tolist():
            x = lg[int(order[j])]
            a = int(x["pos"])
            i = at(a)
            emit(1, doc, a, a + L, cs[i], ce[i + L - 1], None, x["h"], x["g"], " ".join(flat[i:i + L]), x["df"])
    types = [pa.int32(), pa.int64(), pa.int64(), pa.int64(), pa.int32(), pa.int32(), pa.string(), pa.int64(),
             pa.int64(), pa.string(), pa.int64()]
    return pa.RecordBatch.from_arrays([pa.array(out[k], t) for k, t in zip(out, types)], names=list(out))
