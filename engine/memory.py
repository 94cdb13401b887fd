"""The memory budget of a run: sizes, the default budget, the plan, pages.

``boilerscope mine --memory 8GB`` (or ``BOILERSCOPE_MEMORY``) sets how much
memory a run may take.  :func:`plan` compares it with what the in-memory
pipeline needs (:data:`IN_MEMORY_BYTES_PER_TOKEN`, measured by ``make
bench-scale``) and, when the snapshot does not fit, sizes the out-of-core
pipeline of :mod:`engine.outofcore`: the tokens read in chunks of documents,
the kept starts bucketed one group of first tokens at a time.

The token arrays of a store are memory-mapped files: the pages a scan has
read count in the process' resident memory until the kernel needs them
back.  :class:`Pager` gives them back at once (``madvise(MADV_DONTNEED)``; the
file is unchanged and a later read maps the page again from the page cache
or the disk), so that a chunked scan keeps only its chunk resident.
"""
from __future__ import annotations

import logging
import mmap
import os
import re

import numpy as np
from dataclasses import dataclass

from .errors import BoilerscopeError

log = logging.getLogger(__name__)

#: Environment variable holding the default budget (same syntax as ``--memory``).
ENV = "BOILERSCOPE_MEMORY"
#: Share of the machine's memory taken when no budget is given.
DEFAULT_SHARE = 0.5
#: Peak resident bytes per token of an in-memory ``mine`` (measured: 16.7 at
#: 100M generated tokens, 13.2 at 1B; rounded up).
IN_MEMORY_BYTES_PER_TOKEN = 17
#: Peak resident bytes per token of an in-memory ``mine --templates``
#: (measured: 75 on webdocs' 48M tokens, the libraries included: the
#: template miner's a-gram sort and documents' array, the grown templates'
#: occurrences; rounded up).
IN_MEMORY_TEMPLATE_BYTES_PER_TOKEN = 80
#: Largest chunk of the out-of-core scans, in tokens (1 byte per token of
#: start flags, plus the chunk's token pages).
MAX_CHUNK_TOKENS = 64 << 20

