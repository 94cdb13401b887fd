"""The dashboard's read layer: every query and array read the pages need, by name.

The pages never write SQL nor open the store or its token arrays (a test
checks it): they call these functions through :mod:`engine.ui.data`, which
caches them.  Queries run on the store's one connection (a cursor per query,
``?`` parameters, polars frames back); each is bounded (LIMIT or aggregation,
never a whole table of a large snapshot); ``bench/app_queries.py`` measures
them on a store of 1M documents.  Reads of the memory-mapped token arrays
(character offsets of phrase occurrences, a document's tokens, the cut rule)
happen here too, so a page gets (document, char_start, char_end) rows and text.
"""
from __future__ import annotations

import json

import numpy as np
import polars as pl

from .clean import decision_counts, decision_cut, stoplist_frames
from .constants import ALL_SNAPSHOTS, DEFAULT_MAX_SLOT, DEFAULT_MIN_LEN
from .store import Store


def snapshot_info(store: Store, sid: str) -> dict:
    """The snapshot's row (documents, tokens, sites, vocabulary, source), or {}."""
    df = store.query("SELECT * FROM snapshots WHERE snapshot_id = ?", [sid])
    return df.row(0, named=True) if df.height else {}


def site_list(store: Store, sid: str) -> list[str]:
    return store.query("SELECT DISTINCT site FROM documents WHERE snapshot_id = ? ORDER BY site",
                       [sid])["site"].to_list()


def first_doc_id(store: Store, sid: str) -> int | None:
    value = store.scalar("SELECT min(doc_id) FROM documents WHERE snapshot_id = ?", [sid])
    return None if value is None else int(value)


def doc_index_of(store: Store, sid: str, doc_id: int) -> int | None:
    """The position of the document with this doc_id in its snapshot."""
    value = store.scalar("SELECT doc_index FROM documents WHERE snapshot_id = ? AND doc_id = ?", [sid, int(doc_id)])
    return None if value is None else int(value)


def search_documents(store: Store, sid: str, text: str, limit: int = 50) -> pl.DataFrame:
    """Documents whose URL or text contains ``text`` (case-insensitive)."""
    like = f"%{text}%"
    rel, params = store.text_relation(sid)
    return store.query(f"SELECT d.doc_index, d.doc_id, d.url FROM documents d LEFT JOIN {rel} t"
                       " ON t.doc_index = d.doc_index WHERE d.snapshot_id = ?"
                       " AND (d.url ILIKE ? OR t.text ILIKE ?) ORDER BY d.doc_id LIMIT ?",
                       params + [sid, like, like, limit])


def covered_tokens(store: Store, run_id: int, doc_index: int) -> int:
    value = store.scalar("SELECT covered_tokens FROM run_documents WHERE run_id = ? AND doc_index = ?",
                         [run_id, doc_index])
    return int(value or 0)


def cluster_sizes(store: Store, dedup_id: int, definition: str, limit: int = 500) -> pl.DataFrame:
    return store.query(
        "SELECT cluster_id, count(*) AS documents FROM dedup_clusters WHERE dedup_id = ? AND definition = ?"
        " GROUP BY cluster_id ORDER BY documents DESC, cluster_id LIMIT ?", [dedup_id, definition, limit])


def cluster_documents(store: Store, sid: str, dedup_id: int, cluster_id: int, limit: int = 500) -> pl.DataFrame:
    return store.query(
        "SELECT d.doc_index, d.doc_id, d.site, d.url, d.n_tokens FROM dedup_clusters c JOIN documents d"
        " ON d.snapshot_id = ? AND d.doc_id = c.doc_id WHERE c.dedup_id = ? AND c.cluster_id = ?"
        " ORDER BY d.doc_id LIMIT ?", [sid, dedup_id, cluster_id, limit])


def phrase_table(store: Store, run_id: int, search: str = "", site: str = "", min_sites: int = 1,
                 limit: int = 500, block: int | None = None) -> pl.DataFrame:
    """Maximal phrases of a run by psi, filtered by text, site, number of
    sites and block (its members only)."""
    sql = ["SELECT p.phrase_id, p.phrase, p.length, p.df, p.occurrences, p.sites, p.psi, p.block_id"
           " FROM run_phrases p WHERE p.run_id = ? AND p.maximal"]
    params: list = [run_id]
    if block is not None:
        sql.append("AND p.block_id = ?")
        params.append(int(block))
    if search:
        sql.append("AND p.phrase ILIKE ?")
        params.append(f"%{search.lower()}%")
    if min_sites > 1:
        sql.append("AND p.sites >= ?")
        params.append(min_sites)
    if site:
        sql.append("AND p.phrase_id IN (SELECT o.phrase_id FROM run_occurrences o JOIN documents d"
                   " ON d.snapshot_id = (SELECT snapshot_id FROM runs WHERE run_id = ?)"
                   " AND d.doc_index = o.doc_index WHERE o.run_id = ? AND d.site = ?)")
        params += [run_id, run_id, site]
    sql.append("ORDER BY p.psi DESC, p.length DESC, p.phrase LIMIT ?")
    params.append(limit)
    return store.query(" ".join(sql), params)

