"""The Python API: a store and the operations on it, as the command line has them.

>>> import engine
>>> with engine.connect("demo.duckdb") as bs:          # the store (created if new)
...     snap = bs.ingest("data/demo.parquet")           # Snapshot(snapshot_id, created)
...     run = bs.mine(sigma=20, min_len=10, out="out")  # Run: frames as the files
...     run.phrases.head(), run.summary.coverage
...     dups = bs.dedup(run=run.run_id)                 # near-duplicate clusters
>>> engine.mine("data/demo.parquet", db="demo.duckdb")  # one step: ingest and mine

Every method takes ``progress``: a callable ``progress(stage, fraction)`` or
None.  Bad input raises :class:`~engine.errors.BoilerscopeError` with one
line that says what is wrong and what to do.  The module-level functions
(:func:`ingest`, :func:`mine`, :func:`dedup`, :func:`clean`, :func:`report`) open
the store for one call; the command line and the dashboard use them.
"""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
from dataclasses import dataclass

import numpy as np
import polars as pl

from .clean import clean_store, read_stoplist
from .constants import DEFAULT_DB, DEFAULT_MAX_SLOT, DEFAULT_MIN_LEN, DEFAULT_SIGMA, STORE_SUFFIX, VERSION
from .errors import BoilerscopeError
from .files import atomic_file
from .neardup import DedupConfig, detect
from .params import RunParams
from .progress import byte_progress, checked
from .report import Report, check_out, make_report, write_report
from .runner import Run, mine_snapshot, result_set
from .snapshot import SnapshotReader, load
from .store import Store

log = logging.getLogger(__name__)

__all__ = ["Boilerscope", "Dedup", "Report", "Run", "Snapshot", "connect", "ingest", "mine", "dedup", "clean", "report",
           "is_store"]


@dataclass(frozen=True)
class Snapshot:
    """A snapshot in a store: its id (a function of its documents), whether
    this ingest added it (False: the same content was there), and how many
    WET records were not valid UTF-8 (decoded with replacement characters)."""

    snapshot_id: str
    created: bool
    replaced_payloads: int = 0


@dataclass(frozen=True)
class Dedup:
    """A near-duplicate detection: its id in the store, its summary (as
    dedup_summary.json) and its frames (as clusters.parquet and pairs.parquet)."""

    dedup_id: int
    summary: dict
    clusters: pl.DataFrame
    pairs: pl.DataFrame


