"""Long work in the app: a worker thread and a progress bar that follows it.

The engine reports progress as ``progress(stage, fraction)`` (fraction in
[0, 1]) from the worker thread; the callback only records the last report, and
the script thread redraws the bar from it (Streamlit calls stay in the script
thread).
"""
from __future__ import annotations

import contextlib
import time
from concurrent.futures import ThreadPoolExecutor

import streamlit as st

#: Seconds between two redraws of the bar.
TICK = 0.15


class Tracker:
    """The last ``(stage, fraction)`` reported; the engine's progress callable."""

    def __init__(self):
        self.stage, self.fraction = "starting", 0.0

    def __call__(self, stage: str, fraction: float) -> None:
        self.stage, self.fraction = stage, min(max(float(fraction), 0.0), 1.0)

    def text(self, label: str) -> str:
        return f"{label}: {self.stage} {self.fraction:.0%}"


def run_with_progress(fn, label: str, *, status: bool = False):
    """Run ``fn(progress)`` in a worker thread while a progress bar follows
    it (inside an ``st.status`` box when ``status``); kernels release the GIL,
    so the app keeps serving other sessions meanwhile.  Returns ``fn``'s
    result; its exception is raised here."""
    track = Tracker()
    box = st.status(label, expanded=True) if status else contextlib.nullcontext()
    with box:
        bar = st.progress(0.0, text=label)
        with ThreadPoolExecutor(1) as ex:
            fut = ex.submit(fn, track)
            while not fut.done():
                bar.progress(track.fraction, text=track.text(label))
                time.sleep(TICK)
        try:
            result = fut.result()
        except BaseException:
            if status:
                box.update(label=f"{label}: failed", state="error")
            raise
        bar.progress(1.0, text=f"{label}: done")
        if status:
            box.update(label=f"{label}: done", state="complete", expanded=False)
    return result