def phrase_row(store: Store, run_id: int, phrase_id: int) -> dict | None:
    """One phrase of a run by id (maximal or not).  ``first_pos`` is its first
    occurrence in the snapshot's token array; ``written`` is that occurrence
    as the original text reads (case, punctuation), at ``first_doc_index``,
    characters [``first_char_start``, ``first_char_end``)."""
    df = store.query(
        "SELECT p.phrase_id, p.phrase, p.length, p.df, p.occurrences, p.sites, p.psi, p.maximal, p.first_pos,"
        " r.snapshot_id FROM run_phrases p JOIN runs r ON r.run_id = p.run_id"
        " WHERE p.run_id = ? AND p.phrase_id = ?", [run_id, phrase_id])
    if not df.height:
        return None
    row = df.row(0, named=True)
    sid = row.pop("snapshot_id")
    docs, starts, ends = char_spans(store, sid, [int(row["first_pos"])], int(row["length"]))
    w = text_windows(store, sid, docs, starts, ends, 0)
    row.update(first_doc_index=int(docs[0]), first_char_start=int(starts[0]), first_char_end=int(ends[0]),
               written=(w["mid"][0] or "") if w.height else "")
    return row


def char_spans(store: Store, snapshot_id: str, token_starts, length: int) -> tuple[list, list, list]:
    """(doc_index, char_start, char_end) lists of phrase occurrences of
    ``length`` tokens, given by their positions in the snapshot's token array
    (character offsets in code points of the document's text)."""
    arrays = store.arrays(snapshot_id)
    a = np.asarray(token_starts, np.int64)
    if a.shape[0] == 0:
        return [], [], []
    docs = np.searchsorted(arrays.doc_offsets, a, side="right") - 1
    return (docs.tolist(), np.asarray(arrays.span_start[a]).tolist(),
            np.asarray(arrays.span_end[a + length - 1]).tolist())


def phrase_occurrences(store: Store, run_id: int, snapshot_id: str, phrase_id: int, limit: int = 30) -> pl.DataFrame:
    """The first ``limit`` occurrences of a phrase: doc_index, token_pos (in
    the document), doc_id, site, url, and the characters [char_start,
    char_end) of the document's text the occurrence spans."""
    occ = store.query(
        "SELECT o.doc_index, o.token_pos, d.doc_id, d.site, d.url, d.token_start, p.length FROM run_occurrences o"
        " JOIN documents d ON d.snapshot_id = ? AND d.doc_index = o.doc_index"
        " JOIN run_phrases p ON p.run_id = o.run_id AND p.phrase_id = o.phrase_id"
        " WHERE o.run_id = ? AND o.phrase_id = ? ORDER BY o.doc_index, o.token_pos LIMIT ?",
        [snapshot_id, run_id, phrase_id, limit])
    if not occ.height:
        return occ.drop("token_start", "length").with_columns(pl.lit(None, pl.Int64).alias("char_start"),
                                                              pl.lit(None, pl.Int64).alias("char_end"))
    starts = (occ["token_start"] + occ["token_pos"]).to_numpy()
    _, cs, ce = char_spans(store, snapshot_id, starts, int(occ["length"][0]))
    return occ.drop("token_start", "length").with_columns(pl.Series("char_start", cs, pl.Int64),
                                                          pl.Series("char_end", ce, pl.Int64))


def with_windows(store: Store, snapshot_id: str, occ: pl.DataFrame, width: int = 90) -> pl.DataFrame:
    """Occurrences (doc_index, char_start, char_end, ...) with the text around
    them: ``left``, ``mid`` (the occurrence) and ``right`` (see :func:`text_windows`)."""
    w = text_windows(store, snapshot_id, occ["doc_index"].to_list(), occ["char_start"].to_list(),
                     occ["char_end"].to_list(), width)
    return pl.concat([occ, w.select("left", "mid", "right")], how="horizontal") if occ.height else \
        occ.with_columns(*(pl.lit(None, pl.String).alias(c) for c in ("left", "mid", "right")))