def is_store(path: str) -> bool:
    return path.lower().endswith(STORE_SUFFIX)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class Boilerscope:
    """An open store and the operations on it (see :func:`connect`)."""

    def __init__(self, db: str = DEFAULT_DB, *, read_only: bool = False, store: Store | None = None):
        self._own = store is None
        self.store = store or Store(db, read_only=read_only)

    @property
    def path(self) -> str:
        return self.store.path

    def close(self) -> None:
        if self._own:
            self.store.close()

    def __enter__(self) -> Boilerscope:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- reading -----------------------------------------------------------
    def snapshots(self) -> pl.DataFrame:
        return self.store.snapshots()

    def runs(self, snapshot_id: str | None = None) -> pl.DataFrame:
        return self.store.runs(snapshot_id)

    def delete_run(self, run_id: int) -> None:
        if not self.store.delete_run(run_id):
            raise BoilerscopeError(f"run {run_id} is not in {self.path}; 'boilerscope runs' lists them")

    def run_info(self, run_id: int) -> dict:
        """A stored run's row (its ``summary`` parsed), or an error naming the store."""
        info = self.store.run(run_id)
        if info is None:
            raise BoilerscopeError(f"run {run_id} is not in {self.path}; 'boilerscope runs' lists them")
        return info

    def snapshot_id(self, snapshot: str | None = None) -> str:
        """The id of ``snapshot`` (checked), or of the latest snapshot."""
        sid = snapshot or self.store.latest_snapshot()
        if not self.store.has_snapshot(sid):
            raise BoilerscopeError(f"snapshot {sid} is not in {self.path}; see 'boilerscope runs'")
        return sid

    # -- operations --------------------------------------------------------
    def ingest(self, source: str, *, progress=None, origin: str | None = None) -> Snapshot:
        """Load a snapshot into the store, streamed with bounded memory.

        ``source`` is a snapshot file (``.parquet``, ``.jsonl``, ``.csv``), a
        folder of ``.parquet`` or ``.jsonl`` shards, or a glob of shards
        (``crawl/part-*.parquet``).  Memory holds one chunk of documents
        (about 16 MB of data, two at a time), the vocabulary and 8 bytes per
        document.  ``progress("ingest", fraction)`` follows the bytes read.
        ``origin`` is what the store records as the snapshot's source
        (default: the path; an upload's temporary file names its upload).
        """
        return self._add(_reader(source, origin), checked(progress))

    def _add(self, reader: SnapshotReader, progress) -> Snapshot:
        size = sum(os.path.getsize(p) for p in reader.paths)
        reader.on_bytes = byte_progress(progress, "ingest", size)
        sid, created = self.store.add_snapshot(reader)  # no progress report after the commit: a
        return Snapshot(sid, created, reader.replaced_payloads)  # report may cancel, and this is stored

    def mine(self, snapshot: str | None = None, *, out: str | None = None, progress=None, **params) -> Run:
        """Mine a snapshot of the store (default: the latest), record the run,
        optionally write the result files.

        Parameters
        ----------
        snapshot : str, optional
            Snapshot id (default: the latest).
        out : str, optional
            Folder for phrases.parquet, documents.parquet, sites.parquet and
            summary.json (and the templates' files).
        progress : callable(str, float), optional
        **params
            The fields of :class:`engine.params.RunParams`: ``sigma`` (a
            document count or a share such as ``"0.5%"``, default 20),
            ``min_len`` (L, default 10), ``algo`` (``auto``, ``bloomspan`` or
            ``fhk``), ``templates`` (also mine templates with slots),
            ``max_slot`` (W), ``memory`` (the budget, such as ``"8GB"``: a
            snapshot that does not fit is mined out of core, same answer),
            ``workers`` (threads).

        Returns
        -------
        Run
        """
        return mine_snapshot(self.store, self.snapshot_id(snapshot), RunParams(**params).checked(),
                             results=result_set(out), progress=checked(progress))

    def dedup(self, snapshot: str | None = None, *, run: int | None = None, raw: bool = False, config=None,
              out: str | None = None, progress=None) -> Dedup:
        """Near-duplicate clusters (see :mod:`engine.neardup`).

        By default (no ``run``, not ``raw``) the boilerplate is mined first
        with the default parameters and removed; ``run`` uses a stored run's
        coverage, ``raw`` the raw text.  ``config`` is a
        :class:`engine.neardup.DedupConfig` (default: the measured best).
        """
        progress = checked(progress)
        cfg = config or DedupConfig()
        cfg.check()
        if run is not None and raw:
            raise BoilerscopeError("give {run} or {raw}, not both", "run", "raw")
        results = result_set(out)
        st = self.store
        sid = self.snapshot_id(snapshot)
        if run is not None:
            info = st.run(run)
            if info is None or info["snapshot_id"] != sid:
                raise BoilerscopeError(f"run {run} is not a run of snapshot {sid}; 'boilerscope runs' lists them")
        elif not raw:
            run = self.mine(sid, progress=progress).run_id
        arrays = st.arrays(sid)
        meta = st.documents_meta(sid)
        tokens = np.ascontiguousarray(arrays.tokens)
        keep = None if raw else st.run_coverage_mask(run, sid, int(tokens.shape[0]))
        res = detect(tokens, np.ascontiguousarray(arrays.doc_offsets), meta["doc_id"].to_numpy(), cfg,
                     keep=keep, vocab=st.vocabulary(sid), progress=progress)
        summary = {"tool": "boilerscope", "version": VERSION, "snapshot_id": sid, "run_id": run,
                   "raw": raw, **res.summary}

        def finish(did: int) -> None:
            summary["dedup_id"] = did
            if results is not None:
                results.prepare({"clusters.parquet": res.clusters, "pairs.parquet": res.pairs},
                                "dedup_summary.json", summary)

        with results.staged() if results else contextlib.nullcontext():
            st.add_dedup(sid, run, raw, res.summary["config"], res.clusters, res.pairs, summary,
                         before_commit=finish)
        if results is not None:
            results.publish()
        return Dedup(summary["dedup_id"], summary, res.clusters, res.pairs)

    def clean(self, run: int, *, stoplist, out: str, force: bool = False, progress=None) -> pl.DataFrame:
        """Write a cleaned snapshot: the run's snapshot with the noise phrases
        cut (the cut rule of :mod:`engine.clean`, with the run's L and slot
        width).

        Parameters
        ----------
        run : int
            The run whose snapshot, L and slot width are used.
        stoplist : str or (noise, keep)
            The stop-phrase list (CSV or JSON, as exported by the dashboard),
            or the noise and keep phrase lists themselves.
        out : str
            The cleaned snapshot (``.parquet``); never the stop-phrase list or
            the store, and an existing file only with ``force``.
        progress : callable or None
            ``progress(stage, fraction)``: cutting, rewriting texts, writing.

        Returns
        -------
        polars.DataFrame
            Before/after figures per site and an ``(all sites)`` row.
        """
        given = isinstance(stoplist, (tuple, list))
        _check_out(out, force, (("the stop-phrase list", None if given else stoplist), ("the store", self.path)))
        noise, keep = (list(stoplist[0]), list(stoplist[1])) if given else read_stoplist(stoplist)
        info = self.run_info(run)
        # template decisions match with the run's slot width (4 when it mined no templates)
        max_slot = int((info["summary"].get("templates") or {}).get("max_slot") or DEFAULT_MAX_SLOT)
        progress = checked(progress)
        cleaned, figures = clean_store(self.store, info["snapshot_id"], int(info["min_len"]), noise, keep, max_slot,
                                       progress=progress)
        if progress is not None:
            progress("writing", 0.0)
        with atomic_file(out, "the cleaned snapshot") as tmp:
            cleaned.select("doc_id", "site", "url", "text").write_parquet(tmp, compression="zstd")
        return figures  # no progress report after the file took its place (a report may cancel)

    def report(self, run: int | None = None, *, snapshot: str | None = None, out: str | None = None,
               force: bool = False) -> Report:
        """The repetition card of a run: one self-contained HTML page
        (:mod:`engine.report`) in ``Report.html``.  ``run`` defaults to the
        newest run of ``snapshot``, else of the store.  With ``out`` (a
        ``.html`` file) the page is also written there, atomically; an
        existing file that is not an earlier card is replaced only with
        ``force``."""
        if out is None:
            return make_report(self.store, run, snapshot)
        return write_report(self.store, run, snapshot, out=out, force=force)


