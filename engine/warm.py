"""Warm numba's cache: compile every kernel once (``make install`` runs it)."""
from __future__ import annotations

import sys
import time

import numpy as np
import pyarrow as pa

from . import memory as M
from .blocks import TemplateOccurrences, find_blocks, find_blocks_in_coverage, find_blocks_in_ranges
from .clean import decision_counts, decision_cut
from .coverage import covered_runs
from .kernels import coverage as KC
from .kernels.shape import lz78_phrases
from .neardup import DedupConfig, detect
from .planner import MiningPlan, mine_tokens, warm_up
from .shape import choose_algorithm
from .templates import OutOfCore, mine_templates
from .tokenizer import tokenize_arrow


def _say(step: int, what: str, t0: float) -> None:
    """One line per group of kernels: a first install is not silent for a minute."""
    print(f"numba: compiling {what} ({step}/5, {time.perf_counter() - t0:.0f} s so far)", file=sys.stderr, flush=True)


def main() -> None:
    t = time.perf_counter()
    _say(1, "the tokenizer and the miners' plans", t)
    tk = tokenize_arrow(pa.array(["Warm up, warm up.", None, "x"]), workers=1)
    in_memory, out_of_core = M.plan(4, 1 << 30), M.plan(4, 1)
    for used in ("bloomspan", "fhk"):
        for sigma1 in (True, False):  # read-only arrays, as a store's
            warm_up(MiningPlan(used, used, sigma1=sigma1, memory=in_memory))
    warm_up(MiningPlan("bloomspan", "bloomspan", memory=out_of_core))
    # writable arrays (the API on fresh arrays) and read-only ones (a store's
    # memory-mapped arrays): numba compiles the two kinds apart
    for writable in (True, False):
        _say(2 if writable else 3, f"the mining, blocks, cleaning and near-duplicate kernels "
                                   f"({'fresh' if writable else 'stored'} arrays)", t)
        tokens = np.array([0, 1, 2, 0, 1, 2, 0, 1], np.int32)
        offsets = np.array([0, 3, 6, 8], np.int64)
        tokens.flags.writeable = offsets.flags.writeable = writable
        mine_tokens(tokens, offsets, 3, 2, 2)
        mine_tokens(tokens, offsets, 3, 2, 3, memory=1)  # out of core
        mine_tokens(tokens, offsets, 3, 2, 2, algo="fhk")
        choose_algorithm(tokens, offsets, 2, 2)
        # blocks: in the run's ranges (with and without templates), whole (Spark, sigma 1)
        covered = np.ones(tokens.shape[0], bool)
        find_blocks_in_ranges(tokens, offsets, 2, 2, offsets[:-1].copy(), offsets[1:].copy()).block_of_groups(
            np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1, np.int64), 1)
        find_blocks_in_ranges(tokens, offsets, 2, 2, offsets[:-1].copy(), offsets[1:].copy(),
                              templates=TemplateOccurrences(*(np.array([x], np.int64) for x in (0, 0, 2, 0, 2))))
        find_blocks(tokens, offsets, 2, 2, TemplateOccurrences(*(np.array([x], np.int64) for x in (0, 0, 2, 0, 2))),
                    within=covered)
        find_blocks(tokens, offsets, 2, 2)
        find_blocks_in_coverage(tokens, offsets, 1, 2, covered)
        lz78_phrases(tokens, offsets, 8)
        decision_cut(tokens, offsets, 2, ["a b", "a * c"], ["b * a"], {"a": 0, "b": 1, "c": 2}, 2)
        decision_counts(tokens, offsets, 2, ["a b c", "a * c"], ["b * a", "c a"], {"a": 0, "b": 1, "c": 2}, 2)
        for scheme in ("bottom", "minhash"):
            for desc in ("shingles", "lexical"):
                detect(tokens, offsets, np.arange(3), DedupConfig(method=desc, sketch=scheme, sketch_size=4, threshold=1))
    _say(4, "the templates' kernels", t)
    KC.distinct_per_group(np.zeros(1, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64), 1)
    for ooc in (None, OutOfCore(chunk_tokens=5, part_entries=1)):  # in memory, out of core
        mine_templates(np.array([0, 1, 5, 2, 3, 0, 1, 6, 2, 3], np.int32), np.array([0, 5, 10], np.int64), 2, 4, 2,
                       out_of_core=ooc)
    _say(5, "the coverage kernels", t)
    covered_runs(np.zeros(1, np.int64), np.ones(1, np.int64), np.array([1, 2], np.int64), np.array([2, 4], np.int64),
                 np.array([0, 4], np.int64))
    del tk
    print(f"numba kernels ready ({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
