"""Python API: the same operations as the command line.

>>> from engine import mine
>>> run = mine("data/demo.parquet", sigma=20, min_len=10, db="demo.duckdb")
>>> run.phrases.head()        # polars frame, as phrases.parquet
>>> run.summary["coverage"]
"""
from __future__ import annotations

import json
import logging
import math
import os
import re
import resource
import time
import uuid
from dataclasses import dataclass

import numpy as np
import polars as pl

from . import __version__
from . import coverage as cov
from .bloomspan import mine_tokens
from .errors import BoilerscopeError
from .fhk import mine_tokens_fhk
from .shape import choose_algorithm
from .kernels import bloomspan as KB
from .kernels import coverage as KC
from .progress import Progress
from .snapshot import SNAPSHOT_SUFFIXES, load
from .store import Store

log = logging.getLogger(__name__)

DEFAULT_DB = "boilerscope.duckdb"
DEFAULT_SIGMA = 20
DEFAULT_MIN_LEN = 10
ALGOS = ("auto", "bloomspan", "fhk")
DEFAULT_ALGO = "auto"


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
    return value


def check_out_dir(out: str) -> None:
    """Fail early (before any work) when ``out`` cannot be written."""
    try:
        os.makedirs(out, exist_ok=True)
        probe = os.path.join(out, f".probe-{uuid.uuid4().hex}")
        with open(probe, "w"):
            pass
        os.remove(probe)
    except OSError as exc:
        raise BoilerscopeError(
            f"cannot write to {out} ({exc.strerror or exc}); pick another --out folder") from None


def is_store(path: str) -> bool:
    return path.lower().endswith(".duckdb")


def ingest(source: str, db: str = DEFAULT_DB, *, progress: bool = False,
           store: Store | None = None) -> tuple[str, bool]:
    """Load a snapshot file into a store.

    Returns
    -------
    (snapshot_id, created)
        ``created`` is False when the same content was already there.
    """
    if not source.lower().endswith(SNAPSHOT_SUFFIXES):
        if is_store(source):
            raise BoilerscopeError(f"{source} is a store, not a snapshot; give a .parquet, .jsonl or .csv file")
        if not os.path.exists(source):
            raise BoilerscopeError(f"{source}: file not found; give a .parquet, .jsonl or .csv snapshot")
        raise BoilerscopeError(
            f"{source}: unknown format; a snapshot ends in .parquet, .jsonl or .csv, a store in .duckdb")
    own = store is None
    size = os.path.getsize(source) if os.path.exists(source) else 0
    with Progress("ingest", total=None, enabled=progress) as bar:
        snap = load(source, progress=bar.advance_bytes)
    st = store or Store(db)
    try:
        tk = snap.tokenized
        vocab_df = KB.word_df(tk.tokens, tk.doc_offsets, max(len(tk.vocab), 1))[:len(tk.vocab)]
        created = st.add_snapshot(snap, vocab_df)
        log.info("snapshot %s (%s bytes): %s", snap.snapshot_id, size,
                 "stored" if created else "already stored")
        return snap.snapshot_id, created
    finally:
        if own:
            st.close()


def _warm_up() -> float:
    """Compile (or load from the cache) every kernel on a tiny input."""
    t = time.perf_counter()
    mine_tokens(np.array([0, 1, 0, 1], np.int32), np.array([0, 2, 4], np.int64), 2, 2, 2,
                workers=1, filter_bytes=1 << 10)
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
        sites[res.occ_node[lo]] = KC.distinct_per_group(lo, hi, occ_sites, max(n_sites, 1))
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


