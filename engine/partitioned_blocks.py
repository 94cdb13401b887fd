"""Phase D of the partitioned Spark job: the run's blocks (:mod:`engine.blocks`)
across executors, the driver holding nothing that grows with the corpus.

The functions here are the maps of that phase on Arrow batches;
:mod:`engine.spark` wires them with Spark's shuffles, and :func:`in_process`
runs the same maps with in-process groupings (the tests without Spark).

Decomposition (definition v3 of :mod:`engine.blocks`, without templates)
----------------------------------------------------------------------
Phase A of :mod:`engine.partitioned` gives every occurrence of every frequent
L-gram with its exact df and an exact key (its hash and its rank among the
L-grams of that hash: one pair per distinct L-gram).

D1. *Pieces* (shuffle the occurrences by document; :func:`piece_rows`).
    Rules 2-5 only read the windows of one document: its levels, junction
    strengths, cuts and joins are computed by the local engine's kernels
    (:func:`engine.kernels.blocks.levels` and ``pieces``) on each document's
    stretch from its first window to its last (documents side by side: a
    window never crosses into a neighbour, so no strength does).  Each piece
    comes with the keys of the windows wholly inside it (rule 6's keys).
D2. *Components* (rule 6).  In D1 each partition joins its own pieces that
    share a key (a union-find, :func:`engine.kernels.blocks.edge_roots`); each
    of its components is represented by its smallest piece, the *root*, which
    carries the component's distinct keys.  Across partitions a key's roots
    are linked to the key's smallest root (a star per key, one shuffle by
    key): two pieces sharing a key are then joined, in their partition or
    through their roots.  The union of the stars is
    reduced to one star per connected component by the alternating
    large-star / small-star rounds of Kiveris et al. (2014), "Connected
    Components in MapReduce and Beyond" (O(log^2 n) rounds at worst; each
    round a few shuffles of the edges, none on the driver), until every edge
    joins a leaf to its component's smallest id.
D3. *Numbering*: per component its covered tokens and first piece (the
    smallest (doc_id, start)); a distributed sort by (covered tokens
    descending, first piece) and each sorted partition's row counts (one
    number per partition on the driver) give block ids 0, 1, ... as
    :func:`engine.blocks.find_blocks` numbers them.
D4. *Spans* (join the pieces with their documents' segments by document;
    :func:`span_rows`): adjacent pieces of one block merge into spans, with
    a 128-bit key of their token text (:func:`text_keys`: each block's
    representative is its most frequent span text, ties the longest, then the
    first in (doc_id, start) order, grouped by key and length so that the JVM
    never sorts the texts; the one hash not verified), their characters and
    their text as written (fetched by document for the representatives,
    :func:`rep_rows`).
D5. *Phrase blocks* (phrase occurrences and spans by document;
    :func:`phrase_block_rows`): each maximal phrase's block is the block
    holding most tokens of all its occurrences (ties: the smaller id).

Exactness: D1 runs the local kernels on the same windows (a document's
windows are all its frequent L-gram occurrences, with their exact df), so
each document gets the local pieces; a piece's keys are exact L-gram keys,
so the components are the local blocks; D3-D5 compute the local engine's
figures with the same tie rules.  The oracle tests compare the files with
the local engine's and with tests/naive.py's literal definition.

Complexity: D1 linear in the windows of each document; D2 O(edges) per
round, O(log^2 pieces) rounds; D3 one sort of the components; D4 linear in
the covered tokens; D5 linear in the occurrences and spans of a document
(each occurrence meets the few spans it overlaps).
"""
from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .kernels import blocks as K
from .partitioned import list_array, part_of, segment_tokens

#: A partition's pieces are numbered from its index shifted by this many bits.
PID_BITS = 33

#: D1's rows: a piece of a document with the keys of the windows inside it.
PIECE_ROWS = "doc_id long, start long, end long, pid long, root long, key_h array<long>, key_g array<long>"
#: D4's rows: a span of one block in one document.
SPAN_ROWS = ("block long, doc_id long, site string, start long, end long, char_start int, char_end int, "
             "k1 long, k2 long, raw string")
#: The representatives' rows: a block's representative text as written.
REP_ROWS = "block long, text string"
#: D5's rows: the tokens of a phrase's occurrences inside a block (partial sums).
PHRASE_BLOCK_ROWS = "phrase string, block long, tokens long"

