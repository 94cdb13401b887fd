"""The dashboard's store: one connection per process, cached queries.

``st.cache_resource`` holds the connection (the store is opened once per
server process); ``st.cache_data`` holds query results that never change once
written (runs are immutable).
"""
from __future__ import annotations

import os

import streamlit as st

from engine import views
from engine.store import Store

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def db_path() -> str:
    return os.environ.get("BOILERSCOPE_DB", os.path.join(ROOT, ".boilerscope", "app.duckdb"))


@st.cache_resource(show_spinner=False)
def _store(path: str) -> Store:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    return Store(path)


def store() -> Store:
    return _store(db_path())


# -- cached queries (runs are immutable once written) ----------------------
@st.cache_data(show_spinner=False, max_entries=64)
def run_summary(db: str, run_id: int) -> dict:
    return _store(db).run(run_id) or {}


@st.cache_data(show_spinner=False, max_entries=64)
def snapshot_info(db: str, sid: str) -> dict:
    return views.snapshot_info(_store(db), sid)


@st.cache_data(show_spinner=False, max_entries=64)
def site_list(db: str, sid: str) -> list[str]:
    return views.site_list(_store(db), sid)


def decisions_map(s: Store, sid: str) -> dict[str, str]:
    """phrase -> decision in force on snapshot ``sid`` (its own over the project's)."""
    df = s.decisions(sid)
    return dict(zip(df["phrase"].to_list(), df["decision"].to_list()))
