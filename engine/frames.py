"""The result frames of a run, built in one place: what the files hold
(phrases.parquet, documents.parquet, sites.parquet, templates.parquet,
template_occurrences.parquet, spans.parquet) and the store's rows.

Every engine (local, out of core, Spark) hands its :class:`~engine.result.MiningResult`
and the snapshot's metadata to these functions, so the columns, their types
and their order are the same whichever engine ran.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .constants import SLOT_TEXT
from .coverage import covered_runs, distinct_per_group
from .kernels.templates import SLOT
from .memory import gather


def node_blocks(blocks, doc_offsets, res) -> np.ndarray:
    """Each reported phrase's block (:mod:`engine.blocks`): the block holding
    most tokens of all its occurrences (ties: the smaller id); -1 for a
    phrase reported without occurrences."""
    n_nodes = res.node_rep.shape[0]
    if not res.occ_node.shape[0]:
        return np.full(n_nodes, -1, np.int64)
    doc = np.asarray(res.occ_doc, np.int64)
    start = np.asarray(res.occ_pos, np.int64) - np.asarray(doc_offsets, np.int64)[doc]
    end = start + np.asarray(res.node_len, np.int64)[np.asarray(res.occ_node, np.int64)]
    return blocks.block_of_groups(np.asarray(res.occ_node, np.int64), doc, start, end, n_nodes)


def with_block_ids(frame: pl.DataFrame, ids: np.ndarray) -> pl.DataFrame:
    """``frame`` with a ``block_id`` column (Int32; null where ``ids`` is -1)."""
    col = pl.Series("block_id", np.asarray(ids, np.int64), dtype=pl.Int64)
    return frame.with_columns(col).with_columns(
        pl.when(pl.col("block_id") >= 0).then(pl.col("block_id")).otherwise(None).cast(pl.Int32).alias("block_id"))


def block_char_ranges(blocks, doc_offsets, span_start, span_end):
    """Each block's representative span in characters of its document's
    text: (doc_index, char_start, char_end)."""
    doc_offsets = np.asarray(doc_offsets, np.int64)
    r_start = doc_offsets[blocks.rep_doc] + blocks.rep_start
    r_end = doc_offsets[blocks.rep_doc] + blocks.rep_end
    if not r_start.shape[0]:
        return blocks.rep_doc, np.zeros(0, np.int64), np.zeros(0, np.int64)
    return blocks.rep_doc, np.asarray(span_start)[r_start].astype(np.int64), \
        np.asarray(span_end)[r_end - 1].astype(np.int64)


def block_frames(blocks, doc_offsets, span_start, span_end, doc_ids, sites: list, n_tokens: int,
                 text: list, node_block: np.ndarray, node_max: np.ndarray):
    """The blocks of a run (:mod:`engine.blocks`) as files and store rows.

    ``text``: each block's representative span as written in its document
    (original casing and punctuation), cut at :func:`block_char_ranges`.  ``node_block`` / ``node_max``:
    each reported phrase's block and whether it is maximal (a block's
    ``phrases`` counts its maximal phrases).

    Returns
    -------
    blocks : block_id, text, phrases, documents, sites, covered_tokens, share
        (covered_tokens / the snapshot's tokens, so the shares add up to the
        coverage), by covered_tokens descending, then block_id
    spans : block_id, doc_id, start, end (tokens in the document, end
        exclusive), char_start, char_end; by block_id, doc_id, start
    store_spans : the store's run_block_spans rows (without run_id; by
        doc_index); the store's run_blocks rows are ``blocks``
    """
    doc_offsets = np.asarray(doc_offsets, np.int64)
    doc_ids = np.asarray(doc_ids, np.int64)
    ss, se = np.asarray(span_start), np.asarray(span_end)
    nb = blocks.n_blocks
    g_start = doc_offsets[blocks.piece_doc] + blocks.piece_start
    g_end = doc_offsets[blocks.piece_doc] + blocks.piece_end
    c_start = ss[g_start].astype(np.int32) if g_start.shape[0] else np.zeros(0, np.int32)
    c_end = se[g_end - 1].astype(np.int32) if g_start.shape[0] else np.zeros(0, np.int32)
    node_block = np.asarray(node_block, np.int64)
    counted = node_block[np.asarray(node_max, bool) & (node_block >= 0)]
    n_phrases = np.bincount(counted, minlength=nb).astype(np.int64) if nb else np.zeros(0, np.int64)
    codes: dict = {}
    site_code = np.array([codes.setdefault(x, len(codes)) for x in sites], np.int64)
    order = np.argsort(blocks.piece_block, kind="stable")
    bounds = np.searchsorted(blocks.piece_block[order], np.arange(nb + 1))
    n_sites = distinct_per_group(bounds[:-1].astype(np.int64), bounds[1:].astype(np.int64),
                                 site_code[blocks.piece_doc[order]], max(1, len(codes))) \
        if nb else np.zeros(0, np.int64)
    covered = np.asarray(blocks.covered_tokens, np.int64)
    table = pl.DataFrame({
        "block_id": np.arange(nb, dtype=np.int32),
        "text": pl.Series(text, dtype=pl.String),
        "phrases": n_phrases,
        "documents": np.asarray(blocks.documents, np.int64),
        "sites": np.asarray(n_sites, np.int64),
        "covered_tokens": covered,
        "share": covered / n_tokens if n_tokens else np.zeros(nb),
    }, schema={"block_id": pl.Int32, "text": pl.String, "phrases": pl.Int64, "documents": pl.Int64,
               "sites": pl.Int64, "covered_tokens": pl.Int64, "share": pl.Float64})
    store_spans = pl.DataFrame({
        "block_id": blocks.piece_block.astype(np.int32), "doc_index": blocks.piece_doc.astype(np.int32),
        "token_start": blocks.piece_start.astype(np.int32), "token_end": blocks.piece_end.astype(np.int32),
        "char_start": c_start, "char_end": c_end},
        schema={"block_id": pl.Int32, "doc_index": pl.Int32, "token_start": pl.Int32, "token_end": pl.Int32,
                "char_start": pl.Int32, "char_end": pl.Int32})
    spans = (store_spans.with_columns(pl.Series("doc_id", doc_ids[blocks.piece_doc], dtype=pl.Int64))
             .select("block_id", "doc_id", pl.col("token_start").alias("start"), pl.col("token_end").alias("end"),
                     "char_start", "char_end")
             .sort("block_id", "doc_id", "start"))
    return table, spans, store_spans


def phrase_frames(tokens, doc_offsets, vocab, doc_sites: pl.Series, res, node_block=None):
    """All reported phrases (run_phrases), the maximal ones (phrases.parquet)
    and their occurrences (run_occurrences); ``doc_sites`` is each
    document's site (the distinct sites of a phrase are counted over them);
    ``node_block`` each phrase's block (:func:`node_blocks`), a ``block_id``
    column of both frames (null where -1).  :func:`phrase_table` then
    :func:`phrase_blocks` (the runner builds the table beside the blocks)."""
    allp, occ = phrase_table(tokens, doc_offsets, vocab, doc_sites, res)
    allp, phrases = phrase_blocks(allp, node_block)
    return allp, phrases, occ


def phrase_table(tokens, doc_offsets, vocab, doc_sites: pl.Series, res):
    """All reported phrases (run_phrases, without block ids) and their
    occurrences (run_occurrences)."""
    site_index = doc_sites.cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
    n_sites = int(site_index.max()) + 1 if site_index.shape[0] else 0
    vocab_arr = np.asarray(vocab, dtype=object)
    n_nodes = res.node_rep.shape[0]
    texts = [" ".join(vocab_arr[np.asarray(tokens[r:r + m])])
             for r, m in zip(res.node_rep.tolist(), res.node_len.tolist())]
    # distinct sites over the occurrences of each maximal node
    sites = np.zeros(n_nodes, np.int64)
    if res.occ_node.shape[0]:
        bounds = np.flatnonzero(np.diff(res.occ_node)) + 1
        lo = np.concatenate(([0], bounds)).astype(np.int64)
        hi = np.concatenate((bounds, [res.occ_node.shape[0]])).astype(np.int64)
        occ_sites = site_index[res.occ_doc].astype(np.int64)
        sites[res.occ_node[lo]] = distinct_per_group(lo, hi, occ_sites, max(n_sites, 1))
    allp = pl.DataFrame({
        "phrase_id": np.arange(n_nodes, dtype=np.int32),
        "phrase": pl.Series(texts, dtype=pl.String),
        "length": res.node_len.astype(np.int32),
        "df": res.node_df.astype(np.int64),
        "occurrences": res.node_occ.astype(np.int64),
        "sites": sites,
        "psi": (res.node_len.astype(np.int64) * res.node_df.astype(np.int64)),
        "maximal": res.node_max.astype(bool),
        "first_pos": res.node_rep.astype(np.int64),
    })
    occ = pl.DataFrame({
        "phrase_id": res.occ_node.astype(np.int32),
        "doc_index": res.occ_doc.astype(np.int32),
        "token_pos": (res.occ_pos.astype(np.int64) - np.asarray(doc_offsets)[res.occ_doc]).astype(np.int32),
    })
    return allp, occ


def phrase_blocks(allp: pl.DataFrame, node_block=None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``allp`` with its phrases' blocks (``node_block``, a ``block_id``
    column, null where -1; none without ``node_block``), and the maximal
    phrases (phrases.parquet) in the files' order."""
    keep = ["phrase", "length", "df", "occurrences", "sites", "psi"]
    if node_block is not None:
        allp = with_block_ids(allp, node_block)
        keep.append("block_id")
    phrases = (
        allp.filter(pl.col("maximal"))
        .select(keep)
        .sort(["psi", "length", "phrase"], descending=[True, True, False])
    )
    return allp, phrases