def text_windows(store: Store, snapshot_id: str, doc_indexes, char_starts, char_ends,
                 width: int = 90) -> pl.DataFrame:
    """Keyword in context in one query: for each (document, [start, end)) in
    code points, the ``width`` characters before (``left``), the span
    (``mid``) and the ``width`` after (``right``), in the order given."""
    n = len(doc_indexes)
    if n == 0:
        return pl.DataFrame(schema={"i": pl.Int64, "left": pl.String, "mid": pl.String, "right": pl.String})
    rel, params = store.text_relation(snapshot_id)
    return store.query(
        "SELECT w.i, substring(d.text, greatest(w.cs - ?, 0) + 1, w.cs - greatest(w.cs - ?, 0)) AS left,"
        " substring(d.text, w.cs + 1, w.ce - w.cs) AS mid, substring(d.text, w.ce + 1, ?) AS right"
        " FROM (SELECT unnest(?::BIGINT[]) AS i, unnest(?::BIGINT[]) AS doc_index, unnest(?::BIGINT[]) AS cs,"
        f"       unnest(?::BIGINT[]) AS ce) w JOIN {rel} d ON d.doc_index = w.doc_index ORDER BY w.i",
        [width, width, width, list(range(n)), [int(x) for x in doc_indexes], [int(x) for x in char_starts],
         [int(x) for x in char_ends]] + params)

def phrase_sites(store: Store, run_id: int, snapshot_id: str, phrase_id: int) -> pl.DataFrame:
    return store.query(
        "SELECT d.site, count(DISTINCT o.doc_index) AS documents, count(*) AS occurrences"
        " FROM run_occurrences o JOIN documents d ON d.snapshot_id = ? AND d.doc_index = o.doc_index"
        " WHERE o.run_id = ? AND o.phrase_id = ? GROUP BY d.site ORDER BY documents DESC, d.site",
        [snapshot_id, run_id, phrase_id])

def site_ranking(store: Store, run_id: int, snapshot_id: str) -> pl.DataFrame:
    """Per site: documents, tokens, covered tokens, coverage, median and p90 contamination."""
    return store.query(
        "WITH dc AS (SELECT d.site, d.n_tokens, r.covered_tokens,"
        "  CASE WHEN d.n_tokens > 0 THEN r.covered_tokens / d.n_tokens ELSE 0.0 END AS contamination"
        "  FROM run_documents r JOIN documents d ON d.snapshot_id = ? AND d.doc_index = r.doc_index"
        "  WHERE r.run_id = ?)"
        " SELECT site, count(*) AS documents, sum(n_tokens) AS tokens, sum(covered_tokens) AS covered_tokens,"
        "  CASE WHEN sum(n_tokens) > 0 THEN sum(covered_tokens) / sum(n_tokens) ELSE 0.0 END AS coverage,"
        "  quantile_cont(contamination, 0.5) AS median_contamination,"
        "  quantile_cont(contamination, 0.9) AS p90_contamination"
        " FROM dc GROUP BY site ORDER BY covered_tokens DESC, site", [snapshot_id, run_id])

def site_top_blocks(store: Store, run_id: int, snapshot_id: str, k: int = 3) -> pl.DataFrame:
    """Each site's ``k`` biggest blocks there (by the tokens they cover in the
    site's documents): site, top_blocks (their texts' starts, ' | ' apart).
    A run mined before blocks existed gives its phrases by Ψ instead."""
    if not store.query("SELECT 1 FROM run_blocks WHERE run_id = ? LIMIT 1", [run_id]).height:
        return site_top_phrases(store, run_id, snapshot_id, k).rename({"top_phrases": "top_blocks"})
    return store.query(
        "WITH bs AS (SELECT d.site, s.block_id, sum(s.token_end - s.token_start) AS covered"
        "  FROM run_block_spans s JOIN documents d ON d.snapshot_id = ? AND d.doc_index = s.doc_index"
        "  WHERE s.run_id = ? GROUP BY d.site, s.block_id),"
        " ranked AS (SELECT bs.site, b.text, row_number() OVER (PARTITION BY bs.site"
        "  ORDER BY bs.covered DESC, bs.block_id) AS k FROM bs JOIN run_blocks b ON b.run_id = ?"
        "  AND b.block_id = bs.block_id)"
        " SELECT site, string_agg(left(regexp_replace(text, '\\s+', ' ', 'g'), 60), ' | ' ORDER BY k) AS top_blocks"
        " FROM ranked WHERE k <= ? GROUP BY site", [snapshot_id, run_id, run_id, k])


