"""Long work in the app: one job per request, shared by every session.

A job (mining a run, ingesting a file, detecting near-duplicates, building a
cleaned snapshot) runs in a worker thread of the server process, registered
under a key made of what it computes (the store, the snapshot and the
parameters).  A second request for the same key while the job runs (a second
tab, a double click, a page reloaded mid-mine) attaches to it and follows its
progress instead of starting another; a page opened while a job of its kind
runs on its snapshot shows that job (:func:`running`).

A session keeps the id of the job it started or follows (``slot``, a key of
``st.session_state``), so a rerun in the middle (any click, Cancel included)
or a visit to another page and back finds the job again, finished or not, and
shows its result or its error once (:func:`pending`, :func:`follow`).

Progress is the engine's one protocol, ``progress(stage, fraction)``: the job
is that callable; it records the last report, and the script thread redraws a
bar from it (Streamlit calls stay in the script thread).  Cancelling sets a
flag that the job's next progress report turns into :class:`Cancelled`, so
the engine stops between two steps of its Python loops; the engine makes no
report after it commits a result (a run, a snapshot, a cleaned file), so a
cancelled job has stored nothing of its own result.
"""
from __future__ import annotations

import itertools
import logging
import threading
import time
from concurrent.futures import Future

import streamlit as st

from ..errors import BoilerscopeError, first_line
from . import render

log = logging.getLogger(__name__)

#: Seconds between two redraws of a job's bar.
TICK = 0.15
#: Finished jobs stay readable this long (a session that started or attached
#: to one picks its result up on its next rerun).
KEEP_SECONDS = 600.0


class Cancelled(BoilerscopeError):
    """The analyst cancelled the job."""


class Job:
    """One piece of long work: the engine's ``progress`` callable, its
    future, and a cancel flag."""

    def __init__(self, job_id: int, key: tuple, kind: str, snapshot: str | None, label: str,
                 cancellable: bool = True):
        self.id, self.key, self.kind, self.snapshot, self.label = job_id, key, kind, snapshot, label
        self.cancellable = cancellable
        self.stage, self.fraction = "starting", 0.0
        self.cancelled = threading.Event()
        self.future: Future | None = None
        self.started = time.monotonic()
        self.ended: float | None = None

    def __call__(self, stage: str, fraction: float) -> None:
        if self.cancelled.is_set():
            raise Cancelled(self.cancel_message())
        self.stage, self.fraction = stage, min(max(float(fraction), 0.0), 1.0)

    def cancel(self) -> None:
        if self.cancellable:
            self.cancelled.set()

    def cancel_message(self) -> str:
        return f"{self.label}: cancelled before it stored its result"

    @property
    def done(self) -> bool:
        return self.future is not None and self.future.done()

    def text(self) -> str:
        if self.cancelled.is_set() and not self.done:
            return f"{self.label}: cancelling…"
        return f"{self.label}: {self.stage} {self.fraction:.0%}"

    def result(self):
        """The job's result; its error is raised (a cancelled job's as :class:`Cancelled`)."""
        try:
            return self.future.result()
        except Cancelled:
            raise
        except BaseException as exc:
            if self.cancelled.is_set():
                raise Cancelled(self.cancel_message()) from None
            if isinstance(exc, BoilerscopeError):
                raise
            raise BoilerscopeError(f"{self.label} failed: {first_line(exc)}") from exc


