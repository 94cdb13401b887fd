"""Widgets shared by the Phrases and Templates pages: the detail picker, the
decision row and the document opener (each keyed by its page's prefix)."""
from __future__ import annotations

import streamlit as st

from ..constants import ALL_SNAPSHOTS
from . import actions, nav, state


def opened(fetch, ids: list, key: str, what: str) -> dict:
    """The row of the item opened (view-state ``key``), else of the table's
    first (then written to ``key``); stops the page when the table is empty
    (a search with no match shows no detail, not the item opened before)."""
    if not ids:
        st.info(f"No {what} matches the search and filters.")
        st.stop()
    current = state.get(key)
    row = fetch(int(current)) if current is not None else None
    if row is None:
        row = fetch(ids[0])
        state.put(key, row[f"{key}_id"])
    return row


def detail(fetch, table, column: str, key: str, prefix: str, title: str) -> dict:
    """The detail of the item opened (view-state ``key``, else the table's
    first): its row, after the URL is updated and the picker drawn (labelled
    by the table's ``column``, on one line)."""
    ids = table[f"{key}_id"].to_list()
    row = opened(fetch, ids, key, key)
    current = int(row[f"{key}_id"])
    state.share()
    labels = dict(zip(ids, table[column].to_list()))
    labels.setdefault(current, row[column])
    detail_picker(title, ids, {k: " ".join(str(v).split()) for k, v in labels.items()}, current, prefix, key)
    return row


def open_selected(event, ids: list, key: str) -> None:
    """A table's single-row selection opens that item (view-state ``key``)."""
    rows = list(event.selection.rows) if event is not None and hasattr(event, "selection") else []
    if rows and rows[0] < len(ids) and ids[rows[0]] != state.get(key):
        state.put(key, ids[rows[0]])
        st.rerun()


def detail_picker(label: str, ids: list, labels: dict, current: int, prefix: str, key: str) -> None:
    """A picker of the item opened (by id, never by its label); choosing one
    writes view-state ``key``."""
    options = ids if current in ids else [current, *ids]
    st.session_state[f"{prefix}.detail"] = current
    st.selectbox(label, options, key=f"{prefix}.detail", format_func=lambda i: f"#{i} · {labels[i][:110]}",
                 on_change=lambda: state.put(key, int(st.session_state[f"{prefix}.detail"])))


def scope(prefix: str, sid: str) -> str:
    """Where a decision made on this page applies: this snapshot or all ('*')."""
    return sid if st.session_state.get(f"{prefix}.scope") == "this snapshot" else ALL_SNAPSHOTS


def decision_row(text: str, current: str | None, prefix: str, sid: str) -> None:
    """noise / keep / unsure / clear buttons, a note and the scope radio for ``text``."""
    d1, d2, d3, d4, d5, d6 = st.columns([1, 1, 1, 1, 2, 2])
    note = d5.text_input("Note (optional)", key=f"{prefix}.note")
    d6.radio("Applies to", ["all snapshots", "this snapshot"], key=f"{prefix}.scope", horizontal=True,
             help="A decision for this snapshot wins over the project's (all snapshots of the store).")
    for col, label in ((d1, "noise"), (d2, "keep"), (d3, "unsure")):
        if col.button(label, key=f"{prefix}.decide.{label}", type="primary" if current == label else "secondary"):
            actions.decide(text, label, note, scope=scope(prefix, sid))
            st.rerun()
    if d4.button("clear", key=f"{prefix}.decide.clear"):
        actions.decide(text, None, scope=scope(prefix, sid))
        st.rerun()


def document_opener(col, docs: list, prefix: str) -> None:
    """Pick one of ``docs`` (doc_ids) and open it in the Document view."""
    if not docs:
        return
    pick = col.selectbox("Open a document", docs, key=f"{prefix}.open", format_func=lambda d: f"#{d}")
    if col.button("Open in Document view", key=f"{prefix}.open_btn"):
        state.put("doc", int(pick))
        nav.switch("document", query_params=state.url_params())