def site_top_phrases(store: Store, run_id: int, snapshot_id: str, k: int = 3) -> pl.DataFrame:
    return store.query(
        "WITH ps AS (SELECT d.site, p.phrase, p.psi,"
        "  row_number() OVER (PARTITION BY d.site ORDER BY p.psi DESC, p.phrase) AS k"
        "  FROM (SELECT DISTINCT o.phrase_id, o.doc_index FROM run_occurrences o WHERE o.run_id = ?) o"
        "  JOIN documents d ON d.snapshot_id = ? AND d.doc_index = o.doc_index"
        "  JOIN run_phrases p ON p.run_id = ? AND p.phrase_id = o.phrase_id"
        "  GROUP BY d.site, p.phrase, p.psi)"
        " SELECT site, string_agg(left(phrase, 60), ' | ' ORDER BY k) AS top_phrases FROM ps"
        " WHERE k <= ? GROUP BY site", [run_id, snapshot_id, run_id, k])


def contamination_histogram(store: Store, run_id: int, snapshot_id: str, sites: tuple = (),
                            bins: int = 20) -> pl.DataFrame:
    """Documents per contamination bin, binned in SQL, per site (or the
    whole corpus when ``sites`` is empty)."""
    site_sql = "d.site" if sites else "'(all sites)'"
    where = f" AND d.site IN ({', '.join('?' * len(sites))})" if sites else ""
    return store.query(
        f"SELECT {site_sql} AS site, least(floor(CASE WHEN d.n_tokens > 0 THEN r.covered_tokens / d.n_tokens"
        f"  ELSE 0 END * {int(bins)}), {int(bins) - 1})::INTEGER AS bin, count(*) AS documents"
        " FROM run_documents r JOIN documents d ON d.snapshot_id = ? AND d.doc_index = r.doc_index"
        f" WHERE r.run_id = ?{where} GROUP BY ALL ORDER BY site, bin", [snapshot_id, run_id, *sites])

def documents_in_bin(store: Store, run_id: int, snapshot_id: str, site: str, b: int, bins: int = 20,
                     limit: int = 200) -> pl.DataFrame:
    """The documents of one histogram bar (site may be '(all sites)')."""
    where = "" if site == "(all sites)" else " AND d.site = ?"
    params = [snapshot_id, run_id] + ([] if site == "(all sites)" else [site]) + [b, limit]
    return store.query(
        "SELECT d.doc_index, d.doc_id, d.site, d.url, d.n_tokens, r.covered_tokens,"
        " CASE WHEN d.n_tokens > 0 THEN r.covered_tokens / d.n_tokens ELSE 0.0 END AS contamination"
        " FROM run_documents r JOIN documents d ON d.snapshot_id = ? AND d.doc_index = r.doc_index"
        f" WHERE r.run_id = ?{where} AND least(floor(CASE WHEN d.n_tokens > 0 THEN r.covered_tokens / d.n_tokens"
        f"  ELSE 0 END * {int(bins)}), {int(bins) - 1})::INTEGER = ? ORDER BY contamination DESC, d.doc_id LIMIT ?",
        params)

#: Why a span is highlighted: its phrase's (or template's) sites, and its block's
#: id, share of the index, documents and sites (NULL for a run mined before blocks).
#: Why a span is highlighted: its phrase's or template's sites (maximal
#: phrases and templates; a phrase inside a longer one has none stored), and
#: the block holding the span's first token (blocks partition the covered
#: tokens, so every covered span has one, whatever block its phrase belongs to).
_WHY = (", s.sites, bs.block_id, b.share AS block_share, b.documents AS block_documents,"
        " b.sites AS block_sites")
_WHY_BLOCK = (" LEFT JOIN run_block_spans bs ON bs.run_id = s.run_id AND bs.doc_index = s.doc_index"
              " AND bs.token_start <= s.token_start AND s.token_start < bs.token_end"
              " LEFT JOIN run_blocks b ON b.run_id = bs.run_id AND b.block_id = bs.block_id")


def document_spans(store: Store, run_id: int, doc_index: int) -> pl.DataFrame:
    """The covered spans of one document, each with its phrase, df and why it
    is highlighted (:data:`_WHY`)."""
    return store.query(
        "SELECT s.* EXCLUDE (sites)" + _WHY + " FROM (SELECT s.run_id, s.doc_index, s.char_start, s.char_end,"
        "  s.token_start, s.token_end, p.phrase, p.df, CASE WHEN p.maximal THEN p.sites END AS sites"
        "  FROM run_spans s JOIN run_phrases p ON p.run_id = s.run_id AND p.phrase_id = s.phrase_id"
        "  WHERE s.run_id = ? AND s.doc_index = ?) s" + _WHY_BLOCK + " ORDER BY s.char_start",
        [run_id, doc_index])


