"""The pages' read layer: :mod:`engine.views` over the app's store, cached.

``st.cache_resource`` holds the store (opened once per server process) and
each snapshot's vocabulary (loaded once, shared read-only); ``st.cache_data``
holds the results of reads that never change once written (runs, their
phrases and templates, snapshots and detections are immutable).  Reads of
what does change (the run list, the decisions, the detections list) are not
cached.  Every function reads the store named by BOILERSCOPE_DB (part of the
cache key), so pages never hold a store nor a database path.
"""
from __future__ import annotations

import functools
import os

import polars as pl
import streamlit as st

from .. import report, views
from ..store import Store
from . import paths


def db_path() -> str:
    return paths.db_path()


@st.cache_resource(show_spinner=False)
def open_store(path: str) -> Store:
    """The store at ``path``, opened once per server process."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return Store(path)


def store() -> Store:
    """The app's store (for :mod:`engine.ui.boot` and :mod:`engine.ui.actions`; pages never hold it)."""
    return open_store(db_path())


@st.cache_resource(show_spinner=False, max_entries=4)
def _vocabulary_ids(db: str, sid: str) -> dict[str, int]:
    return views.vocabulary_ids(open_store(db), sid)


@st.cache_data(show_spinner=False, max_entries=2048)
def _cached(db: str, name: str, args: tuple, kwargs: tuple):
    return getattr(views, name)(open_store(db), *args, **dict(kwargs))


def _read(view, cached: bool = True):
    """``view(store, *args)`` as ``read(*args)`` on the app's store; cached
    (keyed by the store's path, the view's name and the arguments) unless
    ``cached`` is False."""
    @functools.wraps(view)
    def read(*args, **kwargs):
        if not cached:
            return view(store(), *args, **kwargs)
        return _cached(db_path(), view.__name__, args, tuple(sorted(kwargs.items())))
    return read


# -- immutable once written: cached -------------------------------------------
snapshot_info = _read(views.snapshot_info)
site_list = _read(views.site_list)
cut_parameters = _read(views.cut_parameters)
phrase_table = _read(views.phrase_table)
phrase_row = _read(views.phrase_row)
phrase_occurrences = _read(views.phrase_occurrences)
phrase_sites = _read(views.phrase_sites)
block_table = _read(views.block_table)
block_row = _read(views.block_row)
block_members = _read(views.block_members)
block_member_texts = _read(views.block_member_texts)
block_sites = _read(views.block_sites)
block_documents = _read(views.block_documents)
template_table = _read(views.template_table)
template_row = _read(views.template_row)
template_occurrences = _read(views.template_occurrences)
template_sites = _read(views.template_sites)
text_windows = _read(views.text_windows)
with_windows = _read(views.with_windows)
site_ranking = _read(views.site_ranking)
site_top_blocks = _read(views.site_top_blocks)
contamination_histogram = _read(views.contamination_histogram)
documents_in_bin = _read(views.documents_in_bin)
compare_runs = _read(views.compare_runs)
first_doc_id = _read(views.first_doc_id)
doc_index_of = _read(views.doc_index_of)
document = _read(views.document)
covered_tokens = _read(views.covered_tokens)
document_spans = _read(views.document_spans)
document_template_spans = _read(views.document_template_spans)
document_tokens = _read(views.document_tokens)
cluster_sizes = _read(views.cluster_sizes)
cluster_documents = _read(views.cluster_documents)
dedup_summary = _read(views.dedup_summary)

# -- changes while the app runs: read each time ---------------------------------
snapshots = _read(views.snapshots, cached=False)
has_snapshot = _read(views.has_snapshot, cached=False)
latest_snapshot = _read(views.latest_snapshot, cached=False)
runs = _read(views.runs, cached=False)
run = _read(views.run, cached=False)  # a URL may name a run that is mined later: no cached miss
find_run = _read(views.find_run, cached=False)
decisions = _read(views.decisions, cached=False)
block_decisions = _read(views.block_decisions, cached=False)
decisions_map = _read(views.decisions_map, cached=False)
dedups = _read(views.dedups, cached=False)
search_documents = _read(views.search_documents, cached=False)
stoplist_files = views.stoplist_files


# -- the cut rule, with the snapshot's vocabulary loaded once ------------------
@st.cache_data(show_spinner=False, max_entries=256)
def _document_cut(db: str, sid: str, doc_index: int, min_len: int, noise: tuple, keep: tuple, max_slot: int):
    return views.document_cut(open_store(db), sid, doc_index, min_len, noise, keep, max_slot,
                              _vocabulary_ids(db, sid))


def document_cut(sid: str, doc_index: int, min_len: int, noise, keep, max_slot: int) -> dict:
    """What the decisions cut from one document: ``tokens`` and character ``ranges``."""
    return _document_cut(db_path(), sid, int(doc_index), int(min_len), tuple(sorted(noise)), tuple(sorted(keep)),
                         int(max_slot))


@st.cache_data(show_spinner=False, max_entries=32)
def _tokens_cut(db: str, sid: str, min_len: int, noise: tuple, keep: tuple, max_slot: int) -> list[int]:
    return views.tokens_cut(open_store(db), sid, min_len, noise, keep, max_slot, _vocabulary_ids(db, sid))


def tokens_cut(sid: str, min_len: int, noise, keep, max_slot: int) -> dict[str, int]:
    """noise phrase -> tokens of the snapshot it cuts on its own (keep still wins)."""
    noise, keep = tuple(noise), tuple(sorted(keep))
    return dict(zip(noise, _tokens_cut(db_path(), sid, int(min_len), noise, keep, int(max_slot))))


# -- the repetition card (engine.report): built once per run ----------------------
@st.cache_data(show_spinner=False, max_entries=16)
def _repetition_card(db: str, run_id: int) -> bytes:
    return report.build_report(open_store(db), run_id).encode("utf-8")


def repetition_card(run_id: int) -> bytes:
    """The repetition card of a run: one self-contained HTML page (UTF-8),
    the one ``boilerscope report`` writes."""
    return _repetition_card(db_path(), int(run_id))


def forget() -> None:
    """Drop the cached results (a run was deleted: its id is never reused, but its rows are gone)."""
    st.cache_data.clear()


def decided(frame: pl.DataFrame, column: str, sid: str, show: str = "all") -> pl.DataFrame:
    """``frame`` with the decision in force on each ``column`` text (``decision``),
    keeping the rows whose decision is ``show`` (all, undecided, noise, keep, unsure)."""
    out = frame.with_columns(pl.col(column).replace_strict(decisions_map(sid), default=None,
                                                           return_dtype=pl.String).alias("decision"))
    if show == "undecided":
        return out.filter(pl.col("decision").is_null())
    return out if show == "all" else out.filter(pl.col("decision") == show)