def documents_frame(meta: pl.DataFrame, covered: np.ndarray) -> pl.DataFrame:
    """documents.parquet: doc_id, site, url, n_tokens, covered_tokens,
    contamination, ordered by doc_id."""
    n_tok = meta["n_tokens"].cast(pl.Int64)
    return (
        meta.select(
            pl.col("doc_id").cast(pl.Int64), pl.col("site"), pl.col("url"),
            n_tok.alias("n_tokens"),
        )
        .with_columns(pl.Series("covered_tokens", np.asarray(covered, np.int64)))
        .with_columns(
            pl.when(pl.col("n_tokens") > 0)
            .then(pl.col("covered_tokens") / pl.col("n_tokens"))
            .otherwise(0.0)
            .cast(pl.Float64)
            .alias("contamination"))
        .sort("doc_id")
    )


def sites_frame(documents: pl.DataFrame) -> pl.DataFrame:
    """sites.parquet: site, documents, tokens, covered_tokens, coverage,
    median_contamination, p90_contamination, ordered by site."""
    return (
        documents.group_by("site")
        .agg(
            pl.len().cast(pl.Int64).alias("documents"),
            pl.col("n_tokens").sum().cast(pl.Int64).alias("tokens"),
            pl.col("covered_tokens").sum().cast(pl.Int64).alias("covered_tokens"),
            pl.col("contamination").median().alias("median_contamination"),
            pl.col("contamination").quantile(0.9, "linear").alias("p90_contamination"),
        )
        .with_columns(
            pl.when(pl.col("tokens") > 0)
            .then(pl.col("covered_tokens") / pl.col("tokens"))
            .otherwise(0.0)
            .cast(pl.Float64)
            .alias("coverage"))
        .select("site", "documents", "tokens", "covered_tokens", "coverage",
                "median_contamination", "p90_contamination")
        .sort("site")
    )