def compare_runs(store: Store, run_a: int, run_b: int, snapshot_id: str) -> dict:
    """Two runs of one snapshot: maximal phrases only in A, only in B (by text,
    with length and df), how many in both, and coverage by site side by side."""
    only = ("SELECT p.phrase, p.length, p.df FROM run_phrases p WHERE p.run_id = ? AND p.maximal AND p.phrase NOT IN"
            " (SELECT phrase FROM run_phrases WHERE run_id = ? AND maximal) ORDER BY p.psi DESC, p.phrase")
    both = store.scalar(
        "SELECT count(*) FROM run_phrases a JOIN run_phrases b ON a.phrase = b.phrase"
        " WHERE a.run_id = ? AND b.run_id = ? AND a.maximal AND b.maximal", [run_a, run_b])
    ra = site_ranking(store, run_a, snapshot_id).select("site", pl.col("coverage").alias(f"coverage_{run_a}"))
    rb = site_ranking(store, run_b, snapshot_id).select("site", pl.col("coverage").alias(f"coverage_{run_b}"))
    return {"only_a": store.query(only, [run_a, run_b]), "only_b": store.query(only, [run_b, run_a]),
            "both": int(both or 0), "sites": ra.join(rb, on="site", how="full", coalesce=True).sort("site")}


# -- blocks: the repeated regions of a run (engine.blocks) --------------------
def block_table(store: Store, run_id: int, snapshot_id: str, site: str = "", limit: int = 500) -> pl.DataFrame:
    """The blocks of a run by the tokens they cover, each block once (a
    block's tokens are counted once, however many of its phrases overlap).
    With ``site``: the blocks in that site's documents, ranked by the tokens
    they cover there (``share``: of the site's tokens)."""
    if not site:
        return store.query(
            "SELECT block_id, text, phrases, documents, sites, covered_tokens, share FROM run_blocks"
            " WHERE run_id = ? ORDER BY covered_tokens DESC, block_id LIMIT ?", [run_id, limit])
    return store.query(
        "WITH here AS (SELECT s.block_id, count(DISTINCT s.doc_index) AS documents,"
        "  sum(s.token_end - s.token_start) AS covered_tokens FROM run_block_spans s JOIN documents d"
        "  ON d.snapshot_id = ? AND d.doc_index = s.doc_index WHERE s.run_id = ? AND d.site = ? GROUP BY s.block_id),"
        " total AS (SELECT sum(n_tokens) AS n FROM documents WHERE snapshot_id = ? AND site = ?)"
        " SELECT b.block_id, b.text, b.phrases, h.documents, b.sites, h.covered_tokens,"
        "  h.covered_tokens / greatest(total.n, 1) AS share FROM here h, total"
        " JOIN run_blocks b ON b.run_id = ? AND b.block_id = h.block_id"
        " ORDER BY h.covered_tokens DESC, b.block_id LIMIT ?",
        [snapshot_id, run_id, site, snapshot_id, site, run_id, limit])


def block_row(store: Store, run_id: int, block_id: int) -> dict | None:
    df = store.query("SELECT block_id, text, phrases, documents, sites, covered_tokens, share FROM run_blocks"
                     " WHERE run_id = ? AND block_id = ?", [run_id, block_id])
    return df.row(0, named=True) if df.height else None


def block_members(store: Store, run_id: int, block_id: int) -> pl.DataFrame:
    """The maximal phrases and templates whose block it is (what a decision
    on the block marks): kind, text, length, df, sites, psi.  A block that no
    phrase or template calls its own (each of those lies mostly in another
    block) has as members those with an occurrence starting inside it, so
    every block can be decided."""
    mine = store.query(
        "SELECT 'phrase' AS kind, phrase AS text, length, df, sites, psi FROM run_phrases"
        " WHERE run_id = ? AND block_id = ? AND maximal"
        " UNION ALL SELECT 'template', template, constant_tokens + slots, df, sites, NULL FROM run_templates"
        " WHERE run_id = ? AND block_id = ? ORDER BY kind, df DESC, text", [run_id, block_id, run_id, block_id])
    if mine.height:
        return mine
    return store.query(
        "WITH s AS (SELECT doc_index, token_start, token_end FROM run_block_spans WHERE run_id = ? AND block_id = ?)"
        " SELECT 'phrase' AS kind, p.phrase AS text, p.length, p.df, p.sites, p.psi FROM run_phrases p"
        " WHERE p.run_id = ? AND p.maximal AND p.phrase_id IN (SELECT o.phrase_id FROM run_occurrences o JOIN s"
        "  ON o.doc_index = s.doc_index AND o.token_pos >= s.token_start AND o.token_pos < s.token_end"
        "  WHERE o.run_id = ?)"
        " UNION ALL SELECT 'template', t.template, t.constant_tokens + t.slots, t.df, t.sites, NULL FROM run_templates t"
        " WHERE t.run_id = ? AND t.template_id IN (SELECT o.template_id FROM run_template_occurrences o JOIN s"
        "  ON o.doc_index = s.doc_index AND o.token_start >= s.token_start AND o.token_start < s.token_end"
        "  WHERE o.run_id = ?) ORDER BY kind, df DESC, text",
        [run_id, block_id, run_id, run_id, run_id, run_id])


