"""Bootstrap of every page: open the store, load the demo on first start,
restore the view state; and the folders the app may read snapshots from."""
from __future__ import annotations

import os
import threading

import streamlit as st

from engine.api import DEFAULT_MIN_LEN, DEFAULT_SIGMA, ingest, mine
from engine.errors import BoilerscopeError
from engine.store import Store
from pages import conn, state

DATA_DIR = os.path.join(conn.ROOT, "data")
DEMO = os.path.join(DATA_DIR, "demo.parquet")
_BOOT_LOCK = threading.Lock()


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


SNAPSHOT_SUFFIXES = (".parquet", ".jsonl", ".csv")


def snapshot_files(limit: int = 1000, depth: int = 3) -> list[str]:
    """Snapshot files under the allowed folders (scanned on every call, so a
    file copied there while the app runs is listed without a restart)."""
    found = []
    for root in allowed_dirs():
        base = root.rstrip(os.sep).count(os.sep)
        for folder, dirs, files in os.walk(root):
            if folder.count(os.sep) - base >= depth:
                dirs[:] = []
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.lower().endswith(SNAPSHOT_SUFFIXES):
                    try:
                        found.append(allowed_file(os.path.join(folder, name)))
                    except BoilerscopeError:
                        continue
                    if len(found) >= limit:
                        return found
    return sorted(set(found))


def setup() -> Store:
    """Open the store, make sure the demo is there, restore and share the view state."""
    try:
        s = conn.store()
    except BoilerscopeError as exc:
        st.error(str(exc))
        st.stop()
    state.restore()
    _ensure_demo(s)
    sid = state.get("snapshot")
    if sid is None or not s.has_snapshot(sid):
        state.set_snapshot(s.latest_snapshot() if s.snapshots().height else None)
        sid = state.get("snapshot")
    run = state.get("run")
    if run is not None and (s.run(run) or {}).get("snapshot_id") != sid:
        state.set_run(None)
    if state.get("run") is None and sid is not None:
        runs = s.runs(sid)
        if runs.height:
            state.set_run(int(runs["run_id"][-1]))
    state.share()
    return s


def _ensure_demo(s: Store) -> None:
    """First start: ingest the demo snapshot and mine it with the defaults,
    templates with slots included (so every page has something to show)."""
    with _BOOT_LOCK:
        if s.snapshots().height or not os.path.exists(DEMO):
            return
        with st.status("First start: loading and mining the demo snapshot…", expanded=False) as status:
            sid, _ = ingest(DEMO, store=s)
            run = mine(s.path, DEFAULT_SIGMA, DEFAULT_MIN_LEN, store=s, snapshot=sid, templates=True)
            status.update(label=f"Demo ready: run {run.run_id}", state="complete")
        state.set_snapshot(sid)
        state.set_run(run.run_id)


def need_run(s: Store) -> tuple[str, int]:
    """The active snapshot and run, or stop the page with a hint."""
    sid, run = state.get("snapshot"), state.get("run")
    if sid is None:
        st.info("No snapshot yet: load one on the Load page.")
        st.stop()
    if run is None:
        st.info("This snapshot has no run yet: mine it on the Mine page.")
        st.stop()
    return sid, run