def spans_frame(doc_offsets, span_start, span_end, rng_pos, rng_len, rng_node) -> pl.DataFrame:
    """Covered spans per document: doc_index, token_start, token_end (within
    the document), char_start, char_end (code points in the original text),
    phrase_id (the node explaining the span)."""
    doc_offsets = np.asarray(doc_offsets)
    pos = np.asarray(rng_pos, np.int64)
    ln = np.asarray(rng_len, np.int64)
    doc = np.searchsorted(doc_offsets, pos, side="right") - 1
    base = doc_offsets[doc] if doc.shape[0] else np.zeros(0, np.int64)
    return pl.DataFrame({
        "doc_index": doc.astype(np.int32),
        "token_start": (pos - base).astype(np.int32),
        "token_end": (pos + ln - base).astype(np.int32),
        # the span arrays are memory-mapped: read in blocks, pages given back
        "char_start": gather(span_start, pos).astype(np.int32) if pos.shape[0] else np.zeros(0, np.int32),
        "char_end": gather(span_end, pos + ln - 1).astype(np.int32) if pos.shape[0] else np.zeros(0, np.int32),
        "phrase_id": np.asarray(rng_node, np.int32),
    })


@dataclass
class TemplateFrames:
    templates: object
    occurrences: object
    spans: object
    covered_per_doc: np.ndarray
    store_templates: object
    store_occurrences: object


