"""The planner: which miner answers a run, in memory or out of core, decided once.

Every run (the command line, the Python API, the dashboard, the Spark job's
exact step) goes through :func:`plan_mining` and :func:`mine_tokens`; no
other module chooses between the miners.  The rules, in order:

1. **sigma 1** is answered by :mod:`engine.sigma1` (whole documents,
   O(n log n)) whatever the algorithm asked for: every phrase is frequent
   there, and BloomSpan's growth would cost k^2/2 on a run of k copies of
   one token.
2. **The memory budget** (:mod:`engine.memory`): a snapshot whose in-memory
   run does not fit is mined out of core (:mod:`engine.outofcore`, the same
   steps over chunks, the same answer).  ``fhk`` holds the whole snapshot,
   so asking for it then is an error.
3. **32-bit positions**: the suffix-array baseline holds at most
   2^31 - 2 tokens; past that BloomSpan runs with int64 positions.
4. **auto**: otherwise :func:`engine.shape.choose_algorithm` picks BloomSpan
   or FHK from the corpus' periodic runs.

The plan records why (``choice``: the statistics or the rule that decided),
which the run's summary keeps as ``algo_used``, ``algo_choice`` and
``memory``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np

from . import memory as M
from .bloomspan import mine_bloomspan
from .config import default_workers
from .constants import ALGOS, MAX_TOKENS_32
from .errors import BoilerscopeError
from .fhk import mine_fhk
from .outofcore import mine_out_of_core
from .result import MiningResult, check_input
from .shape import choose_algorithm
from .sigma1 import mine_sigma1
from .steps import filter_bytes_for


@dataclass(frozen=True)
class MiningPlan:
    """What runs and why.

    Attributes
    ----------
    algo : str
        What was asked for (``auto``, ``bloomspan``, ``fhk``).
    used : str
        The miner the summary names (``bloomspan`` or ``fhk``).
    memory : engine.memory.Plan
        The budget and, out of core, its chunks and groups.
    choice : dict
        Why ``auto`` chose it (empty when the algorithm was given).
    sigma1 : bool
        Rule 1: the sigma-1 answer runs instead.
    """

    algo: str
    used: str
    memory: M.Plan
    choice: dict = field(default_factory=dict)
    sigma1: bool = False

    @property
    def out_of_core(self) -> bool:
        return self.memory.out_of_core and not self.sigma1 and self.used == "bloomspan"


def plan_mining(tokens, doc_offsets, sigma: int, min_len: int, algo: str = "auto",
                memory=None) -> MiningPlan:
    """The plan of a run (rules 1-4 of the module docstring).

    ``memory`` is the budget (bytes, a size such as ``"8GB"``, or None for
    :func:`engine.memory.budget`'s default).  Raises
    :class:`~engine.errors.BoilerscopeError` when the asked algorithm cannot
    hold the snapshot.
    """
    if algo not in ALGOS:
        raise BoilerscopeError(f"unknown algorithm '{algo}'; choose one of {', '.join(ALGOS)}")
    n = int(tokens.shape[0])
    mplan = M.plan(n, memory)
    if algo == "fhk" and n > MAX_TOKENS_32:
        raise BoilerscopeError(
            f"{{algo}} fhk holds at most 2^31 - 2 tokens (32-bit suffixes); this snapshot has "
            f"{n:,}: use {{algo}} bloomspan", "algo")
    if algo == "fhk" and mplan.out_of_core:
        raise BoilerscopeError(
            f"{{algo}} fhk holds the whole snapshot in memory ({n:,} tokens do not fit {{memory}} "
            f"{mplan.budget:,} bytes); use {{algo}} bloomspan or raise {{memory}}", "algo", "memory")
    used, choice = algo, {}
    if algo == "auto":
        if mplan.out_of_core:
            used, choice = "bloomspan", {"out_of_core": True}
        elif n > MAX_TOKENS_32:
            used, choice = "bloomspan", {"wide_positions": True}
        else:
            used, choice = choose_algorithm(tokens, doc_offsets, sigma, min_len)
    return MiningPlan(algo=algo, used=used, choice=choice, sigma1=sigma == 1, memory=mplan)


def mine_tokens(tokens, doc_offsets, vocab_size: int, sigma: int, min_len: int, *, algo: str = "bloomspan",
                workers: int | None = None, filter_bytes: int | None = None, memory=None, progress=None,
                plan: MiningPlan | None = None, chunks: int | None = None,
                buffer_start: int | None = None) -> MiningResult:
    """Mine the maximal frequent phrases and the coverage of a token array.

    Parameters
    ----------
    tokens : array of int
        Token ids (0 .. vocab_size - 1), documents concatenated.
    doc_offsets : array of int
        ``len = docs + 1``; document ``d`` is ``tokens[doc_offsets[d]:doc_offsets[d+1]]``.
    vocab_size : int
    sigma : int
        Minimum number of documents (>= 1).
    min_len : int
        Minimum phrase length L (>= 2).
    algo : str
        ``bloomspan`` (default), ``fhk`` or ``auto`` (see :func:`plan_mining`).
    workers : int, optional
        Threads for the counting filter and the growth (1 = the serial twin;
        default :func:`engine.config.default_workers`).
    filter_bytes : int, optional
        Counters per worker (a power of two); default
        :func:`engine.steps.filter_bytes_for`, or the out-of-core size.
    memory : int or str, optional
        The memory budget (default :func:`engine.memory.budget`).
    progress : callable(str, float) or None
        Called with a stage name and the fraction done.
    plan : MiningPlan, optional
        A plan already made for these arrays (the run's); else one is made.
    chunks, buffer_start : int, optional
        Growth chunks and initial buffer sizes (tests make them small so that
        the multi-chunk merge and every regrowth path run).

    Returns
    -------
    MiningResult
    """
    tokens, doc_offsets = check_input(tokens, doc_offsets, sigma, min_len, wide=True)
    plan = plan or plan_mining(tokens, doc_offsets, sigma, min_len, algo, memory)
    vocab_size = max(int(vocab_size), 1)
    if plan.sigma1:
        return mine_sigma1(tokens, doc_offsets, vocab_size, min_len, progress)
    if plan.used == "fhk":
        return mine_fhk(tokens, doc_offsets, vocab_size, sigma, min_len, progress=progress)
    workers = workers or default_workers()
    fbytes = filter_bytes or max(filter_bytes_for(tokens.shape[0]), plan.memory.filter_bytes)
    if fbytes & (fbytes - 1):
        raise ValueError("filter_bytes must be a power of two")
    if plan.out_of_core:
        return mine_out_of_core(tokens, doc_offsets, vocab_size, sigma, min_len, workers=workers,
                                filter_bytes=fbytes, plan=plan.memory, progress=progress, chunks=chunks,
                                buffer_start=buffer_start)
    return mine_bloomspan(tokens, doc_offsets, vocab_size, sigma, min_len, workers=workers, filter_bytes=fbytes,
                          memory=plan.memory.as_dict(), progress=progress, chunks=chunks, buffer_start=buffer_start)


def warm_up(plan: MiningPlan | None = None) -> float:
    """Compile (or load from numba's cache) the kernels a plan runs, on a tiny
    input with read-only arrays as a store's memory-mapped arrays are: numba
    compiles read-only and writable arrays apart, and warming the writable
    kind only left the first real run of a process compiling inside "grow".
    Returns the seconds it took (the summary's ``compile_seconds``)."""
    t = time.perf_counter()
    tokens = np.array([0, 1, 0, 1], np.int32)
    offsets = np.array([0, 2, 4], np.int64)
    for a in (tokens, offsets):
        a.flags.writeable = False
    sigma = 1 if plan is not None and plan.sigma1 else 2
    if plan is not None and plan.out_of_core:  # its chunk views: read-only tokens, fresh offsets
        tiny = M.plan(4, 1)
        for min_len, excerpt in ((2, 0), (3, 0), (2, 1 << 20), (3, 1 << 20)):  # grown on the tokens or an excerpt
            mine_tokens(tokens, offsets, 2, sigma, min_len, workers=1, filter_bytes=1 << 10,
                        plan=MiningPlan("bloomspan", "bloomspan", memory=replace(tiny, excerpt_bytes=excerpt)))
    else:
        used = plan.used if plan is not None else "bloomspan"
        mine_tokens(tokens, offsets, 2, sigma, 2, workers=1, filter_bytes=1 << 10,
                    plan=MiningPlan(used, used, sigma1=sigma == 1, memory=M.plan(4, 1 << 30)))
    return time.perf_counter() - t
