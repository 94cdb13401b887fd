"""The partitioned Spark job in one process: the maps and reductions of
:mod:`engine.partitioned` (steps 2-4) and :mod:`engine.partitioned_blocks`
(phase D) wired with in-process groupings instead of Spark's shuffles, for
the tests that run without Spark."""
from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .partitioned import (CHUNK, CONTEXT_GROWTH, FIRST_CONTEXT, chunk_bits, count_chunks, covered_tokens,
                          empty_frequent_rows, empty_interval_rows, empty_part_rows, empty_window_rows, frequent_rows,
                          interval_rows, mine_part, part_of, segments, window_counters, window_rows)
from .partitioned_blocks import in_process


def _by_hash(table: pa.Table, column: str, parts: int) -> list[pa.Table]:
    key = part_of(table.column(column).to_numpy(), parts) if table.num_rows else np.zeros(0, np.int64)
    return [table.filter(pa.array(key == p)) for p in range(parts)]


def simulate(texts: list[str], sigma: int, L: int, parts: int = 3, batches: int = 2,
             context: int = FIRST_CONTEXT, buckets: int = CHUNK, sites: list | None = None,
             with_blocks: bool = False, doc_ids: list | None = None):
    """Run steps 2-4 on ``texts`` (documents ``doc_ids``, default 0, 1, ...; each on its site of
    ``sites``, default ``unknown``) in this process, partitioned as on Spark
    (``batches`` input batches, each its own step 2 counters; ``parts``
    shuffle partitions; the first round at ``context``; ``buckets`` filter
    buckets).  Returns (phrases frame as phrases.parquet without block_id,
    covered tokens per document, rounds); ``with_blocks``: phase D too
    (:mod:`engine.partitioned_blocks`), and (phrases with block_id, covered,
    rounds, blocks.parquet, block_spans.parquet)."""
    if sigma < 2:
        raise ValueError("the partitioned step needs sigma >= 2")
    n = len(texts)
    cuts = np.linspace(0, n, batches + 1).astype(int)
    sites = sites or [None] * n
    ids = np.asarray(doc_ids if doc_ids is not None else np.arange(n), np.int64)
    docs = [pa.RecordBatch.from_arrays([pa.array(ids[a:b]), pa.array(texts[a:b], pa.string()),
                                        pa.array(sites[a:b], pa.string())],
                                       names=["doc_id", "text", "site"]) for a, b in zip(cuts[:-1], cuts[1:])]
    by_chunk: dict[int, list] = {}
    for d in docs:  # a partition each: its counters, by chunk
        for c, part in count_chunks(window_counters(iter([d]), L, buckets)):
            by_chunk.setdefault(c, []).append(part.copy())
    bits = np.zeros(buckets // 64, np.uint64)
    for c, chunks in by_chunk.items():
        bits[c * (CHUNK // 64):(c + 1) * (CHUNK // 64)] = chunk_bits(chunks, sigma)
    seg = [next(segments(iter([d]), L, bits, bits=True, written=True)) for d in docs]
    # phase A
    rows = pa.Table.from_batches([window_rows(s, L, bits) for s in seg], schema=empty_window_rows().schema)
    freq = pa.Table.from_batches([frequent_rows(t, sigma) for t in _by_hash(rows, "h", parts)],
                                 schema=empty_frequent_rows().schema)
    cdoc, ccov = covered_tokens(freq.column("doc_id").to_numpy(), freq.column("pos").to_numpy(), L)
    covered = np.zeros(n, np.int64)   # by the documents' order in ``texts``
    covered[np.searchsorted(np.sort(ids), cdoc)] = ccov
    covered = covered[np.argsort(np.argsort(ids))]
    seeds = freq.filter(freq.column("seed")).select(["h", "doc_id", "pos"])
    segs = pa.Table.from_batches(seg).select(["doc_id", "site", "segments", "starts"])
    found, rounds = [], 0
    while seeds.num_rows:
        rounds += 1
        pl_seeds = pl.from_arrow(seeds).group_by("doc_id").agg(pl.struct("h", "pos").alias("seeds"))
        joined = pl.from_arrow(segs).join(pl_seeds, on="doc_id", how="inner").to_arrow()
        iv = pa.Table.from_batches([interval_rows(b, context, parts) for b in joined.to_batches()],
                                   schema=empty_interval_rows().schema)
        out = pa.Table.from_batches([mine_part(t, sigma, L, context) for t in _by_hash(iv, "part", parts)
                                     if t.num_rows], schema=empty_part_rows().schema)
        found.append(out.filter(pc.equal(out.column("kind"), 0)))
        seeds = out.filter(pc.equal(out.column("kind"), 1)).select(["h", "doc_id", "pos"])
        context *= CONTEXT_GROWTH
    mined = pl.from_arrow(pa.concat_tables(found)) if found else pl.from_arrow(empty_part_rows())
    phrases = (mined.select("phrase", "length", "df", "occurrences", "sites", "psi")
               .sort(["psi", "length", "phrase"], descending=[True, True, False]))
    if not with_blocks:
        return phrases, covered, rounds
    occ = (mined.select("phrase", "length", "occ_doc", "occ_pos").explode("occ_doc", "occ_pos")
           .rename({"occ_doc": "doc_id", "occ_pos": "pos"}))
    n_tokens = int(pa.Table.from_batches(seg).column("n_tokens").to_numpy().sum())
    blocks, spans, phrase_block = in_process(freq, pa.Table.from_batches(seg), occ, L, n_tokens, parts)
    phrases = phrases.with_columns(pl.col("phrase").replace_strict(phrase_block, default=None, return_dtype=pl.Int32)
                                   .alias("block_id"))
    return phrases, covered, rounds, blocks, spans