def block_member_texts(store: Store, run_id: int, block_ids) -> list[str]:
    """The texts (phrases and templates) of several blocks' members
    (:func:`block_members`): what one decision on those blocks marks."""
    texts = set()
    for b in block_ids:
        texts.update(block_members(store, run_id, int(b))["text"].to_list())
    return sorted(texts)


def block_sites(store: Store, run_id: int, snapshot_id: str, block_id: int) -> pl.DataFrame:
    return store.query(
        "SELECT d.site, count(DISTINCT s.doc_index) AS documents, sum(s.token_end - s.token_start) AS covered_tokens"
        " FROM run_block_spans s JOIN documents d ON d.snapshot_id = ? AND d.doc_index = s.doc_index"
        " WHERE s.run_id = ? AND s.block_id = ? GROUP BY d.site ORDER BY covered_tokens DESC, d.site",
        [snapshot_id, run_id, block_id])


def block_documents(store: Store, run_id: int, snapshot_id: str, block_id: int, limit: int = 30) -> pl.DataFrame:
    """The documents holding the block (most covered first): doc_id, site, url, covered_tokens."""
    return store.query(
        "SELECT d.doc_id, d.site, d.url, sum(s.token_end - s.token_start) AS covered_tokens"
        " FROM run_block_spans s JOIN documents d ON d.snapshot_id = ? AND d.doc_index = s.doc_index"
        " WHERE s.run_id = ? AND s.block_id = ? GROUP BY d.doc_id, d.site, d.url"
        " ORDER BY covered_tokens DESC, d.doc_id LIMIT ?", [snapshot_id, run_id, block_id, limit])


def block_decisions(store: Store, run_id: int, snapshot_id: str, block_ids) -> dict[int, str]:
    """block -> the decision in force on all its members (noise, keep,
    unsure), "mixed" when they differ or only some are decided; undecided
    blocks are left out."""
    rows = store.query(
        "WITH m AS (SELECT block_id, phrase AS text FROM run_phrases WHERE run_id = ? AND maximal"
        "   AND list_contains(?, block_id)"
        "  UNION ALL SELECT block_id, template FROM run_templates WHERE run_id = ? AND list_contains(?, block_id)),"
        " d AS (SELECT phrase, decision FROM decisions WHERE scope IN (?, ?)"
        "  QUALIFY row_number() OVER (PARTITION BY phrase ORDER BY scope = ?) = 1)"
        " SELECT m.block_id, count(*) AS n, count(d.decision) AS decided, min(d.decision) AS lo,"
        "  max(d.decision) AS hi FROM m LEFT JOIN d ON d.phrase = m.text GROUP BY m.block_id HAVING decided > 0",
        [run_id, [int(b) for b in block_ids], run_id, [int(b) for b in block_ids], ALL_SNAPSHOTS, snapshot_id,
         ALL_SNAPSHOTS]).rows()
    return {int(b): lo if decided == n and lo == hi else "mixed" for b, n, decided, lo, hi in rows}


# -- templates with slots (runs mined with --templates) ----------------------
def template_table(store: Store, run_id: int, search: str = "", limit: int = 500) -> pl.DataFrame:
    """Templates of a run by tokens covered (their occurrences' tokens), then df."""
    sql = ["SELECT t.template_id, t.template, t.constant_tokens, t.slots, t.df, t.occurrences, t.sites,"
           " coalesce(o.tokens, 0) AS tokens FROM run_templates t"
           " LEFT JOIN (SELECT template_id, sum(token_end - token_start) AS tokens FROM run_template_occurrences"
           "  WHERE run_id = ? GROUP BY template_id) o ON o.template_id = t.template_id WHERE t.run_id = ?"]
    params: list = [run_id, run_id]
    if search:
        sql.append("AND t.template ILIKE ?")
        params.append(f"%{search.lower()}%")
    sql.append("ORDER BY tokens DESC, t.df DESC, t.template LIMIT ?")
    params.append(limit)
    return store.query(" ".join(sql), params)