_NONE = np.zeros(0, np.int64)


def _empty(schema: str) -> pa.RecordBatch:
    kinds = {"long": pa.int64(), "int": pa.int32(), "string": pa.string(), "array<long>": pa.list_(pa.int64())}
    names, types = [], []
    for field in schema.split(", "):
        name, kind = field.split(" ", 1)
        names.append(name)
        types.append(kinds[kind])
    return pa.RecordBatch.from_arrays([pa.array([], t) for t in types], names=names)


def _table(batch) -> pa.Table:
    if isinstance(batch, pa.RecordBatch):
        batch = pa.Table.from_batches([batch])
    return batch.combine_chunks()


def piece_rows(table, L: int, first_pid: int = 0) -> pa.RecordBatch:
    """D1 on every frequent L-gram occurrence of some documents (all of a
    document's in one call; columns doc_id, pos, df, h, g): the documents'
    pieces, numbered ``pid`` from ``first_pid`` in (doc_id, start) order, and
    the first half of D2 among them: pieces sharing the key (h, g) of a
    window wholly inside them are joined (a union-find), ``root`` is the
    smallest pid of each such component, and only the root carries keys: its
    component's distinct keys (``key_h``, ``key_g``)."""
    table = _table(table)
    if table.num_rows == 0:
        return _empty(PIECE_ROWS)
    doc = table.column("doc_id").to_numpy().astype(np.int64)
    pos = table.column("pos").to_numpy().astype(np.int64)
    order = np.lexsort((pos, doc))
    doc, pos = doc[order], pos[order]
    df = table.column("df").to_numpy().astype(np.int64)[order]
    h = table.column("h").to_numpy().astype(np.int64)[order]
    g = table.column("g").to_numpy().astype(np.int64)[order]
    first = np.flatnonzero(np.concatenate(([True], doc[1:] != doc[:-1])))
    lo = pos[first]
    hi = np.maximum.reduceat(pos, first) + L
    off = np.zeros(first.shape[0] + 1, np.int64)
    np.cumsum(hi - lo, out=off[1:])
    dix = np.repeat(np.arange(first.shape[0]), np.diff(np.append(first, doc.shape[0])))
    ws = off[dix] + pos - lo[dix]  # the documents' stretches side by side
    m, b, minend = K.levels(int(off[-1]), L, ws, df, _NONE, _NONE, _NONE)
    ps, pe, _ = K.pieces(off, m, b, minend)
    del m, b, minend
    n_pieces = ps.shape[0]
    k = np.searchsorted(ps, ws, side="right") - 1
    inside = ws + L <= pe[k]
    kp, kh, kg = k[inside], h[inside], g[inside]
    # rule 6 inside these documents: each window's piece joined to the
    # smallest piece holding the same key
    o = np.lexsort((kp, kg, kh))
    kp, kh, kg = kp[o], kh[o], kg[o]
    new = np.ones(kp.shape[0], bool)
    new[1:] = (kh[1:] != kh[:-1]) | (kg[1:] != kg[:-1])
    smallest = kp[new][np.cumsum(new) - 1]
    root = K.edge_roots(n_pieces, kp, smallest)
    key_root = root[kp[new]]                   # each distinct key's component
    ko = np.argsort(key_root, kind="stable")
    counts = np.bincount(key_root, minlength=n_pieces).astype(np.int64)
    pdoc = np.searchsorted(off, ps, side="right") - 1
    shift = lo[pdoc] - off[pdoc]
    return pa.RecordBatch.from_arrays(
        [pa.array(doc[first][pdoc]), pa.array(ps + shift), pa.array(pe + shift),
         pa.array(first_pid + np.arange(n_pieces, dtype=np.int64)), pa.array(first_pid + root),
         list_array(pa.array(kh[new][ko]), counts), list_array(pa.array(kg[new][ko]), counts)],
        names=["doc_id", "start", "end", "pid", "root", "key_h", "key_g"])


