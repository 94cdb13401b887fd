"""The parameters of a mining run, validated in one place.

A new run parameter is a field of :class:`RunParams` (with its check in
:meth:`RunParams.checked`), a flag in :mod:`engine.cli` and, where the
analyst sets it, a widget on the Mine page; the planner, the runner and the
summary read it from here.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from .constants import (ALGOS, DEFAULT_ALGO, DEFAULT_MAX_SLOT, DEFAULT_MIN_LEN, DEFAULT_SIGMA, MAX_COUNT,
                        MAX_SLOT_RANGE)
from .errors import BoilerscopeError
from .memory import budget as memory_budget


def parse_sigma(value, n_docs: int) -> int:
    """A count (``20``) or a share of the documents (``"0.5%"``, rounded up)."""
    text = str(value).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%", text)
    if m:
        share = float(m.group(1))
        if share <= 0 or share > 100:
            raise BoilerscopeError(f"sigma {text} is not a share between 0% and 100%")
        return max(1, math.ceil(share / 100.0 * n_docs - 1e-9))
    if re.fullmatch(r"\d+", text):
        sigma = int(text)
        if sigma < 1:
            raise BoilerscopeError("sigma must be at least 1 (a document count like 20 or a share like 0.5%)")
        if sigma > MAX_COUNT:
            raise BoilerscopeError(f"sigma {text} is larger than any snapshot can hold; give at most {MAX_COUNT}")
        return sigma
    raise BoilerscopeError(
        f"sigma '{text}' is not a number; give a document count like 20 or a share like 0.5%")


def check_min_len(min_len) -> int:
    """L as an int (at least 2)."""
    try:
        value = int(str(min_len).strip())
    except ValueError:
        raise BoilerscopeError(f"min length '{min_len}' is not a whole number; give L >= 2") from None
    if value < 2:
        raise BoilerscopeError(f"min length {value} is too small; give L >= 2")
    if value > MAX_COUNT:
        raise BoilerscopeError(f"min length {value} is longer than any document can be; give at most {MAX_COUNT}")
    return value


def check_max_slot(max_slot) -> int:
    """W, the most tokens a template's slot stands for, as an int (1 to 16)."""
    lo, hi = MAX_SLOT_RANGE
    try:
        w = int(max_slot)
    except (TypeError, ValueError):
        raise BoilerscopeError(f"{{max_slot}} {max_slot!r} is not a whole number; give {lo} to {hi}",
                               "max_slot") from None
    if not lo <= w <= hi:
        raise BoilerscopeError(f"{{max_slot}} {w} is out of range; give {lo} to {hi} tokens per slot", "max_slot")
    return w


@dataclass(frozen=True)
class RunParams:
    """What a mining run is asked for.

    Attributes
    ----------
    sigma : int or str
        Minimum document count, or a share of the documents (``"0.5%"``),
        resolved against the snapshot by :meth:`sigma_for`.
    min_len : int
        L, the least phrase length (>= 2).
    algo : str
        ``auto``, ``bloomspan`` or ``fhk`` (:mod:`engine.planner`).
    templates : bool
        Also mine the templates with slots (:mod:`engine.templates`).
    max_slot : int
        W, the most tokens a slot stands for (1..16).
    memory : int or str, optional
        The memory budget (``"8GB"``; default ``$BOILERSCOPE_MEMORY``, else
        half the machine's memory); a budget in bytes once checked.
    workers : int, optional
        Threads (default: the cores).
    """

    sigma: int | str = DEFAULT_SIGMA
    min_len: int = DEFAULT_MIN_LEN
    algo: str = DEFAULT_ALGO
    templates: bool = False
    max_slot: int = DEFAULT_MAX_SLOT
    memory: int | str | None = None
    workers: int | None = None

    def checked(self) -> RunParams:
        """The same parameters validated and normalised (bad input raises
        :class:`~engine.errors.BoilerscopeError` before anything is read)."""
        min_len = check_min_len(self.min_len)
        memory = memory_budget(self.memory)
        max_slot = check_max_slot(self.max_slot)
        parse_sigma(self.sigma, 0)
        if self.algo not in ALGOS:
            raise BoilerscopeError(f"unknown algorithm '{self.algo}'; choose one of {', '.join(ALGOS)}")
        if self.workers is not None and int(self.workers) < 0:
            raise BoilerscopeError(f"{{workers}} {self.workers} is not a count of threads (0: the cores)", "workers")
        return replace(self, min_len=min_len, max_slot=max_slot, memory=memory)

    def sigma_for(self, n_docs: int) -> int:
        """sigma as a document count for a snapshot of ``n_docs`` documents."""
        return parse_sigma(self.sigma, n_docs)