def template_row(store: Store, run_id: int, template_id: int) -> dict | None:
    """One template of a run; ``fillers`` is parsed: per slot, [text, count]
    pairs of its most frequent fillers."""
    df = store.query("SELECT template_id, template, constant_tokens, slots, df, occurrences, sites, max_slot, fillers"
                     " FROM run_templates WHERE run_id = ? AND template_id = ?", [run_id, template_id])
    if not df.height:
        return None
    row = df.row(0, named=True)
    try:
        row["fillers"] = json.loads(row["fillers"] or "[]")
    except ValueError:
        row["fillers"] = []
    return row


def template_occurrences(store: Store, run_id: int, snapshot_id: str, template_id: int,
                         limit: int = 30) -> pl.DataFrame:
    return store.query(
        "SELECT o.doc_index, o.token_start, o.token_end, o.char_start, o.char_end, d.doc_id, d.site, d.url"
        " FROM run_template_occurrences o JOIN documents d ON d.snapshot_id = ? AND d.doc_index = o.doc_index"
        " WHERE o.run_id = ? AND o.template_id = ? ORDER BY o.doc_index, o.token_start LIMIT ?",
        [snapshot_id, run_id, template_id, limit])


def template_sites(store: Store, run_id: int, snapshot_id: str, template_id: int) -> pl.DataFrame:
    return store.query(
        "SELECT d.site, count(DISTINCT o.doc_index) AS documents, count(*) AS occurrences"
        " FROM run_template_occurrences o JOIN documents d ON d.snapshot_id = ? AND d.doc_index = o.doc_index"
        " WHERE o.run_id = ? AND o.template_id = ? GROUP BY d.site ORDER BY documents DESC, d.site",
        [snapshot_id, run_id, template_id])


def document_template_spans(store: Store, run_id: int, doc_index: int) -> pl.DataFrame:
    """The template occurrences of one document, shaped like :func:`document_spans`
    (the template's text under ``phrase``)."""
    return store.query(
        "SELECT s.* EXCLUDE (sites)" + _WHY + " FROM (SELECT o.run_id, o.doc_index, o.char_start, o.char_end,"
        "  o.token_start, o.token_end, p.template AS phrase, p.df, p.sites"
        "  FROM run_template_occurrences o JOIN run_templates p ON p.run_id = o.run_id"
        "  AND p.template_id = o.template_id WHERE o.run_id = ? AND o.doc_index = ?) s" + _WHY_BLOCK +
        " ORDER BY s.char_start", [run_id, doc_index])


# -- the store's own reads, named here so pages have one read layer ----------
def snapshots(store: Store) -> pl.DataFrame:
    return store.snapshots()


def has_snapshot(store: Store, snapshot_id: str) -> bool:
    return store.has_snapshot(snapshot_id)


def latest_snapshot(store: Store) -> str | None:
    return store.latest_snapshot() if store.snapshots().height else None


def runs(store: Store, snapshot_id: str) -> pl.DataFrame:
    return store.runs(snapshot_id)


def run(store: Store, run_id: int) -> dict:
    """The run's row with its parsed summary (``summary``), or {}."""
    return store.run(run_id) or {}


def cut_parameters(store: Store, run_id: int) -> tuple[int, int]:
    """(L, slot width) the cut rule uses with a run's decisions: its min_len,
    and the max_slot its templates were mined with (else the default)."""
    row = store.run(run_id) or {}
    templates = (row.get("summary") or {}).get("templates") or {}
    return int(row.get("min_len") or DEFAULT_MIN_LEN), int(templates.get("max_slot") or DEFAULT_MAX_SLOT)


def find_run(store: Store, snapshot_id: str, sigma: int, min_len: int, algo: str, max_slot: int = 0) -> int | None:
    return store.find_run(snapshot_id, sigma, min_len, algo, max_slot)


def document(store: Store, snapshot_id: str, doc_index: int) -> dict | None:
    return store.document(snapshot_id, doc_index)


def decisions(store: Store, snapshot_id: str) -> pl.DataFrame:
    """The decisions in force on a snapshot (its own over the project's)."""
    return store.decisions(snapshot_id)


def decisions_map(store: Store, snapshot_id: str) -> dict[str, str]:
    """phrase -> decision in force on the snapshot."""
    df = store.decisions(snapshot_id)
    return dict(zip(df["phrase"].to_list(), df["decision"].to_list()))


def stoplist_files(decisions: pl.DataFrame) -> tuple[bytes, bytes]:
    """The stop-phrase list as CSV and JSON bytes (what ``boilerscope clean --stoplist`` reads)."""
    return stoplist_frames(decisions)


# -- the token arrays: a document's tokens, the cut rule ---------------------
def vocabulary_ids(store: Store, snapshot_id: str) -> dict[str, int]:
    """token -> token id of a snapshot (the cut rule's vocabulary; load it once per snapshot)."""
    return {t: i for i, t in enumerate(store.vocabulary(snapshot_id))}


