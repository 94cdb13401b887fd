"""Long work in the app: a worker thread and a progress bar that follows it."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import streamlit as st


def run_with_progress(fn, label: str):
    """Run ``fn(progress_callback)`` in a worker thread while a progress bar
    follows it in this (the script) thread; kernels release the GIL, so the
    app keeps serving other sessions meanwhile."""
    state = {"stage": "starting", "fraction": 0.0}

    def cb(stage, fraction):
        state["stage"], state["fraction"] = stage, fraction

    bar = st.progress(0.0, text=label)
    with ThreadPoolExecutor(1) as ex:
        fut = ex.submit(fn, cb)
        while not fut.done():
            bar.progress(min(max(state["fraction"], 0.0), 1.0), text=f"{label}: {state['stage']}")
            time.sleep(0.15)
        bar.progress(1.0, text=f"{label}: done")
        return fut.result()


# -- cached queries (runs are immutable once written) ----------------------
