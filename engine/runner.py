"""One mining run, start to end: the orchestration every front end calls.

The command line, the Python API (:func:`engine.api.connect`) and the
dashboard call :func:`mine_snapshot`; the Spark job (:mod:`engine.spark`)
shares its last steps (:func:`publish_run`, the frames of
:mod:`engine.frames` and :class:`engine.summary.RunSummary`).  The steps:

1. read the snapshot's arrays and metadata from the store;
2. plan (:mod:`engine.planner`: which miner, in memory or out of core, the
   sigma-1 rule) and warm the planned kernels;
3. mine (:func:`engine.planner.mine_tokens`);
4. mine the templates when asked (:mod:`engine.templates`), find the
   blocks (:mod:`engine.blocks`) and build the result frames
   (:mod:`engine.frames`);
5. publish: the store's rows and the result files in one transaction
   (:func:`publish_run`).

Per-stage seconds go to the summary; progress is one callable
``progress(stage, fraction)`` or None.
"""
from __future__ import annotations

import contextlib
import os
import resource
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl

from . import frames as F
from .constants import DEFAULT_MAX_SLOTS, VERSION
from .errors import BoilerscopeError
from .files import ResultSet
from .memory import Pager, template_plan
from .params import RunParams
from .planner import mine_tokens, plan_mining, warm_up
from .summary import RunSummary
from .blocks import TemplateOccurrences, find_blocks_in_ranges
from .templates import OutOfCore, mine_templates


@dataclass
class Run:
    """The result of one mining run (the frames as in the result files)."""

    run_id: int | None
    snapshot_id: str
    phrases: pl.DataFrame
    documents: pl.DataFrame
    sites: pl.DataFrame
    summary: RunSummary


def result_set(out: str | None) -> ResultSet | None:
    """The result folder ``out`` checked (a file, or a folder of other files,
    is refused before any work), or None."""
    return ResultSet(out) if out is not None else None


def publish_run(st, sid: str, sigma: int, min_len: int, algo: str, frames: dict, summary: RunSummary,
                files: dict, results: ResultSet | None, timings: dict, t_start: float) -> int:
    """Store a run and publish its result files: inside the run's
    transaction the summary gets its run id, its seconds and peak memory and
    the files are staged into ``results`` (:func:`result_set`); the staged
    files take the folder's place after the commit, and a failed swap deletes
    the run, so the store and the files never disagree.  Returns the run id."""
    def complete(s: RunSummary) -> None:
        if s.engine is None:
            s.peak_rss_bytes = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def then(stored: dict) -> None:
        if results is not None:
            results.prepare(files, "summary.json", stored)

    stored, finish = run_finisher(summary, timings, t_start, complete, then)
    with results.staged() if results else contextlib.nullcontext():
        run_id = st.add_run(sid, sigma, min_len, algo, frames, stored, before_commit=finish)
    return published(st, run_id, results)


def run_finisher(summary: RunSummary, timings: dict, t_start: float, complete=None, then=None):
    """The summary a store writes with a run, and its ``before_commit``
    callback: inside the run's transaction the summary gets its run id, the
    store's seconds and the total, whatever ``complete(summary)`` adds, and
    the stored dict is refreshed; ``then(stored)`` follows (the result
    files' summary)."""
    t_store = time.perf_counter()
    stored = summary.to_dict()  # the store writes it after finish() completed it

    def finish(run_id: int) -> None:
        summary.run_id = run_id
        timings["store"] = time.perf_counter() - t_store
        if complete is not None:
            complete(summary)
        summary.seconds = {k: round(v, 4) for k, v in timings.items()}
        summary.seconds["total"] = round(time.perf_counter() - t_start, 4)
        stored.clear()
        stored.update(summary.to_dict())
        if then is not None:
            then(stored)
    return stored, finish


def published(st, run_id: int, results) -> int:
    """Publish a stored run's result files (``results``, if any): a failed
    swap deletes the run, so the store and the files never disagree."""
    if results is not None:
        try:
            results.publish()
        except BoilerscopeError:
            st.delete_run(run_id)
            raise
    return run_id


def _scratch(st) -> str | None:
    """The folder of a run's scratch files: the store's arrays folder (on
    the store's disk, not a RAM-backed temporary folder; the store removes
    what a killed run left there when it is next opened for writing)."""
    folder = getattr(st, "arrays_root", None)
    return folder if folder and os.path.isdir(folder) else None


