"""Shared dashboard plumbing: the store connection, cached queries, view state.

Pages stay thin: they read the view state, call these helpers or the engine,
and draw.  Choices live in non-widget session keys (``bs.*``) and are written
to ``st.query_params`` on every page, so a copied URL reopens the same view.
"""
from __future__ import annotations

import html
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
import streamlit as st

from engine import views
from engine.api import DEFAULT_MIN_LEN, DEFAULT_SIGMA, ingest, mine
from engine.errors import BoilerscopeError
from engine.store import Store

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA_DIR = os.path.join(ROOT, "data")
DEMO = os.path.join(DATA_DIR, "demo.parquet")
STATE = ("snapshot", "run", "sigma", "min_len", "site", "doc", "phrase")
INT_STATE = ("run", "sigma", "min_len", "doc")
_BOOT_LOCK = threading.Lock()


def db_path() -> str:
    return os.environ.get("BOILERSCOPE_DB", os.path.join(ROOT, ".boilerscope", "app.duckdb"))


def allowed_dirs() -> list[str]:
    extra = [p for p in os.environ.get("BOILERSCOPE_ALLOWED_DIRS", "").split(os.pathsep) if p and "\x00" not in p]
    return [os.path.realpath(p) for p in [DATA_DIR, *extra]]


def allowed_file(path: str) -> str:
    """The real path of a snapshot file the app may read, or a BoilerscopeError
    saying why not: outside the allowed folders (after following symlinks),
    a NUL byte, missing, or not a regular file (a FIFO would hang the page)."""
    import stat
    if not path or "\x00" in path:
        raise BoilerscopeError("the path is empty or holds a NUL byte; give a plain file path")
    real = os.path.realpath(path)
    dirs = allowed_dirs()
    if not any(os.path.commonpath([real, d]) == d for d in dirs):
        raise BoilerscopeError(f"{path} is outside the allowed folders ({', '.join(dirs)}); "
                               "copy it into data/ or set BOILERSCOPE_ALLOWED_DIRS")
    try:
        mode = os.stat(real).st_mode
    except OSError:
        raise BoilerscopeError(f"{path}: file not found; give the path of a snapshot file") from None
    if not stat.S_ISREG(mode):
        raise BoilerscopeError(f"{path} is not a regular file; give a .parquet, .jsonl or .csv file")
    return real


@st.cache_resource(show_spinner=False)
def _store(path: str) -> Store:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return Store(path)


def store() -> Store:
    return _store(db_path())


def get(key: str, default=None):
    return st.session_state.get(f"bs.{key}", default)


def put(key: str, value) -> None:
    st.session_state[f"bs.{key}"] = value


def setup() -> Store:
    """Open the store, make sure the demo is there, restore and share the view state."""
    try:
        s = store()
    except BoilerscopeError as exc:
        st.error(str(exc))
        st.stop()
    if "bs.init" not in st.session_state:
        params = st.query_params
        for key in STATE:
            if key in params:
                value = params[key]
                if key in INT_STATE:
                    try:
                        value = int(value)
                    except ValueError:
                        continue
                put(key, value)
        st.session_state["bs.init"] = True
    _ensure_demo(s)
    sid = get("snapshot")
    if sid is None or not s.has_snapshot(sid):
        sid = s.latest_snapshot() if s.snapshots().height else None
        put("snapshot", sid)
    run = get("run")
    if run is not None and (s.run(run) or {}).get("snapshot_id") != sid:
        put("run", None)
    if get("run") is None and sid is not None:
        runs = s.runs(sid)
        if runs.height:
            put("run", int(runs["run_id"][-1]))
    share()
    return s


def share() -> None:
    """Write the view state to the URL."""
    for key in STATE:
        value = get(key)
        if value is None or value == "":
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)


def _ensure_demo(s: Store) -> None:
    """First start: ingest the demo snapshot and mine it with the defaults."""
    with _BOOT_LOCK:
        if s.snapshots().height or not os.path.exists(DEMO):
            return
        with st.status("First start: loading and mining the demo snapshot…", expanded=False) as status:
            sid, _ = ingest(DEMO, store=s)
            run = mine(s.path, DEFAULT_SIGMA, DEFAULT_MIN_LEN, store=s, snapshot=sid)
            status.update(label=f"Demo ready: run {run.run_id}", state="complete")
        put("snapshot", sid)
        put("run", run.run_id)


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
@st.cache_data(show_spinner=False, max_entries=64)
def run_summary(db: str, run_id: int) -> dict:
    return _store(db).run(run_id) or {}


@st.cache_data(show_spinner=False, max_entries=64)
def snapshot_info(db: str, sid: str) -> dict:
    return views.snapshot_info(_store(db), sid)


@st.cache_data(show_spinner=False, max_entries=64)
def site_list(db: str, sid: str) -> list[str]:
    return views.site_list(_store(db), sid)


def decisions_map(s: Store) -> dict[str, str]:
    df = s.decisions()
    return dict(zip(df["phrase"].to_list(), df["decision"].to_list()))


COLOURS = {"noise": "#f4a6a6", "keep": "#a8e6a1", "unsure": "#ffd27f", None: "#fff3a3"}


def highlight_html(text: str, spans: list[dict], decisions: dict[str, str]) -> str:
    """The text with covered spans marked; every piece of document text is
    escaped (document text is untrusted).  Overlapping spans are split into
    pieces, each explained by the longest span covering it."""
    text = text or ""
    bounds = sorted({0, len(text), *[s["char_start"] for s in spans], *[s["char_end"] for s in spans]})
    out = []
    for a, b in zip(bounds, bounds[1:]):
        piece = html.escape(text[a:b])
        cover = [s for s in spans if s["char_start"] <= a and b <= s["char_end"]]
        if not cover:
            out.append(piece)
            continue
        best = max(cover, key=lambda s: (s["char_end"] - s["char_start"], s["phrase"]))
        decision = decisions.get(best["phrase"])
        title = html.escape(f"{best['phrase']}  (df {best['df']}, {decision or 'undecided'})", quote=True)
        out.append(f'<mark class="bs-span bs-{decision or "undecided"}" '
                   f'style="background:{COLOURS.get(decision, COLOURS[None])}" title="{title}">{piece}</mark>')
    body = "".join(out)
    return ('<div class="bs-doc" style="white-space:pre-wrap;font-family:ui-serif,Georgia,serif;'
            f'line-height:1.5;max-height:70vh;overflow:auto;border:1px solid #ddd;padding:1em">{body}</div>')


def need_run(s: Store) -> tuple[str, int]:
    """The active snapshot and run, or stop the page with a hint."""
    sid, run = get("snapshot"), get("run")
    if sid is None:
        st.info("No snapshot yet: load one on the Load page.")
        st.stop()
    if run is None:
        st.info("This snapshot has no run yet: mine it on the Mine page.")
        st.stop()
    return sid, run


def fig_config(name: str) -> dict:
    """plotly toolbar with a PNG download named after the chart."""
    return {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}}