def span_rows(batch) -> pa.RecordBatch:
    """D4 on documents' segment rows (doc_id, site, segments, starts, raw,
    cs, ce of step 3) each with its pieces (``pieces``: a list of structs
    start, end, block): the spans, adjacent pieces of one block merged, with
    their token text, characters and text as written."""
    table = _table(batch)
    if table.num_rows == 0:
        return _empty(SPAN_ROWS)
    st = segment_tokens(table.column("segments"), table.column("starts"))
    doc_ids = table.column("doc_id").to_numpy().astype(np.int64)
    sites = np.asarray(table.column("site").to_pylist(), dtype=object)
    pieces = table.column("pieces").combine_chunks()
    per_row = pc.list_value_length(pieces).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    flat = pieces.flatten()
    row = np.repeat(np.arange(table.num_rows), per_row)
    a = flat.field("start").to_numpy(zero_copy_only=False).astype(np.int64)
    e = flat.field("end").to_numpy(zero_copy_only=False).astype(np.int64)
    blk = flat.field("block").to_numpy(zero_copy_only=False).astype(np.int64)
    o = np.lexsort((a, row))
    row, a, e, blk = row[o], a[o], e[o], blk[o]
    # adjacent pieces of one block in one document: one span
    joins = np.zeros(row.shape[0], bool)
    joins[1:] = (row[1:] == row[:-1]) & (blk[1:] == blk[:-1]) & (a[1:] == e[:-1])
    lead = np.flatnonzero(~joins)
    ends = np.append(lead[1:], row.shape[0]) - 1
    row, a, e, blk = row[lead], a[lead], e[ends], blk[lead]
    # the segment holding each span (every covered token lies in one)
    big = np.int64(1) << 32
    seg_key = st.doc * big + st.first
    seg = np.searchsorted(seg_key, row * big + a, side="right") - 1
    ia = st.off[seg] + (a - st.first[seg])
    ib = ia + (e - a)
    if seg.shape[0] and ((seg < 0).any() or (st.doc[seg] != row).any() or (ib > st.off[seg + 1]).any()):
        raise AssertionError("a piece outside its document's segments")
    cs = table.column("cs").combine_chunks().flatten().to_numpy(zero_copy_only=False).astype(np.int64)
    ce = table.column("ce").combine_chunks().flatten().to_numpy(zero_copy_only=False).astype(np.int64)
    raw = table.column("raw").combine_chunks().flatten().to_pylist()
    c0, c1 = cs[ia], ce[ib - 1]
    seg_c = cs[st.off[seg]]
    written = [raw[s][x:y] for s, x, y in zip(seg.tolist(), (c0 - seg_c).tolist(), (c1 - seg_c).tolist())]
    k1, k2 = text_keys(st.texts(ia, ib))
    return pa.RecordBatch.from_arrays(
        [pa.array(blk), pa.array(doc_ids[row]), pa.array(sites[row].tolist(), pa.string()), pa.array(a),
         pa.array(e), pa.array(c0.astype(np.int32)), pa.array(c1.astype(np.int32)), pa.array(k1), pa.array(k2),
         pa.array(written, pa.string())],
        names=["block", "doc_id", "site", "start", "end", "char_start", "char_end", "k1", "k2", "raw"])


