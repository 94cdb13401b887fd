"""The SQL peer: the BloomSpan article's "Step 0" written in DuckDB SQL.

A baseline for the benchmarks and the tests (its coverage must equal the
miners'), not part of the store: it runs on a private in-memory database, the
one place outside :mod:`engine.store` that opens DuckDB.
"""
from __future__ import annotations

import duckdb
import numpy as np
import pyarrow as pa


def sql_lgram_coverage(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_len: int,
                       memory_limit: str | None = None) -> tuple[np.ndarray, dict]:
    """The SQL peer (the BloomSpan article's "Step 0"): frequent L-grams by
    distinct documents in DuckDB SQL, as a data engineer would write it.

    The token ids are loaded once into a table (doc, pos, tok); a window of L
    tokens per position (``lead``) is grouped by the exact tuple, documents
    counted, and the positions inside a frequent L-gram occurrence counted per
    document.  It gives the coverage, not the maximal phrases.

    Returns
    -------
    covered : int64 array (n_docs,)
    seconds : dict with "load" and "query"
    """
    import time

    n_docs = int(doc_offsets.shape[0] - 1)
    con = duckdb.connect(":memory:")
    try:
        if memory_limit:
            con.execute(f"SET memory_limit = '{memory_limit}'")
        t = time.perf_counter()
        doc = np.repeat(np.arange(n_docs, dtype=np.int32), np.diff(doc_offsets))
        table = pa.table({"doc": doc, "pos": np.arange(tokens.shape[0], dtype=np.int64),
                          "tok": np.asarray(tokens, np.int32)})
        con.register("_t", table)
        con.execute("CREATE TABLE t AS SELECT * FROM _t")
        con.unregister("_t")
        load = time.perf_counter() - t
        t = time.perf_counter()
        L = int(min_len)
        cols = ", ".join([f"lead(tok, {k}) OVER w AS t{k}" for k in range(1, L)])
        keys = ", ".join(["tok"] + [f"t{k}" for k in range(1, L)])
        sql = f"""
            WITH g AS (SELECT doc, pos, tok, {cols} FROM t
                       WINDOW w AS (PARTITION BY doc ORDER BY pos)),
                 w10 AS (SELECT * FROM g WHERE t{L - 1} IS NOT NULL),
                 f AS (SELECT {keys} FROM w10 GROUP BY {keys} HAVING count(DISTINCT doc) >= ?),
                 s AS (SELECT w10.doc, w10.pos FROM w10 JOIN f USING ({keys})),
                 c AS (SELECT DISTINCT doc, unnest(range(pos, pos + {L})) AS p FROM s)
            SELECT doc, count(*) AS covered FROM c GROUP BY doc"""
        res = con.sql(sql, params=[int(sigma)]).to_arrow_table()
        query = time.perf_counter() - t
    finally:
        con.close()
    covered = np.zeros(n_docs, np.int64)
    if res.num_rows:
        covered[res.column("doc").to_numpy()] = res.column("covered").to_numpy()
    return covered, {"load": load, "query": query}
