"""The result contract both miners share: their input check and their output.

:func:`engine.bloomspan.mine_bloomspan` (BloomSpan in memory),
:func:`engine.outofcore.mine_out_of_core` (within a memory budget),
:func:`engine.fhk.mine_fhk` (the suffix-array baseline) and
:func:`engine.sigma1.mine_sigma1` (the sigma-1 rule), dispatched by
:func:`engine.planner.mine_tokens`, all take the same validated input and return a
:class:`MiningResult`; the tests check that they give equal answers.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .constants import MAX_TOKENS_32


#: The per-node, per-occurrence and per-range arrays of a result, in the order
#: the growth kernel writes them, with their dtypes and the count they follow.
OUTPUT_FIELDS = (
    ("node_rep", np.int64, "nodes"), ("node_len", np.int32, "nodes"), ("node_df", np.int64, "nodes"),
    ("node_occ", np.int64, "nodes"), ("node_max", np.uint8, "nodes"),
    ("occ_pos", np.int32, "occurrences"), ("occ_doc", np.int32, "occurrences"),
    ("occ_node", np.int32, "occurrences"),
    ("rng_pos", np.int32, "ranges"), ("rng_len", np.int32, "ranges"), ("rng_node", np.int32, "ranges"),
)


#: Positions (``occ_pos``, ``rng_pos`` and the growth buffers) are int32
#: below this many tokens and int64 from it, which costs 4 more bytes per
#: survivor and lets a BloomSpan run hold more than 2^31 - 2 tokens.  Tests
#: lower it to run the int64 path on small corpora.
WIDE_POSITIONS_FROM = MAX_TOKENS_32 + 1
#: The output fields that hold token positions.
POSITION_FIELDS = ("occ_pos", "rng_pos")


def pos_dtype(n_tokens: int) -> np.dtype:
    """The dtype of token positions for a token array of ``n_tokens``."""
    return np.dtype(np.int32) if n_tokens < WIDE_POSITIONS_FROM else np.dtype(np.int64)


@dataclass
class MiningResult:
    """Arrays of one mining run (all positions index the token array).

    Attributes
    ----------
    node_rep, node_len, node_df, node_occ, node_max : arrays
        Reported phrases: first occurrence, length, df, occurrences, and
        whether maximal (1) or only the explanation of some covered range.
    occ_pos, occ_doc, occ_node : arrays
        Every occurrence of every maximal phrase, grouped by node, positions
        increasing.
    rng_pos, rng_len, rng_node : arrays
        Covered ranges not contained in another (start, length, node), by
        increasing start: the covered spans and the phrase explaining each.
    covered : int64 array (n_docs,)
        Covered tokens per document.
    stats : dict
        Seeds kept by each filter, false positives, timings.
    """

    node_rep: np.ndarray
    node_len: np.ndarray
    node_df: np.ndarray
    node_occ: np.ndarray
    node_max: np.ndarray
    occ_pos: np.ndarray
    occ_doc: np.ndarray
    occ_node: np.ndarray
    rng_pos: np.ndarray
    rng_len: np.ndarray
    rng_node: np.ndarray
    covered: np.ndarray
    stats: dict = field(default_factory=dict)


def check_input(tokens, doc_offsets, sigma: int, min_len: int, min_sigma: int = 1, wide: bool = False):
    """Validated contiguous (int32 tokens, int64 offsets) for a miner;
    ``wide``: the miner takes int64 positions (no 2^31 - 2 token limit)."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    if sigma < min_sigma:
        raise ValueError(f"sigma must be >= {min_sigma}")
    if min_len < 2:
        raise ValueError("min_len must be >= 2")
    if not wide and tokens.shape[0] > MAX_TOKENS_32:
        raise ValueError("at most 2^31 - 2 tokens per run of this miner")
    if doc_offsets.shape[0] < 1 or doc_offsets[0] != 0 or doc_offsets[-1] != tokens.shape[0]:
        raise ValueError("doc_offsets must start at 0 and end at len(tokens)")
    return tokens, doc_offsets


def canonical(fields: dict, n_tokens: int = 0) -> dict:
    """The result arrays in the canonical order every miner returns: nodes by
    (first occurrence, length), node ids renumbered in occurrences and ranges,
    occurrences by (node, position); dtypes as :data:`OUTPUT_FIELDS`.  Ranges
    keep their order (by start, from the coverage sweep).  So the answer does
    not depend on the miner, the number of chunks, or thread timing.
    Positions are int64 from :data:`WIDE_POSITIONS_FROM` tokens (``n_tokens``)."""
    pos = pos_dtype(n_tokens)
    m = {name: np.asarray(fields[name]).astype(pos if name in POSITION_FIELDS else dtype, copy=False)
         for name, dtype, _ in OUTPUT_FIELDS}
    perm = np.lexsort((m["node_len"], m["node_rep"]))
    inv = np.empty(perm.shape[0], np.int64)
    inv[perm] = np.arange(perm.shape[0])
    for name in ("node_rep", "node_len", "node_df", "node_occ", "node_max"):
        m[name] = m[name][perm]
    m["occ_node"] = inv[m["occ_node"]].astype(np.int32)
    m["rng_node"] = inv[m["rng_node"]].astype(np.int32)
    o = np.lexsort((m["occ_pos"], m["occ_node"]))
    for name in ("occ_pos", "occ_doc", "occ_node"):
        m[name] = m[name][o]
    return m
