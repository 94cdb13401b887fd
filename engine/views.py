"""The dashboard's read queries: every SQL the pages need, by name.

The pages never write SQL (a test checks it): they call these functions, which
run on the store's one connection (a cursor per query, ``?`` parameters,
polars frames back).  Each query is bounded (LIMIT or aggregation, never a
whole table of a large snapshot); ``bench/app_queries.py`` measures them on a
store of 1M documents.
"""
from __future__ import annotations

import polars as pl

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
    return store.query("SELECT doc_index, doc_id, url FROM documents WHERE snapshot_id = ?"
                       " AND (url ILIKE ? OR text ILIKE ?) ORDER BY doc_id LIMIT ?", [sid, like, like, limit])


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
                 limit: int = 500) -> pl.DataFrame:
    """Maximal phrases of a run by psi, filtered by text, site and number of sites."""
    sql = ["SELECT p.phrase_id, p.phrase, p.length, p.df, p.occurrences, p.sites, p.psi FROM run_phrases p"
           " WHERE p.run_id = ? AND p.maximal"]
    params: list = [run_id]
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
    """One phrase of a run by id (maximal or not); ``first_pos`` is its first
    occurrence in the snapshot's token array."""
    df = store.query(
        "SELECT phrase_id, phrase, length, df, occurrences, sites, psi, maximal, first_pos FROM run_phrases"
        " WHERE run_id = ? AND phrase_id = ?", [run_id, phrase_id])
    return df.row(0, named=True) if df.height else None


def phrase_occurrences(store: Store, run_id: int, snapshot_id: str, phrase_id: int, limit: int = 30) -> pl.DataFrame:
    return store.query(
        "SELECT o.doc_index, o.token_pos, d.doc_id, d.site, d.url FROM run_occurrences o"
        " JOIN documents d ON d.snapshot_id = ? AND d.doc_index = o.doc_index"
        " WHERE o.run_id = ? AND o.phrase_id = ? ORDER BY o.doc_index, o.token_pos LIMIT ?",
        [snapshot_id, run_id, phrase_id, limit])

def text_windows(store: Store, snapshot_id: str, doc_indexes, char_starts, char_ends,
                 width: int = 90) -> pl.DataFrame:
    """Keyword in context in one query: for each (document, [start, end)) in
    code points, the ``width`` characters before (``left``), the span
    (``mid``) and the ``width`` after (``right``), in the order given."""
    n = len(doc_indexes)
    if n == 0:
        return pl.DataFrame(schema={"i": pl.Int64, "left": pl.String, "mid": pl.String, "right": pl.String})
    return store.query(
        "SELECT w.i, substring(d.text, greatest(w.cs - ?, 0) + 1, w.cs - greatest(w.cs - ?, 0)) AS left,"
        " substring(d.text, w.cs + 1, w.ce - w.cs) AS mid, substring(d.text, w.ce + 1, ?) AS right"
        " FROM (SELECT unnest(?::BIGINT[]) AS i, unnest(?::BIGINT[]) AS doc_index, unnest(?::BIGINT[]) AS cs,"
        "       unnest(?::BIGINT[]) AS ce) w"
        " JOIN documents d ON d.snapshot_id = ? AND d.doc_index = w.doc_index ORDER BY w.i",
        [width, width, width, list(range(n)), [int(x) for x in doc_indexes], [int(x) for x in char_starts],
         [int(x) for x in char_ends], snapshot_id])

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

def document_spans(store: Store, run_id: int, doc_index: int) -> pl.DataFrame:
    return store.query(
        "SELECT s.char_start, s.char_end, s.token_start, s.token_end, p.phrase, p.df FROM run_spans s"
        " JOIN run_phrases p ON p.run_id = s.run_id AND p.phrase_id = s.phrase_id"
        " WHERE s.run_id = ? AND s.doc_index = ? ORDER BY s.char_start", [run_id, doc_index])


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
    import json
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
        "SELECT o.char_start, o.char_end, o.token_start, o.token_end, t.template AS phrase, t.df"
        " FROM run_template_occurrences o JOIN run_templates t ON t.run_id = o.run_id AND t.template_id = o.template_id"
        " WHERE o.run_id = ? AND o.doc_index = ? ORDER BY o.char_start", [run_id, doc_index])