def document_tokens(store: Store, snapshot_id: str, doc_index: int) -> dict | None:
    """A document's text with its token ids and each token's characters
    [span_start, span_end) (numpy copies, not views of the memory map)."""
    doc = store.document(snapshot_id, int(doc_index))
    if doc is None:
        return None
    arrays = store.arrays(snapshot_id)
    lo, hi = int(doc["token_start"]), int(doc["token_start"]) + int(doc["n_tokens"])
    return {"text": doc["text"] or "", "tokens": np.array(arrays.tokens[lo:hi], np.int32),
            "span_start": np.array(arrays.span_start[lo:hi], np.int64),
            "span_end": np.array(arrays.span_end[lo:hi], np.int64)}


def _runs_of(mask: np.ndarray, span_start, span_end) -> list[tuple[int, int]]:
    """Character ranges of the runs of set positions of a token mask."""
    idx = np.flatnonzero(np.asarray(mask, bool))
    if not idx.shape[0]:
        return []
    breaks = np.flatnonzero(np.diff(idx) != 1)
    starts = np.concatenate(([idx[0]], idx[breaks + 1]))
    ends = np.concatenate((idx[breaks], [idx[-1]]))
    return [(int(span_start[a]), int(span_end[b])) for a, b in zip(starts.tolist(), ends.tolist())]


def document_cut(store: Store, snapshot_id: str, doc_index: int, min_len: int, noise, keep,
                 max_slot: int, vocab_ids: dict[str, int] | None = None) -> dict:
    """What the decisions cut from one document (the rule of :mod:`engine.clean`):
    ``tokens`` (how many) and ``ranges``, the character ranges [start, end) of
    each run of cut tokens."""
    doc = document_tokens(store, snapshot_id, doc_index)
    if doc is None:
        return {"tokens": 0, "ranges": []}
    vocab_ids = vocabulary_ids(store, snapshot_id) if vocab_ids is None else vocab_ids
    n = doc["tokens"].shape[0]
    cut = decision_cut(doc["tokens"], np.array([0, n], np.int64), int(min_len), list(noise), list(keep),
                       vocab_ids, int(max_slot))
    return {"tokens": int(np.asarray(cut).sum()), "ranges": _runs_of(cut, doc["span_start"], doc["span_end"])}


def tokens_cut(store: Store, snapshot_id: str, min_len: int, noise, keep, max_slot: int,
               vocab_ids: dict[str, int] | None = None) -> list[int]:
    """Tokens of the snapshot each noise phrase or template cuts on its own (keep still wins)."""
    vocab_ids = vocabulary_ids(store, snapshot_id) if vocab_ids is None else vocab_ids
    arrays = store.arrays(snapshot_id)
    tokens, offsets = np.asarray(arrays.tokens), np.asarray(arrays.doc_offsets)
    return decision_counts(tokens, offsets, int(min_len), list(noise), list(keep), vocab_ids,
                           int(max_slot)).tolist()


# -- near-duplicate detections -------------------------------------------------
#: Dedup config keys as stored by earlier versions, under their current names.
OLD_DEDUP_KEYS = {"method": "description", "sketch": "scheme", "shingle": "w", "sketch_size": "n",
                  "threshold": "t"}


def dedup_config(config: dict) -> dict:
    """A stored detection's parameters under the current names (method,
    sketch, shingle, sketch_size, threshold); a summary written before the
    rename has description, scheme, w, n, t: the current name wins."""
    config = dict(config or {})
    for new, old in OLD_DEDUP_KEYS.items():
        if config.get(new) is None and old in config:
            config[new] = config.pop(old)
        else:
            config.pop(old, None)
    return config


def dedups(store: Store, snapshot_id: str, raw: bool, run_id: int | None = None) -> pl.DataFrame:
    """The detections of a snapshot on the raw text, or with the boilerplate of
    ``run_id`` removed (any run when None): dedup_id, run_id, raw, created."""
    df = store.dedups(snapshot_id).filter(pl.col("raw") == raw)
    if not raw and run_id is not None:
        df = df.filter(pl.col("run_id") == run_id)
    return df.drop("summary", "config", strict=False)


def dedup_summary(store: Store, snapshot_id: str, dedup_id: int) -> dict:
    """A detection's summary (parsed), its ``config`` under the current names."""
    df = store.dedups(snapshot_id).filter(pl.col("dedup_id") == dedup_id)
    if not df.height:
        return {}
    summary = json.loads(df["summary"][0] or "{}")
    summary["config"] = dedup_config(summary.get("config") or {})
    return summary
