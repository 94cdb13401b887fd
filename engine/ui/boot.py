"""Every page's first line: open the store, load the demo on first start,
restore the view state; and the folders the app may read snapshots from."""
from __future__ import annotations

import os
import stat
import threading

import streamlit as st

from .. import api
from ..constants import DEFAULT_MIN_LEN, DEFAULT_SIGMA, SNAPSHOT_SUFFIXES
from ..errors import BoilerscopeError
from ..snapshot import FORMATS, hf_dataset_files
from . import data, jobs, paths, render, state

_BOOT_LOCK = threading.Lock()


def allowed_dirs() -> list[str]:
    """The demo's folder and those of BOILERSCOPE_ALLOWED_DIRS (os.pathsep-separated)."""
    extra = [p for p in os.environ.get("BOILERSCOPE_ALLOWED_DIRS", "").split(os.pathsep) if p and "\x00" not in p]
    return [os.path.realpath(p) for p in [paths.demo_dir(), *extra]]


def allowed_file(path: str) -> str:
    """The real path of a snapshot file (or Hugging Face datasets folder) the
    app may read, or a BoilerscopeError saying why not: outside the allowed
    folders (after following symlinks), a NUL byte, missing, or not a regular
    file (a FIFO would hang the page)."""
    if not path or "\x00" in path:
        raise BoilerscopeError("the path is empty or holds a NUL byte; give a plain file path")
    real = os.path.realpath(path)
    dirs = allowed_dirs()
    if not any(os.path.commonpath([real, d]) == d for d in dirs):
        raise BoilerscopeError(f"{path} is outside the allowed folders ({', '.join(dirs)}); "
                               "copy it into one of them or set BOILERSCOPE_ALLOWED_DIRS")
    try:
        mode = os.stat(real).st_mode
    except OSError:
        raise BoilerscopeError(f"{path}: file not found; give the path of a snapshot file") from None
    if stat.S_ISDIR(mode) and hf_dataset_files(real) is not None:
        return real  # its files are checked to lie in it (engine.snapshot.hf_dataset_files)
    if not stat.S_ISREG(mode):
        raise BoilerscopeError(f"{path} is not a regular file; give a {FORMATS} file")
    return real


def demo_folder() -> str:
    """The folder of the demo snapshot (data/ of a checkout; inside the package when installed)."""
    return paths.demo_dir()


def demo_files() -> list[str]:
    """Snapshot files directly in the demo's folder (a symlink leading out of it is left out)."""
    folder = paths.demo_dir()
    found = []
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        if name.lower().endswith(SNAPSHOT_SUFFIXES):
            try:
                allowed_file(os.path.join(folder, name))
            except BoilerscopeError:
                continue
            found.append(name)
    return found


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


def setup() -> None:
    """Open the store, make sure the demo is there, restore and share the view state."""
    try:
        data.store()
    except BoilerscopeError as exc:
        st.error(str(exc))
        st.stop()
    state.restore()
    _ensure_demo()
    sid = state.get("snapshot")
    if sid is None:
        # a link without a snapshot means the default one: its other choices
        # (site, block, document...) are about it and stay
        state.put("snapshot", data.latest_snapshot())
        sid = state.get("snapshot")
    elif not data.has_snapshot(sid):
        state.set_snapshot(data.latest_snapshot())
        sid = state.get("snapshot")
    run = state.get("run")
    if run is not None and data.run(run).get("snapshot_id") != sid:
        state.set_run(None)
    if state.get("run") is None and sid is not None:
        runs = data.runs(sid)
        if runs.height:
            state.set_run(int(runs["run_id"][-1]))
    state.share()
    for job in jobs.registry().running():  # long work of any session, on every page
        st.sidebar.caption(f"Running: {render.md(job.text())}")


def _ensure_demo() -> None:
    """First start: ingest the demo snapshot and mine it with the defaults,
    templates with slots included (so every page has something to show).
    One job for the server: a second session opened meanwhile follows it."""
    demo = paths.demo_file()
    job = jobs.pending("demo", None, "boot.job")
    if job is None:
        with _BOOT_LOCK:
            if data.snapshots().height or not os.path.exists(demo):
                return
            s = data.store()

            def first_start(progress):
                sid, _ = api.ingest(demo, store=s, progress=progress)
                return api.mine(s.path, DEFAULT_SIGMA, DEFAULT_MIN_LEN, store=s, snapshot=sid, templates=True,
                                progress=progress)
            # not cancellable: a demo ingested but not mined would stay so
            job = jobs.start(("demo", s.path), "demo", None, "First start: loading and mining the demo snapshot",
                             first_start, slot="boot.job", cancellable=False)
    try:
        run = jobs.follow(job, slot="boot.job", status=True)
    except BoilerscopeError as exc:
        st.error(str(exc))
        st.stop()
    state.set_snapshot(run.snapshot_id)
    state.set_run(run.run_id)


def need_snapshot() -> str:
    """The active snapshot, or stop the page with a hint."""
    sid = state.get("snapshot")
    if sid is None:
        st.info("No snapshot yet: load one on the Load page.")
        st.stop()
    return sid


def need_run() -> tuple[str, int]:
    """The active snapshot and run, or stop the page with a hint."""
    sid, run = need_snapshot(), state.get("run")
    if run is None:
        st.info("This snapshot has no run yet: mine it on the Mine page.")
        st.stop()
    return sid, run