_UNITS = {"": 1, "B": 1,
          "K": 10**3, "KB": 10**3, "M": 10**6, "MB": 10**6, "G": 10**9, "GB": 10**9, "T": 10**12, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_size(text, what: str | None = None) -> int:
    """Bytes of a size such as ``8GB``, ``512MB``, ``1.5GiB`` or ``1000000``
    (KB, MB, GB, TB are powers of 1000; KiB, MiB, GiB, TiB of 1024).
    ``what`` names where the size came from in an error (default: the
    ``memory`` parameter)."""
    params = () if what else ("memory",)
    what = what or "{memory}"
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([A-Za-z]*)\s*", str(text))
        unit = m.group(2).upper() if m else None
        if m is None or unit not in _UNITS:
            raise BoilerscopeError(f"{what} must be a size such as 8GB, 512MB or 2GiB (got '{text}')", *params)
        value = int(float(m.group(1)) * _UNITS[unit])
    if value < 1:
        raise BoilerscopeError(f"{what} must be at least 1 byte (got '{text}')", *params)
    return value


def machine_memory() -> int:
    """Physical memory, or the cgroup's limit when it is lower."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            limit = fh.read().strip()
        if limit.isdigit():
            total = min(total, int(limit))
    except OSError:
        pass
    return int(total)


def budget(value=None) -> int:
    """The budget in bytes: ``value``, else ``$BOILERSCOPE_MEMORY``, else
    :data:`DEFAULT_SHARE` of :func:`machine_memory`."""
    if value is not None:
        return parse_size(value)
    env = os.environ.get(ENV)
    if env:
        return parse_size(env, ENV)
    return int(machine_memory() * DEFAULT_SHARE)


@dataclass(frozen=True)
class Plan:
    """How a run fits its budget.

    Attributes
    ----------
    budget : int
        Bytes.
    out_of_core : bool
        False when the in-memory pipeline fits.
    chunk_tokens : int
        Tokens per chunk of the out-of-core scans (a chunk holds at least
        one document).
    group_entries : int
        Kept starts bucketed at once (16 bytes each; a group holds at least
        one first token).
    release_at : int
        Resident bytes above which the token pages are given back between
        growth chunks.
    filter_bytes : int
        Counters of the out-of-core filters (0: the in-memory size, see
        :func:`engine.bloomspan.filter_bytes_for`).
    excerpt_bytes : int
        Largest excerpt of the token array the growth reads instead of the
        array (:class:`engine.outofcore.Excerpt`); a larger one is not made
        and the growth reads the memory-mapped array.
    """
    budget: int
    out_of_core: bool
    chunk_tokens: int = 0
    group_entries: int = 0
    release_at: int = 0
    filter_bytes: int = 0
    excerpt_bytes: int = 0

    def as_dict(self) -> dict:
        return {"budget_bytes": self.budget, "out_of_core": self.out_of_core,
                "chunk_tokens": self.chunk_tokens or None, "group_entries": self.group_entries or None,
                "filter_bytes": self.filter_bytes or None, "excerpt_bytes": self.excerpt_bytes or None}


def out_of_core_filter_bytes(n_tokens: int, budget_bytes: int) -> int:
    """Counters of the out-of-core filters: a power of two near a third of
    the token count, at most a sixteenth of the budget, at least 16 MiB; 0
    (the in-memory size) up to 48M tokens, where 16 MiB is that size.

    The in-memory size (at most 16 MiB, to stay in the L3 cache) saturates
    past a few hundred million tokens (see :mod:`engine.outofcore`).  A
    counter array of at most a sixteenth of the budget (four of them live
    at once: two workers, bigrams and L-grams) keeps the false positives,
    and so the groups, proportionate."""
    if n_tokens <= 3 << 24:
        return 0
    cap = max(budget_bytes // 16, 1 << 24)
    size = 1 << 24
    while size * 3 < n_tokens and size * 2 <= cap:
        size <<= 1
    return size


def plan(n_tokens: int, memory=None) -> Plan:
    """The plan of a run over ``n_tokens`` tokens within ``memory`` (a size,
    bytes, or None for :func:`budget`'s default)."""
    from .result import pos_dtype
    b = budget(memory)
    # past 2^31 - 2 tokens positions are int64: 4 more bytes per kept start
    wide = pos_dtype(n_tokens).itemsize == 8
    if n_tokens * (IN_MEMORY_BYTES_PER_TOKEN + (1 if wide else 0)) <= b:
        return Plan(b, False)
    return _out_of_core(n_tokens, b, wide)


def template_plan(n_tokens: int, memory=None) -> Plan:
    """The plan of a ``--templates`` run's template miner over ``n_tokens``
    tokens within ``memory``: in memory when
    :data:`IN_MEMORY_TEMPLATE_BYTES_PER_TOKEN` per token fit, else out of
    core with :func:`plan`'s sizes (:class:`engine.templates.OutOfCore`)."""
    from .result import pos_dtype
    b = budget(memory)
    if n_tokens * IN_MEMORY_TEMPLATE_BYTES_PER_TOKEN <= b:
        return Plan(b, False)
    return _out_of_core(n_tokens, b, pos_dtype(n_tokens).itemsize == 8)


def _out_of_core(n_tokens: int, b: int, wide: bool) -> Plan:
    # a sixteenth of the budget for the chunk's start flags and token pages
    # (5 bytes per token), a quarter for the group's kept starts (16 bytes
    # each, 20 with int64 positions)
    return Plan(b, True, chunk_tokens=int(min(max(b // 16, 1), MAX_CHUNK_TOKENS)),
                group_entries=int(max(b // (80 if wide else 64), 1)), release_at=b // 2,
                filter_bytes=out_of_core_filter_bytes(n_tokens, b), excerpt_bytes=b // 4)


def resident_bytes() -> int:
    """Resident memory of this process now (0 when unknown)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * mmap.PAGESIZE
    except (OSError, ValueError, IndexError):
        return 0


class Pager:
    """Gives back the resident pages of a memory-mapped array (no-op for an
    array in memory)."""

    def __init__(self, arr):
        self._mm = None
        x = arr
        while x is not None and self._mm is None:
            self._mm = getattr(x, "_mmap", None)
            x = getattr(x, "base", None)
        self.releases = 0

    @property
    def mapped(self) -> bool:
        return self._mm is not None

    def release(self) -> None:
        if self._mm is not None and hasattr(self._mm, "madvise"):
            try:
                self._mm.madvise(mmap.MADV_DONTNEED)
                self.releases += 1
            except (OSError, ValueError) as exc:  # a closed map: nothing resident
                log.debug("madvise: %s", exc)

    def release_above(self, limit: int) -> None:
        if self._mm is not None and limit and resident_bytes() > limit:
            self.release()


def gather(arr, index, block: int = 1 << 20):
    """``arr[index]`` read in blocks of ``block`` indices, giving back the
    pages of a memory-mapped ``arr`` after each block: gathering at scattered
    positions of a mapped file (the spans of the covered ranges) would
    otherwise keep every page it touched resident, which on a billion-token
    store is the whole file.  ``index`` sorted makes each block read one
    region of the file."""
    index = np.asarray(index)
    pager = Pager(arr)
    if not pager.mapped or index.shape[0] <= block:
        out = np.asarray(arr)[index]
        pager.release()
        return out
    src = np.asarray(arr)
    out = np.empty(index.shape[0], src.dtype)
    for i in range(0, index.shape[0], block):
        out[i:i + block] = src[index[i:i + block]]
        pager.release()
    return out
