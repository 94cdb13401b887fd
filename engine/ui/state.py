"""View state: the analyst's choices, shared through the URL.

Choices live in non-widget session keys (``bs.*``) and are written to
``st.query_params`` on every page, so a copied URL reopens the same view in a
fresh browser, on any page.  Keys:

========  =====================================================  ==========
key       what                                                   kind
========  =====================================================  ==========
snapshot  the active snapshot                                    text
run       the active run                                         number
sigma     the Mine sliders (may differ from the run's: pending)  number
min_len   (idem)                                                 number
site      the Phrases page's site filter                         text
q         the Phrases page's text search                         text
phrase    the phrase opened on the Phrases page (its id)         number
sites     the sites compared on the Sites page                   list
bar       the histogram bar clicked (site, bin)                  list
doc       the document opened (its doc_id, never a row index)    number
clean     the Document view shows the noise removed              flag
cluster   the Duplicates page's cluster                          number
template  the template opened on the Templates page (its id)     number
tq        the Templates page's text search                       text
block     the block opened on the Blocks page (its id)           number
minsites  the Phrases page's minimum number of sites             number
decided   the Phrases page's decision filter                     text
log       the charts' log scale (Phrases, Sites)                 flag
========  =====================================================  ==========

A choice belongs to what it was made on: changing the snapshot drops every
choice made on the old one, changing the run drops the phrase, the bar, the template and the block
(:func:`set_snapshot`, :func:`set_run`).  Values from a URL are parsed and
checked; a bad one is dropped, never raised.
"""
from __future__ import annotations

import streamlit as st

STATE = ("snapshot", "run", "sigma", "min_len", "site", "q", "phrase", "sites", "bar", "doc", "clean",
         "cluster", "template", "tq", "block", "minsites", "decided", "log", "view")
INT_STATE = ("run", "sigma", "min_len", "phrase", "doc", "cluster", "template", "block", "minsites")
#: On/off choices ("1" in the URL when on).
FLAG_STATE = ("clean", "log")
LIST_STATE = ("sites", "bar")
#: Choices that belong to a snapshot, and to a run.
OF_SNAPSHOT = ("run", "site", "q", "phrase", "sites", "bar", "doc", "cluster", "template", "tq", "block")
OF_RUN = ("phrase", "bar", "template", "block")


def get(key: str, default=None):
    return st.session_state.get(f"bs.{key}", default)


def put(key: str, value) -> None:
    st.session_state[f"bs.{key}"] = value


def bind(widget: str, key: str, empty, convert=lambda v: v):
    """Seed a widget (before it is drawn) from the view state; returns the
    ``on_change`` callback that writes the widget's value back."""
    want = get(key)
    want = empty if want is None else want
    if st.session_state.get(widget) != want:
        st.session_state[widget] = want
    return lambda: put(key, convert(st.session_state[widget]) if st.session_state[widget] != empty else None)


def set_snapshot(sid: str | None) -> None:
    """Make ``sid`` active; the choices made on another snapshot go."""
    if sid != get("snapshot"):
        for key in OF_SNAPSHOT:
            put(key, None)
    put("snapshot", sid)


def set_run(run_id: int | None) -> None:
    """Make ``run_id`` active; the choices made on another run go."""
    if run_id != get("run"):
        for key in OF_RUN:
            put(key, None)
    put("run", run_id)


def _parse(key: str, params):
    if key in LIST_STATE:
        values = params.get_all(key)
        if key == "bar":
            if len(values) != 2:
                return None
            try:
                return [values[0], int(values[1])]
            except ValueError:
                return None
        return values or None
    value = params.get(key)
    if value is None or "\x00" in value:
        return None
    if key in INT_STATE:
        try:
            return int(value)
        except ValueError:
            return None
    if key in FLAG_STATE:
        return value == "1"
    return value


def restore() -> None:
    """Once per session: the choices of a shared URL."""
    if "bs.init" in st.session_state:
        return
    params = st.query_params
    for key in STATE:
        if key in params:
            value = _parse(key, params)
            if value is not None:
                put(key, value)
    st.session_state["bs.init"] = True


def _url_value(key: str, value):
    if key in LIST_STATE:
        return [str(v) for v in value]
    if key in FLAG_STATE:
        return "1" if value else None
    return str(value)


def share() -> None:
    """Write the view state to the URL."""
    for key in STATE:
        value = get(key)
        value = None if value is None or value == "" or value == [] else _url_value(key, value)
        if value is None:
            if key in st.query_params:
                del st.query_params[key]
        elif key in LIST_STATE:
            if st.query_params.get_all(key) != value:
                st.query_params[key] = value
        elif st.query_params.get(key) != value:
            st.query_params[key] = value


def url_params() -> list[tuple[str, str]]:
    """The view state as query parameters (for ``st.switch_page``)."""
    out = []
    for key in STATE:
        value = get(key)
        if value is None or value == "" or value == []:
            continue
        value = _url_value(key, value)
        if isinstance(value, list):
            out += [(key, v) for v in value]
        elif value is not None:
            out.append((key, value))
    return out