def _joined(ids: np.ndarray, offsets: np.ndarray, names):
    """Row i's tokens, ``ids[offsets[i]:offsets[i + 1]]``, joined by single
    spaces, by Arrow's kernels: ``names`` (an Arrow large_string array) is
    the text of each id, ``SLOT`` taking its last entry."""
    index = pa.array(np.where(ids == SLOT, len(names) - 1, ids).astype(np.int64))
    lists = pa.LargeListArray.from_arrays(pa.array(np.asarray(offsets, np.int64)), names.take(index))
    return pc.binary_join(lists, pa.scalar(" ", pa.large_string()))


def _names(vocab) -> tuple:
    """The vocabulary and ``*`` as Arrow arrays: as text, and escaped for a
    JSON string (without its quotes; only the entries with a quote, a
    backslash or a control character change)."""
    names = pa.array(list(vocab) + [SLOT_TEXT], pa.large_string())
    special = np.flatnonzero(pc.match_substring_regex(names, r'["\\\x00-\x1f]').to_numpy(zero_copy_only=False))
    if special.shape[0] == 0:
        return names, names
    text = names.to_pylist()
    for i in special.tolist():
        text[i] = json.dumps(text[i], ensure_ascii=False)[1:-1]
    return names, pa.array(text, pa.large_string())


