"""What pages change: decisions, runs, detections, snapshots, exports.

Each long operation runs :mod:`engine.api` as a job (:mod:`engine.ui.jobs`):
one per request (a second request for the same work attaches to the running
one), followed by a progress bar with a Cancel button; errors (a cancelled
job's too) come back as :class:`engine.errors.BoilerscopeError` for the page
to show.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil

import streamlit as st

from .. import api
from ..constants import ALL_SNAPSHOTS, DEFAULT_MAX_SLOT
from ..neardup import DedupConfig
from . import data
from . import jobs
from .jobs import Job

#: Decision batches a session can undo.
UNDO_DEPTH = 50


def decide(text: str, decision: str | None, note: str = "", scope: str = ALL_SNAPSHOTS) -> None:
    """Mark a phrase or template noise / keep / unsure (None clears), for all
    snapshots (``*``) or one."""
    decide_all([text], decision, note, scope)


def decide_all(texts: list[str], decision: str | None, note: str = "", scope: str = ALL_SNAPSHOTS) -> None:
    """One decision for several texts (a block's members, ticked rows), in one
    transaction; the batch can be undone (:func:`undo`)."""
    s = data.store()
    texts = list(dict.fromkeys(texts))
    before = s.decisions_at(texts, scope)
    s.set_decisions([(t, decision, note) for t in texts], scope)
    stack = st.session_state.setdefault("bs.undo", [])
    stack.append((scope, decision, [(t, *before.get(t, (None, ""))) for t in texts]))
    del stack[:-UNDO_DEPTH]


def can_undo() -> str | None:
    """What :func:`undo` would take back (a line for the button's help), or None."""
    stack = st.session_state.get("bs.undo") or []
    if not stack:
        return None
    scope, decision, items = stack[-1]
    return f"{decision or 'clear'} on {len(items)} text{'s' if len(items) > 1 else ''}"


def undo() -> None:
    """Take this session's last decision batch back (each text gets the
    decision and note it had before, or none)."""
    stack = st.session_state.get("bs.undo") or []
    if stack:
        scope, _, items = stack.pop()
        data.store().set_decisions(items, scope)


def delete_run(run_id: int) -> None:
    data.store().delete_run(int(run_id))
    data.forget()


#: The session key holding the id of the job a page started or follows, by kind.
SLOTS = {"mine": "mine.job", "ingest": "load.job", "detect": "duplicates.job", "clean": "export.job"}


def ingest(path: str, label: str, origin: str | None = None, owned_dir: str | None = None) -> tuple[str, bool]:
    """Ingest a snapshot file, the bar following the bytes read: (snapshot id,
    created); ``origin`` is recorded as its source (an upload's name, not its
    temporary file).  ``owned_dir``: a temporary folder holding ``path`` that
    the job removes when it ends (an upload's copy outlives the page's run)."""
    s = data.store()

    def work(cb):
        try:
            return api.ingest(path, store=s, progress=cb, origin=origin)
        finally:
            if owned_dir:
                shutil.rmtree(owned_dir, ignore_errors=True)
    return jobs.run(("ingest", s.path, path, origin), "ingest", None, f"Ingesting {label}", work,
                    slot=SLOTS["ingest"], status=True)


def start_mine(sid: str, sigma: int, min_len: int, algo: str, max_slot: int = 0) -> Job:
    """The job mining a snapshot of the store (templates too when
    ``max_slot``): a new one, or the one already running these parameters."""
    s = data.store()
    label = f"Mining sigma {sigma}, L {min_len}" + (" with templates" if max_slot else "")
    return jobs.start(
        ("mine", s.path, sid, int(sigma), int(min_len), algo, int(max_slot)), "mine", sid, label,
        lambda cb: api.mine(s.path, int(sigma), int(min_len), algo=algo, store=s, snapshot=sid, progress=cb,
                            templates=bool(max_slot), max_slot=int(max_slot) or DEFAULT_MAX_SLOT),
        slot=SLOTS["mine"])


def mine(sid: str, sigma: int, min_len: int, algo: str, max_slot: int = 0):
    """Mine (or attach to the job mining) a snapshot and follow it; returns the Run."""
    return jobs.follow(start_mine(sid, sigma, min_len, algo, max_slot), slot=SLOTS["mine"])


def pending(kind: str, sid: str | None, attach: bool = True) -> Job | None:
    """The job of ``kind`` ("mine", "detect", "clean", "ingest") this session
    started or follows, finished or not; else (``attach``) one running on the
    snapshot: a page opened or reloaded mid-job shows it."""
    return jobs.pending(kind, sid, SLOTS[kind], attach)


def follow(job: Job, kind: str, **kwargs):
    """Follow a job to its end (progress, Cancel); its result or its error, once."""
    return jobs.follow(job, slot=SLOTS[kind], **kwargs)


def detect(sid: str, run_id: int | None, raw: bool, config: DedupConfig) -> api.Dedup:
    """Near-duplicate detection on the raw text or with ``run_id``'s boilerplate removed."""
    s = data.store()
    return jobs.run(("detect", s.path, sid, None if raw else run_id, raw, repr(config)), "detect", sid,
                    "Detecting near-duplicates",
                    lambda cb: api.dedup(s.path, run=None if raw else run_id, raw=raw, config=config, store=s,
                                         snapshot=sid, progress=cb), slot=SLOTS["detect"])


def cleaned_path(sid: str, run_id: int, noise: list[str], keep: list[str]) -> str:
    """Where the cleaned snapshot of these decisions goes: exports/ beside the
    store, named by the snapshot, the run and a digest of the decisions."""
    digest = hashlib.sha256(json.dumps([sorted(noise), sorted(keep)]).encode()).hexdigest()[:8]
    return os.path.join(os.path.dirname(data.store().path), "exports", f"cleaned-{sid}-run{run_id}-{digest}.parquet")


def export_cleaned(sid: str, run_id: int, noise: list[str], keep: list[str]):
    """Write the cleaned snapshot beside the store (exports/): (path, before/after figures).
    The file is named by the snapshot, the run and a digest of the decisions,
    so two decision sets never write one file."""
    s = data.store()
    path = cleaned_path(sid, run_id, noise, keep)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return jobs.run(("clean", path), "clean", sid, "Cleaning",
                    lambda cb: (path, api.clean(s.path, run=run_id, stoplist=(noise, keep), out=path, force=True,
                                                store=s, progress=cb)), slot=SLOTS["clean"])