def _reader(source: str, origin: str | None = None) -> SnapshotReader:
    """The reader of a snapshot source: it names the shards, so a bad source fails here."""
    if is_store(source):
        raise BoilerscopeError(f"{source} is a store, not a snapshot; give a .parquet, .jsonl or .csv file, "
                               "or a folder of shards")
    reader = SnapshotReader(source)
    if origin:
        reader.origin = origin
    return reader


def _check_out(out: str, force: bool, others) -> None:
    """The cleaned snapshot's path: a .parquet that is none of ``others``
    ((what, path) pairs) and, unless ``force``, not an existing file."""
    if not str(out).lower().endswith(".parquet"):
        raise BoilerscopeError(f"{out}: the cleaned snapshot is written as .parquet; give a .parquet {{out}}", "out")
    for name, path in others:
        if path and os.path.exists(path) and _same_file(out, path):
            raise BoilerscopeError(f"{{out}} {out} is {name}; write the cleaned snapshot to another file", "out")
    if os.path.exists(out) and not force:
        raise BoilerscopeError(f"{out} already exists; give another {{out}} or add {{force}} to replace it",
                               "out", "force")


def connect(db: str = DEFAULT_DB, *, read_only: bool = False) -> Boilerscope:
    """Open (or create) the store ``db``: ``with engine.connect(db) as bs: ...``."""
    return Boilerscope(db, read_only=read_only)


# -- one call, one store (the command line's and the dashboard's) ----------------
def _remove_store(db: str, arrays: bool) -> None:
    """Remove a store this call created (a bad snapshot leaves no store
    behind); its arrays folder too when this call made it."""
    for path in (db, db + ".wal"):
        with contextlib.suppress(OSError):
            os.remove(path)
    if arrays:
        shutil.rmtree(db + ".arrays", ignore_errors=True)


def ingest(source: str, db: str = DEFAULT_DB, *, progress=None, store: Store | None = None,
           origin: str | None = None) -> tuple[str, bool]:
    """:meth:`Boilerscope.ingest` on ``db`` (or the open ``store``); a store
    this call creates is removed again when the snapshot turns out bad.
    Returns ``(snapshot_id, created)``."""
    reader, progress = _reader(source, origin), checked(progress)  # a bad source fails before any store is made
    made = store is None and not os.path.exists(db)
    arrays_made = made and not os.path.lexists(db + ".arrays")
    bs = Boilerscope(db, store=store)
    try:
        snap = bs._add(reader, progress)
        if snap.replaced_payloads:
            log.warning("%s: %d WET records were not valid UTF-8 and were decoded with replacement characters",
                        source, snap.replaced_payloads)
        return snap.snapshot_id, snap.created
    except BaseException:
        if made:
            bs.close()
            _remove_store(db, arrays_made)
        raise
    finally:
        bs.close()


