"""Python API: the same operations as the command line.

>>> from engine import mine
>>> run = mine("data/demo.parquet", sigma=20, min_len=10, db="demo.duckdb")
>>> run.phrases.head()        # polars frame, as phrases.parquet
>>> run.summary["coverage"]
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import resource
import time
from dataclasses import dataclass

import numpy as np
import polars as pl

from . import __version__
from . import coverage as cov
from .bloomspan import mine_tokens
from .errors import BoilerscopeError
from .fhk import mine_tokens_fhk
from .files import ResultSet, atomic_file
from .memory import Pager, budget as memory_budget, plan as memory_plan
from .shape import choose_algorithm
from .kernels import bloomspan as KB
from .progress import Progress
from .result import MAX_TOKENS_32
from .snapshot import SnapshotReader, load
from .store import Store
from .templates import DEFAULT_MAX_SLOTS, check_max_slot, mine_templates, template_frames

log = logging.getLogger(__name__)

DEFAULT_DB = "boilerscope.duckdb"
DEFAULT_SIGMA = 20
DEFAULT_MIN_LEN = 10
ALGOS = ("auto", "bloomspan", "fhk")
DEFAULT_ALGO = "auto"
DEFAULT_MAX_SLOT = 4
#: sigma and L are counts of documents and tokens: both fit in 31 bits.
MAX_COUNT = 2**31 - 2


@dataclass
class Run:
    """The result of one mining run."""

    run_id: int | None
    snapshot_id: str
    phrases: pl.DataFrame
    documents: pl.DataFrame
    sites: pl.DataFrame
    summary: dict


def parse_sigma(value, n_docs: int) -> int:
    """A count (``20``) or a share of the documents (``"0.5%"``, rounded up)."""
    text = str(value).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*%", text)
    if m:
        share = float(m.group(1))
        if share <= 0 or share > 100:
            raise BoilerscopeError(f"sigma {text} is not a share between 0% and 100%")
        return max(1, math.ceil(share / 100.0 * n_docs - 1e-9))
    if re.fullmatch(r"\d+", text):
        sigma = int(text)
        if sigma < 1:
            raise BoilerscopeError("sigma must be at least 1 (a document count like 20 or a share like 0.5%)")
        if sigma > MAX_COUNT:
            raise BoilerscopeError(f"sigma {text} is larger than any snapshot can hold; give at most {MAX_COUNT}")
        return sigma
    raise BoilerscopeError(
        f"sigma '{text}' is not a number; give a document count like 20 or a share like 0.5%")


def check_min_len(min_len) -> int:
    try:
        value = int(str(min_len).strip())
    except ValueError:
        raise BoilerscopeError(f"min length '{min_len}' is not a whole number; give L >= 2") from None
    if value < 2:
        raise BoilerscopeError(f"min length {value} is too small; give L >= 2")
    if value > MAX_COUNT:
        raise BoilerscopeError(f"min length {value} is longer than any document can be; give at most {MAX_COUNT}")
    return value


def is_store(path: str) -> bool:
    return path.lower().endswith(".duckdb")


def ingest(source: str, db: str = DEFAULT_DB, *, progress: bool = False,
           store: Store | None = None) -> tuple[str, bool]:
    """Load a snapshot into a store, streamed with bounded memory.

    ``source`` is a snapshot file (``.parquet``, ``.jsonl``, ``.csv``), a
    folder of ``.parquet`` or ``.jsonl`` shards, or a glob of shards
    (``crawl/part-*.parquet``).  Memory holds one chunk of documents (about
    16 MB of data, two at a time), the vocabulary and 8 bytes per document.

    Returns
    -------
    (snapshot_id, created)
        ``created`` is False when the same content was already there.
    """
    if is_store(source):
        raise BoilerscopeError(f"{source} is a store, not a snapshot; give a .parquet, .jsonl or .csv file, "
                               "or a folder of shards")
    reader = SnapshotReader(source)  # names the shards; a bad source fails here
    own = store is None
    size = sum(os.path.getsize(p) for p in reader.paths)
    # an existing store is opened (and checked: ours, not locked) before the
    # snapshot is read; a new one is made for it and removed if the snapshot
    # turns out to be bad
    made = own and not os.path.exists(db)
    arrays_made = made and not os.path.lexists(db + ".arrays")
    st = store or Store(db)
    try:
        with Progress("ingest", total=size or None, enabled=progress) as bar:
            reader.progress = bar.advance_bytes
            sid, created = st.add_snapshot(reader)
        log.info("snapshot %s (%s bytes, %d shards): %s", sid, size, len(reader.paths),
                 "stored" if created else "already stored")
        return sid, created
    except BaseException:
        if made:
            st.close()
            own = False
            _remove_store(db, arrays_made)
        raise
    finally:
        if own:
            st.close()


def _remove_store(db: str, arrays: bool) -> None:
    """Remove a store this call created (a bad snapshot leaves no store
    behind); its arrays folder too when this call made it."""
    import shutil
    for path in (db, db + ".wal"):
        with contextlib.suppress(OSError):
            os.remove(path)
    if arrays:
        shutil.rmtree(db + ".arrays", ignore_errors=True)


def _warm_up(miner=None, sigma: int = 2, out_of_core: bool = False) -> float:
    """Compile (or load from numba's cache) the kernels of one miner on a tiny
    input, with read-only arrays as a store's memory-mapped arrays are: numba
    compiles read-only and writable arrays apart, and warming the writable
    kind only left the first real run of a process compiling inside "grow"."""
    t = time.perf_counter()
    tokens = np.array([0, 1, 0, 1], np.int32)
    offsets = np.array([0, 2, 4], np.int64)
    for a in (tokens, offsets):
        a.flags.writeable = False
    if out_of_core:  # its chunk views: read-only tokens, fresh offsets
        for min_len in (2, 3):
            mine_tokens(tokens, offsets, 2, sigma, min_len, workers=1, filter_bytes=1 << 10, memory=1)
    else:
        (miner or mine_tokens)(tokens, offsets, 2, sigma, 2, workers=1, filter_bytes=1 << 10)
    return time.perf_counter() - t


def phrase_frames(tokens, doc_offsets, vocab, site_index, n_sites, res):
    """All reported phrases (run_phrases), the maximal ones (phrases.parquet)
    and their occurrences (run_occurrences)."""
    vocab_arr = np.asarray(vocab, dtype=object)
    n_nodes = res.node_rep.shape[0]
    texts = [" ".join(vocab_arr[np.asarray(tokens[r:r + m])])
             for r, m in zip(res.node_rep.tolist(), res.node_len.tolist())]
    # distinct sites over the occurrences of each maximal node
    sites = np.zeros(n_nodes, np.int64)
    if res.occ_node.shape[0]:
        bounds = np.flatnonzero(np.diff(res.occ_node)) + 1
        lo = np.concatenate(([0], bounds)).astype(np.int64)
        hi = np.concatenate((bounds, [res.occ_node.shape[0]])).astype(np.int64)
        occ_sites = site_index[res.occ_doc].astype(np.int64)
        sites[res.occ_node[lo]] = cov.distinct_per_group(lo, hi, occ_sites, max(n_sites, 1))
    allp = pl.DataFrame({
        "phrase_id": np.arange(n_nodes, dtype=np.int32),
        "phrase": pl.Series(texts, dtype=pl.String),
        "length": res.node_len.astype(np.int32),
        "df": res.node_df.astype(np.int64),
        "occurrences": res.node_occ.astype(np.int64),
        "sites": sites,
        "psi": (res.node_len.astype(np.int64) * res.node_df.astype(np.int64)),
        "maximal": res.node_max.astype(bool),
        "first_pos": res.node_rep.astype(np.int64),
    })
    phrases = (
        allp.filter(pl.col("maximal"))
        .select("phrase", "length", "df", "occurrences", "sites", "psi")
        .sort(["psi", "length", "phrase"], descending=[True, True, False])
    )
    occ = pl.DataFrame({
        "phrase_id": res.occ_node.astype(np.int32),
        "doc_index": res.occ_doc.astype(np.int32),
        "token_pos": (res.occ_pos.astype(np.int64) - np.asarray(doc_offsets)[res.occ_doc]).astype(np.int32),
    })
    return allp, phrases, occ


def add_run_with_files(st: Store, sid: str, sigma: int, min_len: int, algo: str, frames: dict, summary: dict,
                       result_set: ResultSet | None, finish) -> int:
    """Store a run and publish its result files: ``finish(run_id)`` runs in
    the run's transaction (it completes the summary and stages the files),
    the staged files take ``--out``'s place after the commit, and a failed
    swap deletes the run, so the store and the files never disagree."""
    with result_set.staged() if result_set else contextlib.nullcontext():
        run_id = st.add_run(sid, sigma, min_len, algo, frames, summary, before_commit=finish)
    if result_set is not None:
        try:
            result_set.publish()
        except BoilerscopeError:
            st.delete_run(run_id)
            raise
    return run_id


def _open_store(source: str, db: str | None, store: Store | None) -> tuple[Store, bool]:
    """The store to use and whether we own it (a .duckdb source is the store)."""
    if store is not None:
        return store, False
    if is_store(source):
        if not os.path.exists(source):
            raise BoilerscopeError(f"{source}: store not found; ingest a snapshot first")
        db = source
    return Store(db or DEFAULT_DB), True


def _snapshot_of(st: Store, source: str, snapshot: str | None, progress) -> str:
    """The snapshot a source names: a store's (latest or given), or a file ingested first."""
    if is_store(source):
        sid = snapshot or st.latest_snapshot()
        if not st.has_snapshot(sid):
            raise BoilerscopeError(f"snapshot {sid} is not in {st.path}; see 'boilerscope runs'")
        return sid
    return ingest(source, progress=progress is True, store=st)[0]


def mine(source: str, sigma=DEFAULT_SIGMA, min_len=DEFAULT_MIN_LEN, *,
         algo: str = DEFAULT_ALGO, db: str | None = None, out: str | None = None,
         snapshot: str | None = None, progress: bool = False,
         workers: int | None = None, store: Store | None = None,
         templates: bool = False, max_slot: int = DEFAULT_MAX_SLOT, memory=None) -> Run:
    """Mine a snapshot file or a store, record the run, optionally write files.

    Parameters
    ----------
    source : str
        A snapshot (``.parquet``, ``.jsonl``, ``.csv``; ingested first) or a
        store (``.duckdb``).
    sigma : int or str
        Minimum document count, or a share of the documents (``"0.5%"``).
    min_len : int
        Minimum phrase length L (>= 2).
    algo : str
        ``"auto"`` (default: :func:`engine.shape.choose_algorithm`),
        ``"bloomspan"`` or ``"fhk"`` (the suffix-array baseline; sigma >= 2).
    db : str, optional
        The store (default ``boilerscope.duckdb``; ignored for a store source).
    out : str, optional
        Folder for phrases.parquet, documents.parquet, sites.parquet and
        summary.json.
    snapshot : str, optional
        Snapshot id inside a store holding several (default: the latest).
    progress : bool or callable(stage, fraction)
        True for progress bars on stderr; a callable receives the stages.
    workers : int, optional
        Threads (default: the cores).
    store : Store, optional
        An open store to use (the dashboard's).
    templates : bool
        Also mine the templates with slots (:mod:`engine.templates`): their
        occurrences count in the coverage, and ``out`` gets
        templates.parquet, template_occurrences.parquet and spans.parquet.
    max_slot : int
        W, the most tokens a slot stands for (1..16).
    memory : int or str, optional
        The memory budget (``"8GB"``; default ``$BOILERSCOPE_MEMORY``, else
        half the machine's memory): a snapshot whose in-memory run would not
        fit is mined out of core (:mod:`engine.outofcore`), same answer.

    Returns
    -------
    Run
    """
    t_start = time.perf_counter()
    min_len = check_min_len(min_len)
    mem_budget = memory_budget(memory)
    max_slot = check_max_slot(max_slot)
    parse_sigma(sigma, 0)  # a bad sigma fails before anything is ingested
    if algo not in ALGOS:
        raise BoilerscopeError(f"unknown algorithm '{algo}'; choose one of {', '.join(ALGOS)}")
    result_set = ResultSet(out) if out is not None else None
    timings: dict = {}
    st, own = _open_store(source, db, store)
    try:
        t = time.perf_counter()
        sid = _snapshot_of(st, source, snapshot, progress)
        timings["ingest"] = time.perf_counter() - t

        t = time.perf_counter()
        arrays = st.arrays(sid)
        vocab = st.vocabulary(sid)
        meta = st.documents_meta(sid)
        n_docs = meta.height
        sigma_n = parse_sigma(sigma, n_docs)
        tokens = np.ascontiguousarray(arrays.tokens)
        doc_offsets = np.ascontiguousarray(arrays.doc_offsets)
        timings["load"] = time.perf_counter() - t

        t = time.perf_counter()
        budget_plan = memory_plan(int(tokens.shape[0]), mem_budget)
        choice = {}
        used = algo
        if algo == "fhk" and tokens.shape[0] > MAX_TOKENS_32:
            raise BoilerscopeError(
                f"--algo fhk holds at most 2^31 - 2 tokens (32-bit suffixes); this snapshot has "
                f"{tokens.shape[0]:,}: use --algo bloomspan")
        if budget_plan.out_of_core and algo == "fhk":
            raise BoilerscopeError(
                f"--algo fhk holds the whole snapshot in memory ({tokens.shape[0]:,} tokens do not fit "
                f"--memory {mem_budget:,} bytes); use --algo bloomspan or raise --memory")
        if algo == "auto":
            if budget_plan.out_of_core:
                used, choice = "bloomspan", {"out_of_core": True}
            elif tokens.shape[0] > MAX_TOKENS_32:
                used, choice = "bloomspan", {"wide_positions": True}
            else:
                used, choice = choose_algorithm(tokens, doc_offsets, sigma_n, min_len)
        timings["choose"] = time.perf_counter() - t
        miner = mine_tokens_fhk if used == "fhk" else mine_tokens
        compile_s = _warm_up(miner, 1 if sigma_n == 1 else 2, budget_plan.out_of_core)
        t = time.perf_counter()
        kwargs = {"memory": mem_budget} if miner is mine_tokens else {}
        with Progress("mine", total=1.0, enabled=progress is True) as bar:
            res = miner(tokens, doc_offsets, len(vocab), sigma_n, min_len,
                        workers=workers, progress=progress if callable(progress) else bar.stage, **kwargs)
        memory_used = res.stats.pop("memory", None) or budget_plan.as_dict()
        mining = time.perf_counter() - t
        timings.update(res.stats.pop("timings"))
        timings["mining"] = mining  # the miner's stages together (the kernels' time)

        t = time.perf_counter()
        site_codes = meta["site"].cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
        n_sites = int(site_codes.max()) + 1 if site_codes.shape[0] else 0
        allp, phrases, occ = phrase_frames(tokens, doc_offsets, vocab, site_codes, n_sites, res)
        documents = cov.documents_frame(meta, res.covered)
        sites = cov.sites_frame(documents)
        spans = cov.spans_frame(doc_offsets, arrays.span_start, arrays.span_end,
                                res.rng_pos, res.rng_len, res.rng_node)
        if budget_plan.out_of_core:  # the pages the results read
            for arr in (arrays.tokens, arrays.span_start, arrays.span_end):
                Pager(arr).release()
        run_docs = pl.DataFrame({"doc_index": np.arange(n_docs, dtype=np.int32),
                                 "covered_tokens": res.covered.astype(np.int64)})
        timings["results"] = time.perf_counter() - t

        n_tokens = int(tokens.shape[0])
        covered = int(res.covered.sum())
        extra, store_frames = {}, {}
        if templates:
            t = time.perf_counter()
            tstats: dict = {}
            with Progress("templates", total=1.0, enabled=progress is True) as tbar:
                stage = progress if callable(progress) else tbar.stage
                found = mine_templates(tokens, doc_offsets, sigma_n, min_len, max_slot, stats=tstats,
                                       progress=lambda f: stage("templates", f), workers=workers)
            pos = np.asarray(res.rng_pos, np.int64)
            phrase_mask = cov.ranges_mask(n_tokens, pos, pos + np.asarray(res.rng_len, np.int64))
            t_frames = time.perf_counter()
            tf = template_frames(
                found, tokens, doc_offsets, arrays.span_start, arrays.span_end, vocab, meta["doc_id"].to_numpy(),
                meta["site"].to_list(), phrase_mask)
            tstats["seconds"]["frames"] = round(time.perf_counter() - t_frames, 3)
            tpl, tpl_occ, tpl_spans, per_doc = tf.templates, tf.occurrences, tf.spans, tf.covered_per_doc
            store_frames = {"run_templates": tf.store_templates.with_columns(pl.lit(max_slot, pl.Int32)
                                                                             .alias("max_slot")),
                            "run_template_occurrences": tf.store_occurrences}
            documents = cov.documents_frame(meta, per_doc)
            sites = cov.sites_frame(documents)
            run_docs = run_docs.with_columns(pl.Series("covered_tokens", per_doc.astype(np.int64)))
            extra = {"templates.parquet": tpl, "template_occurrences.parquet": tpl_occ, "spans.parquet": tpl_spans}
            timings["templates"] = time.perf_counter() - t
            covered_phrases = covered
            covered = int(per_doc.sum())
        summary = {
            "tool": "boilerscope",
            "version": __version__,
            "snapshot_id": sid,
            "run_id": None,
            "sigma": sigma_n,
            "sigma_given": str(sigma),
            "min_len": min_len,
            "algo": algo,
            "algo_used": used,
            "algo_choice": choice or None,
            "documents": n_docs,
            "tokens": n_tokens,
            "covered_tokens": covered,
            "coverage": covered / n_tokens if n_tokens else 0.0,
            "phrases": int(phrases.height),
            "filters": {k: v for k, v in res.stats.items()
                        if k not in ("workers", "filter_bytes", "nodes", "phrases")} or None,
            "workers": res.stats["workers"],
            "filter_bytes": res.stats["filter_bytes"],
            "explaining_phrases": res.stats["nodes"],
            "compile_seconds": round(compile_s, 4),
            "memory": memory_used,
        }
        if templates:
            summary["templates"] = {
                "max_slot": max_slot, "max_slots": DEFAULT_MAX_SLOTS, "templates": int(tpl.height),
                "seeds": tstats["seeds"], "nodes": tstats["nodes"], "max_work": tstats["max_work"],
                "truncated_seeds": tstats["truncated_seeds"], "seconds": tstats["seconds"],
                "covered_tokens_without_templates": covered_phrases,
                "coverage_without_templates": covered_phrases / n_tokens if n_tokens else 0.0,
                "covered_tokens_with_templates": covered,
                "coverage_with_templates": covered / n_tokens if n_tokens else 0.0}
        t_store = time.perf_counter()

        def finish(run_id: int) -> None:
            # inside the run's transaction: the summary gets its run id and the
            # result files are written before the commit (a failure rolls back)
            summary["run_id"] = run_id
            timings["store"] = time.perf_counter() - t_store
            summary["seconds"] = {k: round(v, 4) for k, v in timings.items()}
            summary["seconds"]["total"] = round(time.perf_counter() - t_start, 4)
            summary["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
            if result_set is not None:
                result_set.prepare({"phrases.parquet": phrases, "documents.parquet": documents,
                                    "sites.parquet": sites, **extra}, "summary.json", summary)

        run_id = add_run_with_files(st, sid, sigma_n, min_len, algo, {
            "run_phrases": allp, "run_occurrences": occ,
            "run_documents": run_docs, "run_spans": spans, **store_frames}, summary, result_set, finish)
        return Run(run_id=run_id, snapshot_id=sid, phrases=phrases, documents=documents,
                   sites=sites, summary=summary)
    finally:
        if own:
            st.close()


def dedup(source: str, *, run: int | None = None, raw: bool = False, config=None,
          db: str | None = None, out: str | None = None, snapshot: str | None = None,
          progress=False, store: Store | None = None) -> dict:
    """Near-duplicate clusters (see :mod:`engine.neardup`).

    By default (no ``run``, not ``raw``) the boilerplate is mined first with
    the default parameters and removed; ``run`` uses a stored run's coverage,
    ``raw`` the raw text.  Returns the summary (with ``dedup_id``) and, under
    "clusters" and "pairs", the frames.
    """
    from .neardup import DedupConfig, detect
    cfg = config or DedupConfig()
    cfg.check()
    if run is not None and raw:
        raise BoilerscopeError("give --run or --raw, not both")
    result_set = ResultSet(out) if out is not None else None
    st, own = _open_store(source, db, store)
    try:
        sid = _snapshot_of(st, source, snapshot, progress)
        if run is not None:
            info = st.run(run)
            if info is None or info["snapshot_id"] != sid:
                raise BoilerscopeError(f"run {run} is not a run of snapshot {sid}; 'boilerscope runs' lists them")
        elif not raw:
            run = mine(st.path, DEFAULT_SIGMA, DEFAULT_MIN_LEN, store=st, snapshot=sid,
                       progress=progress).run_id
        arrays = st.arrays(sid)
        meta = st.documents_meta(sid)
        tokens = np.ascontiguousarray(arrays.tokens)
        keep = None if raw else st.run_coverage_mask(run, sid, int(tokens.shape[0]))
        with Progress("dedup", total=1.0, enabled=progress is True) as bar:
            res = detect(tokens, np.ascontiguousarray(arrays.doc_offsets), meta["doc_id"].to_numpy(), cfg,
                         keep=keep, vocab=st.vocabulary(sid), progress=progress if callable(progress) else bar.stage)
        summary = {"tool": "boilerscope", "version": __version__, "snapshot_id": sid, "run_id": run,
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
    finally:
        if own:
            st.close()


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


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
        raise BoilerscopeError(f"{out}: the cleaned snapshot is written as .parquet; give a .parquet --out")
    db_path = source if is_store(source) else (db or DEFAULT_DB)
    given = isinstance(stoplist, (tuple, list))
    for name, path in (("the snapshot", source), ("the stop-phrase list", None if given else stoplist),
                       ("the store", db_path)):
        if path and os.path.exists(path) and _same_file(out, path):
            raise BoilerscopeError(f"--out {out} is {name}; write the cleaned snapshot to another file")
    if os.path.exists(out) and not force:
        raise BoilerscopeError(f"{out} already exists; give another --out or add --force to replace it")
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
