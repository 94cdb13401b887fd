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
(:func:`ingest`, :func:`mine`, :func:`dedup`, :func:`clean`) open the store
for one call; the command line and the dashboard use them.
"""
from __future__ import annotations

import contextlib
import os
import shutil
import time
from dataclasses import dataclass

import numpy as np
import polars as pl

from .constants import DEFAULT_ALGO, DEFAULT_DB, DEFAULT_MAX_SLOT, DEFAULT_MIN_LEN, DEFAULT_SIGMA, STORE_SUFFIX, VERSION
from .errors import BoilerscopeError
from .files import ResultSet, atomic_file
from .params import RunParams
from .progress import byte_progress
from .runner import Run, mine_snapshot, result_set
from .snapshot import SnapshotReader, load
from .store import Store

__all__ = ["Boilerscope", "Run", "Snapshot", "connect", "ingest", "mine", "dedup", "clean", "is_store"]


@dataclass(frozen=True)
class Snapshot:
    """A snapshot in a store: its id (a function of its documents) and
    whether this ingest added it (False: the same content was there)."""

    snapshot_id: str
    created: bool


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

    def snapshot_id(self, snapshot: str | None = None) -> str:
        """The id of ``snapshot`` (checked), or of the latest snapshot."""
        sid = snapshot or self.store.latest_snapshot()
        if not self.store.has_snapshot(sid):
            raise BoilerscopeError(f"snapshot {sid} is not in {self.path}; see 'boilerscope runs'")
        return sid

    # -- operations --------------------------------------------------------
    def ingest(self, source: str, *, progress=None) -> Snapshot:
        """Load a snapshot into the store, streamed with bounded memory.

        ``source`` is a snapshot file (``.parquet``, ``.jsonl``, ``.csv``), a
        folder of ``.parquet`` or ``.jsonl`` shards, or a glob of shards
        (``crawl/part-*.parquet``).  Memory holds one chunk of documents
        (about 16 MB of data, two at a time), the vocabulary and 8 bytes per
        document.  ``progress("ingest", fraction)`` follows the bytes read.
        """
        return self._add(_reader(source), progress)

    def _add(self, reader: SnapshotReader, progress) -> Snapshot:
        size = sum(os.path.getsize(p) for p in reader.paths)
        reader.progress = byte_progress(progress, "ingest", size)
        sid, created = self.store.add_snapshot(reader)
        if progress is not None:
            progress("ingest", 1.0)
        return Snapshot(sid, created)

    def mine(self, snapshot: str | None = None, *, sigma=DEFAULT_SIGMA, min_len=DEFAULT_MIN_LEN,
             algo: str = DEFAULT_ALGO, templates: bool = False, max_slot=DEFAULT_MAX_SLOT, memory=None,
             workers: int | None = None, out: str | None = None, progress=None) -> Run:
        """Mine a snapshot of the store (default: the latest), record the run,
        optionally write the result files.

        Parameters
        ----------
        snapshot : str, optional
            Snapshot id (default: the latest).
        sigma : int or str
            Minimum document count, or a share of the documents (``"0.5%"``).
        min_len : int
            Minimum phrase length L (>= 2).
        algo : str
            ``"auto"`` (default: :mod:`engine.planner` decides),
            ``"bloomspan"`` or ``"fhk"`` (the suffix-array baseline).
        templates : bool
            Also mine the templates with slots (:mod:`engine.templates`):
            their occurrences count in the coverage, and ``out`` gets
            templates.parquet, template_occurrences.parquet and spans.parquet.
        max_slot : int
            W, the most tokens a slot stands for (1..16).
        memory : int or str, optional
            The memory budget (``"8GB"``; default ``$BOILERSCOPE_MEMORY``,
            else half the machine's memory): a snapshot whose in-memory run
            would not fit is mined out of core, same answer.
        workers : int, optional
            Threads (default: the cores).
        out : str, optional
            Folder for phrases.parquet, documents.parquet, sites.parquet and
            summary.json.
        progress : callable(str, float), optional

        Returns
        -------
        Run
        """
        params = RunParams(sigma=sigma, min_len=min_len, algo=algo, templates=templates, max_slot=max_slot,
                           memory=memory, workers=workers).checked()
        return mine_snapshot(self.store, self.snapshot_id(snapshot), params, results=result_set(out),
                             progress=progress)

    def dedup(self, snapshot: str | None = None, *, run: int | None = None, raw: bool = False, config=None,
              out: str | None = None, progress=None) -> dict:
        """Near-duplicate clusters (see :mod:`engine.neardup`).

        By default (no ``run``, not ``raw``) the boilerplate is mined first
        with the default parameters and removed; ``run`` uses a stored run's
        coverage, ``raw`` the raw text.  Returns the summary (with
        ``dedup_id``) and, under "clusters_frame" and "pairs_frame", the
        frames.
        """
        from .neardup import DedupConfig, detect
        cfg = config or DedupConfig()
        cfg.check()
        if run is not None and raw:
            raise BoilerscopeError("give {run} or {raw}, not both", "run", "raw")
        result_set = ResultSet(out) if out is not None else None
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
            if result_set is not None:
                result_set.prepare({"clusters.parquet": res.clusters, "pairs.parquet": res.pairs},
                                   "dedup_summary.json", summary)

        with result_set.staged() if result_set else contextlib.nullcontext():
            st.add_dedup(sid, run, raw, res.summary["config"], res.clusters, res.pairs, summary,
                         before_commit=finish)
        if result_set is not None:
            result_set.publish()
        return {**summary, "clusters_frame": res.clusters, "pairs_frame": res.pairs}


def _reader(source: str) -> SnapshotReader:
    """The reader of a snapshot source: it names the shards, so a bad source fails here."""
    if is_store(source):
        raise BoilerscopeError(f"{source} is a store, not a snapshot; give a .parquet, .jsonl or .csv file, "
                               "or a folder of shards")
    return SnapshotReader(source)


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


def ingest(source: str, db: str = DEFAULT_DB, *, progress=None, store: Store | None = None) -> tuple[str, bool]:
    """:meth:`Boilerscope.ingest` on ``db`` (or the open ``store``); a store
    this call creates is removed again when the snapshot turns out bad.
    Returns ``(snapshot_id, created)``."""
    reader = _reader(source)  # a bad source fails before any store is made
    made = store is None and not os.path.exists(db)
    arrays_made = made and not os.path.lexists(db + ".arrays")
    bs = Boilerscope(db, store=store)
    try:
        snap = bs._add(reader, progress)
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


def mine(source: str, sigma=DEFAULT_SIGMA, min_len=DEFAULT_MIN_LEN, *, algo: str = DEFAULT_ALGO,
         db: str | None = None, out: str | None = None, snapshot: str | None = None, progress=None,
         workers: int | None = None, store: Store | None = None, templates: bool = False,
         max_slot=DEFAULT_MAX_SLOT, memory=None) -> Run:
    """Mine a snapshot file (ingested first) or a store (``.duckdb``): the
    parameters of :meth:`Boilerscope.mine`, plus ``db`` (the store, default
    ``boilerscope.duckdb``; ignored for a store source) and ``store`` (an
    open store, the dashboard's)."""
    t_start = time.perf_counter()
    params = RunParams(sigma=sigma, min_len=min_len, algo=algo, templates=templates, max_slot=max_slot,
                       memory=memory, workers=workers).checked()  # bad input fails before any ingest
    results = result_set(out)
    with _open(source, db, store) as bs:
        t = time.perf_counter()
        sid = _snapshot_of(bs, source, snapshot, progress)
        timings = {"ingest": time.perf_counter() - t}
        return mine_snapshot(bs.store, sid, params, results=results, progress=progress, timings=timings,
                             t_start=t_start)


def dedup(source: str, *, run: int | None = None, raw: bool = False, config=None, db: str | None = None,
          out: str | None = None, snapshot: str | None = None, progress=None,
          store: Store | None = None) -> dict:
    """:meth:`Boilerscope.dedup` on a snapshot file (ingested first) or a store."""
    with _open(source, db, store) as bs:
        sid = _snapshot_of(bs, source, snapshot, progress)
        return bs.dedup(sid, run=run, raw=raw, config=config, out=out, progress=progress)


def clean(source: str, *, run: int, stoplist: str, out: str, db: str | None = None,
          force: bool = False, store: Store | None = None) -> pl.DataFrame:
    """Write a cleaned snapshot: the run's snapshot with the noise phrases cut
    (the cut rule of :mod:`engine.clean`).

    Parameters
    ----------
    source : str
        The store holding the run (``.duckdb``), or the snapshot file the run
        was mined from (checked: its content must be the run's snapshot).
    run : int
        The run whose snapshot and L are used.
    stoplist : str or (noise, keep)
        The stop-phrase list (CSV or JSON, as exported by the dashboard), or
        the noise and keep phrase lists themselves (the dashboard's).
    out : str
        The cleaned snapshot (``.parquet``); never the source, the stoplist
        or the store, and an existing file only with ``force``.

    Returns
    -------
    polars.DataFrame
        Before/after figures per site and an ``(all sites)`` row.
    """
    from .clean import clean_store, read_stoplist
    if not str(out).lower().endswith(".parquet"):
        raise BoilerscopeError(f"{out}: the cleaned snapshot is written as .parquet; give a .parquet {{out}}", "out")
    db_path = source if is_store(source) else (db or DEFAULT_DB)
    given = isinstance(stoplist, (tuple, list))
    for name, path in (("the snapshot", source), ("the stop-phrase list", None if given else stoplist),
                       ("the store", db_path)):
        if path and os.path.exists(path) and _same_file(out, path):
            raise BoilerscopeError(f"{{out}} {out} is {name}; write the cleaned snapshot to another file", "out")
    if os.path.exists(out) and not force:
        raise BoilerscopeError(f"{out} already exists; give another {{out}} or add {{force}} to replace it",
                               "out", "force")
    if not is_store(source) and not os.path.exists(source):
        raise BoilerscopeError(f"{source}: file not found; give the store or the snapshot the run was mined from")
    noise, keep = (list(stoplist[0]), list(stoplist[1])) if given else read_stoplist(stoplist)
    own = store is None
    if own and not os.path.exists(db_path):
        raise BoilerscopeError(f"{db_path}: store not found; mine the snapshot first")
    st = store or Store(db_path, read_only=True)
    try:
        info = st.run(run)
        if info is None:
            raise BoilerscopeError(f"run {run} is not in {st.path}; 'boilerscope runs' lists them")
        sid = info["snapshot_id"]
        if not is_store(source):
            given = load(source).snapshot_id
            if given != sid:
                raise BoilerscopeError(
                    f"{source} is not the snapshot of run {run} (that run mined snapshot {sid}); "
                    "give the run's snapshot or the store")
        # template decisions match with the run's slot width (4 when it mined no templates)
        max_slot = int((info["summary"].get("templates") or {}).get("max_slot") or DEFAULT_MAX_SLOT)
        cleaned, figures = clean_store(st, sid, int(info["min_len"]), noise, keep, max_slot)
        with atomic_file(out, "the cleaned snapshot") as tmp:
            cleaned.select("doc_id", "site", "url", "text").write_parquet(tmp, compression="zstd")
        return figures
    finally:
        if own:
            st.close()