def _open(source: str, db: str | None, store: Store | None) -> Boilerscope:
    """The store a source names: a .duckdb source is the store."""
    if store is not None:
        return Boilerscope(store=store)
    if is_store(source):
        if not os.path.exists(source):
            raise BoilerscopeError(f"{source}: store not found; ingest a snapshot first")
        db = source
    return Boilerscope(db or DEFAULT_DB)


def _snapshot_of(bs: Boilerscope, source: str, snapshot: str | None, progress) -> str:
    """The snapshot a source names: a store's (latest or given), or a file ingested first."""
    if is_store(source):
        return bs.snapshot_id(snapshot)
    return bs.ingest(source, progress=progress).snapshot_id


def mine(source: str, sigma=DEFAULT_SIGMA, min_len=DEFAULT_MIN_LEN, *, db: str | None = None,
         out: str | None = None, snapshot: str | None = None, progress=None, store: Store | None = None,
         **params) -> Run:
    """Mine a snapshot file (ingested first) or a store (``.duckdb``): the
    parameters of :meth:`Boilerscope.mine`, plus ``db`` (the store, default
    ``boilerscope.duckdb``; ignored for a store source) and ``store`` (an
    open store, the dashboard's)."""
    t_start = time.perf_counter()
    params = RunParams(sigma=sigma, min_len=min_len, **params).checked()  # bad input fails before any ingest
    results, progress = result_set(out), checked(progress)
    with _open(source, db, store) as bs:
        t = time.perf_counter()
        sid = _snapshot_of(bs, source, snapshot, progress)
        timings = {"ingest": time.perf_counter() - t}
        return mine_snapshot(bs.store, sid, params, results=results, progress=progress, timings=timings,
                             t_start=t_start)


def dedup(source: str, *, run: int | None = None, raw: bool = False, config=None, db: str | None = None,
          out: str | None = None, snapshot: str | None = None, progress=None,
          store: Store | None = None) -> Dedup:
    """:meth:`Boilerscope.dedup` on a snapshot file (ingested first) or a store."""
    with _open(source, db, store) as bs:
        sid = _snapshot_of(bs, source, snapshot, progress)
        return bs.dedup(sid, run=run, raw=raw, config=config, out=out, progress=progress)


def clean(source: str, *, run: int, stoplist, out: str, db: str | None = None,
          force: bool = False, store: Store | None = None, progress=None) -> pl.DataFrame:
    """:meth:`Boilerscope.clean` from a store (``.duckdb``) or from the
    snapshot file the run was mined from (checked: its content must be the
    run's snapshot; the store is then ``db``)."""
    db_path = source if is_store(source) else (db or DEFAULT_DB)
    _check_out(out, force, (("the snapshot", source), ("the store", db_path)))
    if not is_store(source) and not os.path.exists(source):
        raise BoilerscopeError(f"{source}: file not found; give the store or the snapshot the run was mined from")
    if store is None and not os.path.exists(db_path):
        raise BoilerscopeError(f"{db_path}: store not found; mine the snapshot first")
    with Boilerscope(db_path, read_only=True, store=store) as bs:
        if not is_store(source):
            sid, given = bs.run_info(run)["snapshot_id"], load(source).snapshot_id
            if given != sid:
                raise BoilerscopeError(
                    f"{source} is not the snapshot of run {run} (that run mined snapshot {sid}); "
                    "give the run's snapshot or the store")
        return bs.clean(run, stoplist=stoplist, out=out, force=force, progress=progress)


def report(db: str = DEFAULT_DB, *, run: int | None = None, snapshot: str | None = None, out: str | None = None,
           force: bool = False, store: Store | None = None) -> Report:
    """:meth:`Boilerscope.report` on the store ``db`` (opened read-only; it
    must exist) or the open ``store``; ``out`` is checked before the store
    is opened."""
    if out is not None:
        check_out(out, force)
    if store is None and not os.path.exists(db):
        raise BoilerscopeError(f"{db}: store not found; run 'boilerscope ingest' and 'boilerscope mine' first")
    with Boilerscope(db, read_only=True, store=store) as bs:
        return bs.report(run, snapshot=snapshot, out=out, force=force)