class Jobs:
    """The process-wide registry of jobs (thread-safe)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._jobs: dict[int, Job] = {}
        self._ids = itertools.count(1)

    def start(self, key: tuple, kind: str, snapshot: str | None, label: str, fn,
              cancellable: bool = True) -> tuple[Job, bool]:
        """The running job of ``key`` (attached: False), or a new one running
        ``fn(progress)`` (True)."""
        with self._lock:
            self._forget_old()
            for job in self._jobs.values():
                if job.key == key and not job.done:
                    return job, False
            job = Job(next(self._ids), key, kind, snapshot, label, cancellable)
            self._jobs[job.id] = job
            job.future = Future()
            # a daemon thread: a server stopped mid-job does not wait for it
            threading.Thread(target=self._run, args=(job, fn), name=f"boilerscope-job-{job.id}",
                             daemon=True).start()
            return job, True

    @staticmethod
    def _run(job: Job, fn):
        try:
            result = fn(job)
        except BaseException as exc:
            if not isinstance(exc, BoilerscopeError):  # a bug: its traceback goes to the server's log
                log.exception("%s failed", job.label)
            job.ended = time.monotonic()
            job.future.set_exception(exc)
        else:
            job.ended = time.monotonic()
            job.future.set_result(result)

    def get(self, job_id: int | None) -> Job | None:
        """A job by id, finished or not (finished ones are kept KEEP_SECONDS)."""
        with self._lock:
            self._forget_old()
            return self._jobs.get(job_id) if job_id is not None else None

    def running(self, kind: str | None = None, snapshot: str | None = None) -> list[Job]:
        """Jobs not finished yet, oldest first (of one kind, on one snapshot, when given)."""
        with self._lock:
            self._forget_old()
            return [j for j in self._jobs.values() if not j.done and (kind is None or j.kind == kind)
                    and (snapshot is None or j.snapshot == snapshot)]

    def _forget_old(self) -> None:
        now = time.monotonic()
        for job_id in [i for i, j in self._jobs.items() if j.done and j.ended and now - j.ended > KEEP_SECONDS]:
            del self._jobs[job_id]


@st.cache_resource(show_spinner=False)
def registry() -> Jobs:
    """The server's one registry (shared by every session)."""
    return Jobs()


def follow(job: Job, *, slot: str | None = None, status: bool = False, label: str | None = None):
    """Draw ``job``'s progress with a Cancel button until it ends (inside an
    ``st.status`` box when ``status``), then return its result or raise its
    error; either is shown once: ``slot`` (the session's job key) is cleared.
    Any other click reruns the page, which finds the job again (:func:`pending`)."""
    label = render.md(label or job.label)
    box = st.status(label, expanded=True) if status else st.container()
    try:
        with box:
            button = st.empty()
            if job.cancellable and not job.done:
                button.button("Cancel", key=f"jobs.cancel.{job.id}", on_click=job.cancel,
                              disabled=job.cancelled.is_set(), help="stop this job; it stores nothing")
            bar = st.progress(job.fraction, text=render.md(job.text()))
            while not job.done:
                bar.progress(job.fraction, text=render.md(job.text()))
                time.sleep(TICK)
            button.empty()  # the job has ended: nothing left to cancel
            try:
                result = job.result()
            except BoilerscopeError:
                if status:
                    box.update(label=f"{label}: {'cancelled' if job.cancelled.is_set() else 'failed'}",
                               state="error")
                raise
            bar.progress(1.0, text=f"{label}: done")
            if job.cancelled.is_set():
                st.warning("Cancel came after the job's last step: its result was stored.")
            if status:
                box.update(label=f"{label}: done", state="complete", expanded=False)
    except BoilerscopeError:
        if slot:
            st.session_state.pop(slot, None)
        raise
    if slot:
        st.session_state.pop(slot, None)
    return result


def start(key: tuple, kind: str, snapshot: str | None, label: str, fn, *, slot: str,
          cancellable: bool = True) -> Job:
    """Start ``fn(progress)`` under ``key``, or attach to the job already
    running it; the session keeps its id in ``slot``."""
    job, _ = registry().start(key, kind, snapshot, label, fn, cancellable)
    st.session_state[slot] = job.id
    return job


def run(key: tuple, kind: str, snapshot: str | None, label: str, fn, *, slot: str, status: bool = False):
    """:func:`start` and :func:`follow` to the end."""
    return follow(start(key, kind, snapshot, label, fn, slot=slot), slot=slot, status=status)


def pending(kind: str, snapshot: str | None, slot: str, attach: bool = True) -> Job | None:
    """The job this session started or follows (its id in ``slot``), finished
    or not; else (with ``attach``) the oldest running job of ``kind`` on
    ``snapshot``, which the session then follows (a page reloaded mid-job)."""
    job = registry().get(st.session_state.get(slot))
    if job is None:
        st.session_state.pop(slot, None)
        found = registry().running(kind, snapshot) if attach else []
        if found:
            job = found[0]
            st.session_state[slot] = job.id
    return job