def template_frames(found: list, tokens, doc_offsets, span_start, span_end, vocab: list[str],
                    doc_ids, sites, phrases, examples: int = 5):
    """The result frames of a ``--templates`` run.

    ``tokens`` are the snapshot's token ids (the fillers' text is read
    from them).  ``phrases``: the phrases' coverage, as the run's ranges
    ``(starts, ends)`` (global positions, by increasing start).

    Returns
    -------
    templates : template_id, template, df, occurrences, slots, constant_tokens,
        sites, fillers (per slot, its most frequent fillers as text)
    occurrences : template_id, doc_id, start, end (token offsets in the
        document, end exclusive)
    spans : doc_id, start, end, char_start, char_end, kind: the maximal runs
        of covered tokens, ``phrase`` where a phrase covers them, else
        ``template``
    covered_per_doc : int64 per document, its tokens covered by a phrase or
        a template occurrence
    store_templates, store_occurrences : the store's rows (run_templates,
        run_template_occurrences without run_id and max_slot)
    """
    doc_offsets = np.asarray(doc_offsets, np.int64)
    doc_ids = np.asarray(doc_ids, np.int64)
    # every occurrence at once: its template, document and offsets in it
    g_start = np.concatenate([t.starts for t in found] or [np.zeros(0, np.int64)]).astype(np.int64, copy=False)
    g_end = np.concatenate([t.ends for t in found] or [np.zeros(0, np.int64)]).astype(np.int64, copy=False)
    g_tid = np.repeat(np.arange(len(found), dtype=np.int32), [t.starts.shape[0] for t in found])
    g_doc = (np.searchsorted(doc_offsets, g_start, side="right") - 1).astype(np.int32)
    # offsets in the document (files and store share the arrays)
    d_start = (g_start - doc_offsets[g_doc]).astype(np.int32)
    d_end = (g_end - doc_offsets[g_doc]).astype(np.int32)
    # distinct sites per template: site codes counted over each template's
    # occurrences (they come grouped by template)
    codes: dict = {}
    site_code = np.array([codes.setdefault(x, len(codes)) for x in sites], np.int64)
    t_off = np.zeros(len(found) + 1, np.int64)
    np.cumsum([t.starts.shape[0] for t in found], out=t_off[1:])
    n_sites = distinct_per_group(t_off[:-1], t_off[1:], site_code[g_doc], max(1, len(codes)))
    occurrences = pl.DataFrame({
        "template_id": g_tid, "doc_id": doc_ids[g_doc],
        "start": d_start, "end": d_end},
        schema={"template_id": pl.Int32, "doc_id": pl.Int64, "start": pl.Int32, "end": pl.Int32},
    ).sort("template_id", "doc_id", "start", "end")
    names, escaped = _names(vocab)
    pat_len = np.array([t.ids.shape[0] for t in found], np.int64)
    pat_ids = np.concatenate([t.ids for t in found] or [np.zeros(0, np.int64)]).astype(np.int64)
    n_slot = np.bincount(np.repeat(np.arange(len(found)), pat_len)[pat_ids == SLOT], minlength=len(found))
    # every kept filler at once: its template, slot, rank, tokens and count
    rows = np.concatenate([t.filler_rows for t in found] or [np.zeros((0, 4), np.int64)])
    f_tid = np.repeat(np.arange(len(found), dtype=np.int64), [t.filler_rows.shape[0] for t in found])
    f_width = rows[:, 2]
    f_off = np.zeros(rows.shape[0] + 1, np.int64)
    np.cumsum(f_width, out=f_off[1:])
    f_ids = np.asarray(tokens)[np.repeat(rows[:, 1] - f_off[:-1], f_width) + np.arange(f_off[-1])] \
        if rows.shape[0] else np.zeros(0, np.int64)
    f_text = _joined(f_ids, f_off, names)
    f_json = f_text if escaped is names else _joined(f_ids, f_off, escaped)
    templates = pl.DataFrame({
        "template_id": np.arange(len(found), dtype=np.int32),
        "template": pl.from_arrow(_joined(pat_ids, np.concatenate([[0], np.cumsum(pat_len)]), names)),
        "df": np.array([t.df for t in found], np.int64),
        "occurrences": np.array([t.starts.shape[0] for t in found], np.int64),
        "slots": n_slot.astype(np.int32),
        "constant_tokens": (pat_len - n_slot).astype(np.int32),
        "sites": n_sites.astype(np.int64),
    }, schema={"template_id": pl.Int32, "template": pl.String, "df": pl.Int64, "occurrences": pl.Int64,
               "slots": pl.Int32, "constant_tokens": pl.Int32, "sites": pl.Int64})
    # per template, per slot: the first `examples` fillers as text (for the
    # files) and all the kept ones with their counts as JSON (for the store)
    first = np.ones(rows.shape[0], bool)
    if rows.shape[0]:
        first[1:] = (f_tid[1:] != f_tid[:-1]) | (rows[1:, 0] != rows[:-1, 0])
    start_of_slot = np.maximum.accumulate(np.where(first, np.arange(rows.shape[0]), 0)) \
        if rows.shape[0] else np.zeros(0, np.int64)
    fr = pl.DataFrame({"tid": f_tid.astype(np.int32), "slot": rows[:, 0].astype(np.int32),
                       "rank": (np.arange(rows.shape[0]) - start_of_slot).astype(np.int32),
                       "text": pl.from_arrow(f_text), "item": pl.from_arrow(f_json),
                       "n": rows[:, 3].astype(np.int64)},
                      schema={"tid": pl.Int32, "slot": pl.Int32, "rank": pl.Int32, "text": pl.String,
                              "item": pl.String, "n": pl.Int64})
    per_slot = (fr.with_columns(pl.concat_str([pl.lit('["'), pl.col("item"), pl.lit('", '),
                                               pl.col("n").cast(pl.String), pl.lit("]")]).alias("item"))
                .group_by("tid", "slot", maintain_order=True)
                .agg(pl.col("text").filter(pl.col("rank") < examples).alias("fillers"),
                     pl.concat_str([pl.lit("["), pl.col("item").str.join(", "), pl.lit("]")]).alias("json")))
    per_tpl = (per_slot.group_by("tid", maintain_order=True)
               .agg(pl.col("fillers"),
                    pl.concat_str([pl.lit("["), pl.col("json").str.join(", "), pl.lit("]")]).alias("json")))
    per_tpl = pl.DataFrame({"tid": np.arange(len(found), dtype=np.int32)}).join(
        per_tpl, on="tid", how="left", maintain_order="left")
    templates = templates.with_columns(
        per_tpl["fillers"].fill_null(pl.lit([], pl.List(pl.List(pl.String)))).cast(pl.List(pl.List(pl.String)))
        .alias("fillers"))
    store_json = per_tpl["json"].fill_null("[]")
    # the store's rows: occurrences by doc_index with character offsets, and
    # the filler counts per slot (the most frequent, as JSON)
    ss, se = np.asarray(span_start), np.asarray(span_end)
    store_occ = pl.DataFrame({
        "template_id": g_tid,
        "doc_index": g_doc,
        "token_start": d_start,
        "token_end": d_end,
        "char_start": ss[g_start].astype(np.int32) if g_start.shape[0] else np.zeros(0, np.int32),
        "char_end": se[g_end - 1].astype(np.int32) if g_start.shape[0] else np.zeros(0, np.int32),
    }).sort("template_id", "doc_index", "token_start", "token_end")
    store_tpl = templates.select("template_id", "template", "df", "occurrences", "slots", "constant_tokens",
                                 "sites").with_columns(store_json.alias("fillers"))
    # coverage: each occurrence covers its whole run, fillers included; the
    # runs of covered tokens of one kind, never across documents
    per_doc, starts, ends, kind = covered_runs(phrases[0], phrases[1], g_start, g_end, doc_offsets)
    d = np.searchsorted(doc_offsets, starts, side="right") - 1
    spans = pl.DataFrame({
        "doc_id": doc_ids[d] if starts.shape[0] else np.zeros(0, np.int64),
        "start": (starts - doc_offsets[d]).astype(np.int32) if starts.shape[0] else np.zeros(0, np.int32),
        "end": (ends - doc_offsets[d]).astype(np.int32) if starts.shape[0] else np.zeros(0, np.int32),
        "char_start": ss[starts].astype(np.int32) if starts.shape[0] else np.zeros(0, np.int32),
        "char_end": se[ends - 1].astype(np.int32) if starts.shape[0] else np.zeros(0, np.int32),
        "kind": np.where(kind == 1, "phrase", "template") if starts.shape[0] else np.zeros(0, str),
    }, schema={"doc_id": pl.Int64, "start": pl.Int32, "end": pl.Int32, "char_start": pl.Int32,
               "char_end": pl.Int32, "kind": pl.String}).sort("doc_id", "start")
    return TemplateFrames(templates, occurrences, spans, per_doc, store_tpl, store_occ)