def write_files(out: str, frames: dict[str, pl.DataFrame], summary_name: str, summary: dict) -> None:
    """Parquet files and a JSON summary into ``out``, each under a temporary
    name and then renamed: never half-written."""
    check_out_dir(out)
    tmp_names = []
    try:
        for name, frame in frames.items():
            tmp = os.path.join(out, f".{name}.{uuid.uuid4().hex}.tmp")
            tmp_names.append((tmp, os.path.join(out, name)))
            frame.write_parquet(tmp, compression="zstd", statistics=True)
        tmp = os.path.join(out, f".{summary_name}.{uuid.uuid4().hex}.tmp")
        tmp_names.append((tmp, os.path.join(out, summary_name)))
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(summary, fh, indent=2, sort_keys=True)
            fh.write("\n")
        for tmp, final in tmp_names:
            os.replace(tmp, final)
    except OSError as exc:
        for tmp, _ in tmp_names:
            if os.path.exists(tmp):
                os.remove(tmp)
        raise BoilerscopeError(f"cannot write results to {out} ({exc.strerror or exc}); pick another --out") from None


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
         workers: int | None = None, store: Store | None = None) -> Run:
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

    Returns
    -------
    Run
    """
    t_start = time.perf_counter()
    min_len = check_min_len(min_len)
    if algo not in ALGOS:
        raise BoilerscopeError(f"unknown algorithm '{algo}'; choose one of {', '.join(ALGOS)}")
    if out is not None:
        check_out_dir(out)
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

        compile_s = _warm_up()

        if algo == "fhk" and sigma_n < 2:
            raise BoilerscopeError("--algo fhk needs sigma >= 2; use bloomspan for sigma 1")
        t = time.perf_counter()
        choice = {}
        used = algo
        if algo == "auto":
            used, choice = choose_algorithm(tokens, doc_offsets, sigma_n, min_len)
        timings["choose"] = time.perf_counter() - t
        miner = mine_tokens_fhk if used == "fhk" else mine_tokens
        with Progress("mine", total=1.0, enabled=progress is True) as bar:
            res = miner(tokens, doc_offsets, len(vocab), sigma_n, min_len,
                        workers=workers, progress=progress if callable(progress) else bar.stage)
        timings.update(res.stats.pop("timings"))

        t = time.perf_counter()
        site_codes = meta["site"].cast(pl.Categorical).to_physical().to_numpy().astype(np.int64)
        n_sites = int(site_codes.max()) + 1 if site_codes.shape[0] else 0
        allp, phrases, occ = phrase_frames(tokens, doc_offsets, vocab, site_codes, n_sites, res)
        documents = cov.documents_frame(meta, res.covered)
        sites = cov.sites_frame(documents)
        spans = cov.spans_frame(doc_offsets, arrays.span_start, arrays.span_end,
                                res.rng_pos, res.rng_len, res.rng_node)
        run_docs = pl.DataFrame({"doc_index": np.arange(n_docs, dtype=np.int32),
                                 "covered_tokens": res.covered.astype(np.int64)})
        timings["results"] = time.perf_counter() - t

        n_tokens = int(tokens.shape[0])
        covered = int(res.covered.sum())
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
            "seconds": {k: round(v, 4) for k, v in timings.items()},
        }
        summary["seconds"]["total"] = round(time.perf_counter() - t_start, 4)
        summary["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        t = time.perf_counter()
        run_id = st.add_run(sid, sigma_n, min_len, algo, {
            "run_phrases": allp, "run_occurrences": occ,
            "run_documents": run_docs, "run_spans": spans}, summary)
        timings["store"] = time.perf_counter() - t
        summary["run_id"] = run_id
        summary["seconds"] = {k: round(v, 4) for k, v in timings.items()}
        summary["seconds"]["total"] = round(time.perf_counter() - t_start, 4)
        summary["peak_rss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        if out is not None:
            write_files(out, {"phrases.parquet": phrases, "documents.parquet": documents,
                              "sites.parquet": sites}, "summary.json", summary)
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
    if out is not None:
        check_out_dir(out)
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
        did = st.add_dedup(sid, run, raw, res.summary["config"], res.clusters, res.pairs, summary)
        summary["dedup_id"] = did
        if out is not None:
            write_files(out, {"clusters.parquet": res.clusters, "pairs.parquet": res.pairs},
                        "dedup_summary.json", summary)
        return {**summary, "clusters_frame": res.clusters, "pairs_frame": res.pairs}
    finally:
        if own:
            st.close()
