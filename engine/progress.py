"""Progress: one protocol for every long operation.

A ``progress`` argument is a callable ``progress(stage, fraction)`` (the
stage's name and how much of it is done, 0 to 1) or None.  The engine calls
it from the Python loops around its kernels; the command line turns it into
a bar on stderr (:class:`engine.cli.StderrBars`), the dashboard into
``st.progress`` inside ``st.status``.
"""
from __future__ import annotations

from typing import Callable, Optional

#: The type of every ``progress`` argument.
ProgressFn = Optional[Callable[[str, float], None]]


def byte_progress(progress: ProgressFn, stage: str, total: int):
    """A byte counter (``advance(n)`` after each ``n`` bytes read) that
    reports ``progress(stage, bytes read / total)``; None without progress."""
    if progress is None:
        return None
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        progress(stage, min(done / total, 1.0) if total else 0.0)
    return advance


def checked(progress: ProgressFn) -> ProgressFn:
    """``progress`` when it is a callable or None, else a clear TypeError
    (``True`` asked for bars before there was one protocol: the command line
    now draws its own)."""
    if progress is None or callable(progress):
        return progress
    raise TypeError(f"progress must be a callable progress(stage, fraction) or None, not {progress!r}")
