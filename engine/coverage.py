"""Coverage: from the mined ranges to the share of the index that repeats.

A token position is covered when it lies inside an occurrence of any frequent
phrase of length ``>= L`` (equivalently, inside an occurrence of a frequent
L-gram).  The mask is monotone: raising sigma or L never covers more.  The
mining kernels report one range per occurrence that stops growing at a node of
length ``>= L`` (see :mod:`engine.bloomspan` for why their union is exactly the
mask); :func:`engine.kernels.coverage.sweep` counts covered tokens per document
and keeps the ranges not contained in another, each with the phrase that
explains it (the longest frequent phrase at that place, which need not be
maximal).

Per document: covered tokens and contamination = covered / tokens (0 for an
empty document).  Per site: documents, tokens, covered tokens, coverage =
covered / tokens, and the median and 90th percentile (linear interpolation)
of the contamination of its documents.

Complexity: O(n) time, 4 bytes per token of scratch for the sweep.
"""
from __future__ import annotations

import numpy as np
import polars as pl

from .kernels import coverage as C
from .memory import gather


def ranges_mask(n_tokens: int, starts, ends) -> np.ndarray:
    """Bool mask over ``n_tokens`` positions: True inside any [start, end)."""
    return C.ranges_mask(int(n_tokens), np.ascontiguousarray(starts, dtype=np.int64),
                         np.ascontiguousarray(ends, dtype=np.int64))


def distinct_per_group(group_lo, group_hi, values, n_values: int) -> np.ndarray:
    """Number of distinct ``values`` (0 .. n_values - 1) in each slice
    ``[group_lo, group_hi)``."""
    return C.distinct_per_group(np.ascontiguousarray(group_lo, dtype=np.int64),
                                np.ascontiguousarray(group_hi, dtype=np.int64),
                                np.ascontiguousarray(values, dtype=np.int64), int(n_values))


def covered_runs(phrase_mask: np.ndarray, starts, ends, doc_offsets):
    """Coverage by phrases (``phrase_mask``) or by ranges ``[starts, ends)``
    (template occurrences): the covered tokens of each document, and the
    runs of one kind within a document as ``start, end, kind`` arrays (1:
    phrase, 2: range only)."""
    return C.labelled_runs(np.ascontiguousarray(phrase_mask, dtype=np.bool_),
                           np.ascontiguousarray(starts, dtype=np.int64), np.ascontiguousarray(ends, dtype=np.int64),
                           np.ascontiguousarray(doc_offsets, dtype=np.int64))


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