def mine_snapshot(st, sid: str, params: RunParams, *, results: ResultSet | None = None, progress=None,
                  timings: dict | None = None, t_start: float | None = None) -> Run:
    """Mine snapshot ``sid`` of store ``st`` with checked ``params``
    (:meth:`engine.params.RunParams.checked`), record the run and write the
    result files into ``results`` (:func:`result_set`).  ``timings`` may hold
    stages already spent (the ingest of a one-step ``mine``), ``t_start``
    when the run began."""
    t_start = time.perf_counter() if t_start is None else t_start
    timings = {} if timings is None else timings
    report = progress or (lambda stage, fraction: None)

    t = time.perf_counter()
    arrays = st.arrays(sid)
    vocab = st.vocabulary(sid)
    meta = st.documents_meta(sid)
    n_docs = meta.height
    sigma = params.sigma_for(n_docs)
    tokens = np.ascontiguousarray(arrays.tokens)
    doc_offsets = np.ascontiguousarray(arrays.doc_offsets)
    timings["load"] = time.perf_counter() - t

    t = time.perf_counter()
    plan = plan_mining(tokens, doc_offsets, sigma, params.min_len, params.algo, params.memory)
    timings["choose"] = time.perf_counter() - t
    compile_s = warm_up(plan)
    t = time.perf_counter()
    res = mine_tokens(tokens, doc_offsets, len(vocab), sigma, params.min_len, workers=params.workers,
                      memory=params.memory, progress=report, plan=plan)
    memory_used = res.stats.pop("memory", None) or plan.memory.as_dict()
    mining = time.perf_counter() - t
    timings.update(res.stats.pop("timings"))
    timings["mining"] = mining  # the miner's stages together (the kernels' time)

    n_tokens = int(tokens.shape[0])
    covered_phrases = int(res.covered.sum())
    pos = np.asarray(res.rng_pos, np.int64)
    ends = pos + np.asarray(res.rng_len, np.int64)
    files, store_frames, tsummary, tf, occurrences = {}, {}, None, None, None
    tplan = template_plan(n_tokens, params.memory) if params.templates else None
    template_ooc = tplan is not None and tplan.out_of_core
    if params.templates:
        # the phrases as their ranges (no mask over the corpus); out of
        # core, the template miner by parts of the hash range
        t = time.perf_counter()
        tstats: dict = {}
        found = mine_templates(tokens, doc_offsets, sigma, params.min_len, params.max_slot, stats=tstats,
                               progress=report, workers=params.workers,
                               out_of_core=OutOfCore.of_plan(tplan, _scratch(st)) if template_ooc else None)
        t_frames = time.perf_counter()
        tf = F.template_frames(found, tokens, doc_offsets, arrays.span_start, arrays.span_end, vocab,
                               meta["doc_id"].to_numpy(), meta["site"].to_list(), (pos, ends))
        del found
        tstats["seconds"]["frames"] = round(time.perf_counter() - t_frames, 3)
        so = tf.store_occurrences
        occurrences = TemplateOccurrences(
            doc=so["doc_index"].to_numpy(), start=so["token_start"].to_numpy(), end=so["token_end"].to_numpy(),
            template_id=so["template_id"].to_numpy(),
            df=tf.templates["df"].to_numpy()[so["template_id"].to_numpy()])
        timings["templates"] = time.perf_counter() - t

    # blocks: the run's repeated regions (engine.blocks), on the phrases'
    # coverage and the template occurrences; the phrases' and spans' frames
    # are built meanwhile in a thread (the blocks' kernels release the GIL,
    # and they report progress from this thread)
    # (one after the other out of core: the memory plan counts them so)
    def build_tables():
        return (F.phrase_table(tokens, doc_offsets, vocab, meta["site"], res),
                F.spans_frame(doc_offsets, arrays.span_start, arrays.span_end, res.rng_pos, res.rng_len,
                              res.rng_node))
    sequential = plan.memory.out_of_core or template_ooc
    frames_pool = None if sequential else ThreadPoolExecutor(1, thread_name_prefix="boilerscope-frames")
    tables = frames_pool.submit(build_tables) if frames_pool is not None else None
    t = time.perf_counter()
    try:
        # on the covered tokens only (the phrases' ranges and the template
        # occurrences): memory in them, not the corpus
        blocks = find_blocks_in_ranges(tokens, doc_offsets, sigma, params.min_len, pos, ends,
                                       doc_key=meta["doc_id"].to_numpy(), progress=report, templates=occurrences)
    finally:
        if frames_pool is not None:  # a failed or cancelled run leaves no thread behind
            frames_pool.shutdown(wait=True, cancel_futures=True)
    node_block = F.node_blocks(blocks, doc_offsets, res)
    bfile, bspans, store_bspans = F.block_frames(
        blocks, doc_offsets, arrays.span_start, arrays.span_end, meta["doc_id"].to_numpy(), meta["site"].to_list(),
        n_tokens, st.text_slices(sid, *F.block_char_ranges(blocks, doc_offsets, arrays.span_start, arrays.span_end)),
        node_block, np.asarray(res.node_max, bool))
    timings["blocks"] = time.perf_counter() - t

    t = time.perf_counter()  # "results": what the frames still take once the blocks are done
    (allp, occ), spans = tables.result() if tables is not None else build_tables()
    allp, phrases = F.phrase_blocks(allp, node_block)
    per_doc = np.asarray(res.covered, np.int64)
    if sequential:  # over the budget: give back the pages the results read
        for arr in (arrays.tokens, arrays.span_start, arrays.span_end):
            Pager(arr).release()
    timings["results"] = time.perf_counter() - t
    store_frames = {"run_blocks": bfile, "run_block_spans": store_bspans}
    files = {"blocks.parquet": bfile, "block_spans.parquet": bspans}
    if tf is not None:
        so = tf.store_occurrences
        tblock = blocks.block_of_groups(so["template_id"].to_numpy(), so["doc_index"].to_numpy(),
                                        so["token_start"].to_numpy(), so["token_end"].to_numpy(),
                                        tf.templates.height)
        per_doc = np.asarray(tf.covered_per_doc, np.int64)
        store_frames.update({
            "run_templates": F.with_block_ids(tf.store_templates, tblock)
            .with_columns(pl.lit(params.max_slot, pl.Int32).alias("max_slot")),
            "run_template_occurrences": tf.store_occurrences})
        files.update({"templates.parquet": F.with_block_ids(tf.templates, tblock),
                      "template_occurrences.parquet": tf.occurrences, "spans.parquet": tf.spans})
        covered = int(per_doc.sum())
        tsummary = {
            "max_slot": params.max_slot, "max_slots": DEFAULT_MAX_SLOTS, "templates": int(tf.templates.height),
            "seeds": tstats["seeds"], "nodes": tstats["nodes"], "max_work": tstats["max_work"],
            "truncated_seeds": tstats["truncated_seeds"], "seconds": tstats["seconds"],
            "out_of_core": template_ooc, "parts": tstats["parts"],
            "covered_tokens_without_templates": covered_phrases,
            "coverage_without_templates": covered_phrases / n_tokens if n_tokens else 0.0,
            "covered_tokens_with_templates": covered,
            "coverage_with_templates": covered / n_tokens if n_tokens else 0.0}
    documents = F.documents_frame(meta, per_doc)
    sites = F.sites_frame(documents)
    run_docs = pl.DataFrame({"doc_index": np.arange(n_docs, dtype=np.int32), "covered_tokens": per_doc})
    summary = RunSummary(blocks=blocks.n_blocks,
        version=VERSION, snapshot_id=sid, sigma=sigma, sigma_given=str(params.sigma), min_len=params.min_len,
        algo=params.algo, algo_used=plan.used, algo_choice=plan.choice or None, documents=n_docs,
        tokens=n_tokens, covered_tokens=int(per_doc.sum()), phrases=int(phrases.height),
        filters={k: v for k, v in res.stats.items()
                 if k not in ("workers", "filter_bytes", "nodes", "phrases")} or None,
        workers=res.stats["workers"], filter_bytes=res.stats["filter_bytes"],
        explaining_phrases=res.stats["nodes"], compile_seconds=round(compile_s, 4), memory=memory_used,
        templates=tsummary)
    report("store", 0.0)
    run_id = publish_run(
        st, sid, sigma, params.min_len, params.algo,
        {"run_phrases": allp, "run_occurrences": occ, "run_documents": run_docs, "run_spans": spans,
         **store_frames}, summary,
        {"phrases.parquet": phrases, "documents.parquet": documents, "sites.parquet": sites, **files},
        results, timings, t_start)
    return Run(run_id=run_id, snapshot_id=sid, phrases=phrases, documents=documents, sites=sites, summary=summary)