def text_keys(texts: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A 128-bit key (two int64) of each span's token text: spans are grouped
    by block, key and length, so that the JVM never sorts or aggregates the
    text itself (a block's spans can be hundreds of KB each).  Two different
    texts of one block and length share a key with probability about
    2^-128 per pair."""
    import hashlib
    digests = b"".join(hashlib.blake2b(t.encode("utf-8"), digest_size=16).digest() for t in texts.to_pylist())
    k = np.frombuffer(digests, np.int64).reshape(-1, 2) if digests else np.zeros((0, 2), np.int64)
    return k[:, 0].copy(), k[:, 1].copy()


def rep_rows(table) -> pa.RecordBatch:
    """The representatives' text on the spans of some documents (all of a
    document's in one call): rows doc_id, start, raw (a span) or doc_id,
    start, block (a block's representative span): per representative, its
    block and the span's text as written."""
    table = _table(table)
    if table.num_rows == 0:
        return _empty(REP_ROWS)
    frame = pl.from_arrow(table)
    reps = frame.filter(pl.col("block").is_not_null()).select("doc_id", "start", "block")
    spans = frame.filter(pl.col("block").is_null()).select("doc_id", "start", "raw")
    out = reps.join(spans, on=["doc_id", "start"], how="inner").select("block", pl.col("raw").alias("text"))
    if not out.height:
        return _empty(REP_ROWS)
    return out.to_arrow().cast(pa.schema([("block", pa.int64()), ("text", pa.string())])).combine_chunks() \
        .to_batches()[0]


def phrase_block_rows(table) -> pa.RecordBatch:
    """D5 on the spans and phrase occurrences of some documents (all of a
    document's in one call; columns doc_id, a, e (a token range), block
    (set for a span) and phrase (set for a phrase occurrence)): per phrase and block, the
    tokens of the phrase's occurrences here that lie in the block."""
    table = _table(table)
    if table.num_rows == 0:
        return _empty(PHRASE_BLOCK_ROWS)
    doc = table.column("doc_id").to_numpy().astype(np.int64)
    a = table.column("a").to_numpy().astype(np.int64)
    e = table.column("e").to_numpy().astype(np.int64)
    is_span = table.column("block").is_valid().to_numpy(zero_copy_only=False)
    _, rank = np.unique(doc, return_inverse=True)
    big = np.int64(1) << 32
    ka, ke = rank * big + a, rank * big + e
    sp = np.flatnonzero(is_span)
    sp = sp[np.argsort(ka[sp], kind="stable")]
    ss, se = ka[sp], ke[sp]
    sb = table.column("block").to_numpy(zero_copy_only=False)[sp].astype(np.int64)
    oc = np.flatnonzero(~is_span)
    lo = np.searchsorted(se, ka[oc], side="right")   # the first span ending after the occurrence's start
    hi = np.searchsorted(ss, ke[oc], side="left")    # past the last span starting before its end
    n = np.maximum(hi - lo, 0)
    which = np.repeat(np.arange(oc.shape[0]), n)
    at = np.repeat(lo - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
    tokens = np.minimum(se[at], ke[oc][which]) - np.maximum(ss[at], ka[oc][which])
    phrase = table.column("phrase").take(pa.array(oc[which]))
    out = (pl.DataFrame({"phrase": pl.from_arrow(phrase), "block": sb[at], "tokens": tokens})
           .filter(pl.col("tokens") > 0).group_by("phrase", "block").agg(pl.col("tokens").sum()))
    if not out.height:
        return _empty(PHRASE_BLOCK_ROWS)
    schema = pa.schema([("phrase", pa.string()), ("block", pa.int64()), ("tokens", pa.int64())])
    return out.to_arrow().cast(schema).combine_chunks().to_batches()[0]  # one chunk: every row


# --------------------------------------------------------------------------
# the same phase in one process (the tests' stand-in for Spark's shuffles)

def in_process(freq: pa.Table, seg: pa.Table, occurrences: pl.DataFrame, L: int, n_tokens: int, parts: int = 3):
    """Phase D with in-process groupings: ``freq`` phase A's rows, ``seg``
    step 3's rows, ``occurrences`` the maximal phrases' (phrase, doc_id,
    pos, length).  Returns (blocks.parquet, block_spans.parquet, each
    phrase's block_id as a dict)."""
    piece_tables = []
    for p in range(parts):
        t = freq.filter(pa.array(part_of(freq.column("doc_id").to_numpy(), parts) == p))
        piece_tables.append(pa.Table.from_batches([piece_rows(t, L, first_pid=p << PID_BITS)]))
    pieces = pl.from_arrow(pa.concat_tables(piece_tables)).sort("doc_id", "start")
    # D2 across the parts: each key's smallest root (its anchor) joins the
    # roots holding it; every piece joins its local component's root
    keyed = pieces.select("pid", "key_h", "key_g").explode(["key_h", "key_g"]).drop_nulls()
    anchor = keyed.group_by("key_h", "key_g").agg(pl.col("pid").min().alias("a"))
    edges = keyed.join(anchor, on=["key_h", "key_g"])
    pids = pieces["pid"].to_numpy()
    index = np.argsort(pids)

    def at(x):
        return index[np.searchsorted(pids, x, sorter=index)]
    u = np.concatenate([at(edges["pid"].to_numpy()), at(pids)])
    v = np.concatenate([at(edges["a"].to_numpy()), at(pieces["root"].to_numpy())])
    roots = pids[K.edge_roots(pieces.height, u, v)]
    pieces = pieces.with_columns(pl.Series("root", roots), (pl.col("end") - pl.col("start")).alias("len"))
    comp = (pieces.group_by("root", maintain_order=True)  # pieces by (doc_id, start): first() is the first
            .agg(pl.col("len").sum().alias("covered_tokens"), pl.col("doc_id").first().alias("fdoc"),
                 pl.col("start").first().alias("fstart"))
            .sort(["covered_tokens", "fdoc", "fstart"], descending=[True, False, False])
            .with_row_index("block"))
    pieces = pieces.join(comp.select("root", pl.col("block").cast(pl.Int64)), on="root")
    per_doc = pieces.group_by("doc_id").agg(pl.struct("start", "end", "block").alias("pieces"))
    joined = pl.from_arrow(seg).join(per_doc, on="doc_id").to_arrow()
    spans = pl.from_arrow(pa.Table.from_batches([span_rows(b) for b in joined.to_batches()]
                                                or [_empty(SPAN_ROWS)]))
    # D5: the phrases' blocks
    meet = pl.concat([
        spans.select("doc_id", pl.col("start").alias("a"), pl.col("end").alias("e"), "block",
                     pl.lit(None, pl.String).alias("phrase")),
        occurrences.select("doc_id", pl.col("pos").alias("a"), (pl.col("pos") + pl.col("length")).alias("e"),
                           pl.lit(None, pl.Int64).alias("block"), "phrase")]).to_arrow()
    part = part_of(meet.column("doc_id").to_numpy(), parts) if meet.num_rows else np.zeros(0, np.int64)
    pb = pl.concat([pl.from_arrow(pa.Table.from_batches([phrase_block_rows(meet.filter(pa.array(part == p)))]))
                    for p in range(parts)])
    best = (pb.group_by("phrase", "block").agg(pl.col("tokens").sum())
            .sort(["phrase", "tokens", "block"], descending=[False, True, False])
            .group_by("phrase", maintain_order=True).first())
    phrase_block = dict(zip(best["phrase"].to_list(), best["block"].to_list()))
    blocks = block_table(spans, comp.rename({"block": "block_id"}), best, n_tokens)
    return blocks, span_table(spans), phrase_block


def representatives(spans: pl.DataFrame) -> pl.DataFrame:
    """Each block's representative span (in process: block, text as written)."""
    groups = (spans.sort("doc_id", "start").group_by("block", "k1", "k2", maintain_order=True)
              .agg(pl.len().alias("count"), (pl.col("end") - pl.col("start")).first().alias("len"),
                   pl.col("doc_id").first().alias("fdoc"), pl.col("start").first().alias("fstart"),
                   pl.col("raw").first()))
    return (groups.sort(["block", "count", "len", "fdoc", "fstart"], descending=[False, True, True, False, False])
            .group_by("block", maintain_order=True).first()
            .select("block", pl.col("raw").alias("text")))


def block_table(spans: pl.DataFrame, comp: pl.DataFrame, phrase_block: pl.DataFrame, n_tokens: int):
    """blocks.parquet from the spans, the numbered components (block_id,
    covered_tokens) and the phrases' blocks (phrase, block)."""
    reps = representatives(spans)
    stats = spans.group_by("block").agg(pl.col("doc_id").n_unique().alias("documents"),
                                        pl.col("site").n_unique().alias("sites"))
    counts = phrase_block.group_by("block").agg(pl.len().alias("phrases"))
    out = (comp.select(pl.col("block_id").cast(pl.Int64), "covered_tokens")
           .join(reps.rename({"block": "block_id"}), on="block_id", how="left")
           .join(stats.rename({"block": "block_id"}), on="block_id", how="left")
           .join(counts.rename({"block": "block_id"}), on="block_id", how="left")
           .sort("block_id"))
    covered = out["covered_tokens"].to_numpy().astype(np.int64)
    share = covered / n_tokens if n_tokens else np.zeros(covered.shape[0])  # numpy's division, as the local files
    return out.select(pl.col("block_id").cast(pl.Int32), pl.col("text").cast(pl.String),
                      pl.col("phrases").fill_null(0).cast(pl.Int64), pl.col("documents").cast(pl.Int64),
                      pl.col("sites").cast(pl.Int64), pl.col("covered_tokens").cast(pl.Int64),
                      pl.Series("share", share, pl.Float64))


def span_table(spans: pl.DataFrame) -> pl.DataFrame:
    """block_spans.parquet from the spans."""
    return (spans.select(pl.col("block").cast(pl.Int32).alias("block_id"), "doc_id",
                         pl.col("start").cast(pl.Int32), pl.col("end").cast(pl.Int32), "char_start", "char_end")
            .sort("block_id", "doc_id", "start"))
