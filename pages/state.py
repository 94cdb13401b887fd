"""View state: the analyst's choices, shared through the URL.

Choices live in non-widget session keys (``bs.*``) and are written to
``st.query_params`` on every page, so a copied URL reopens the same view.
"""
from __future__ import annotations

import streamlit as st

STATE = ("snapshot", "run", "sigma", "min_len", "site", "doc", "phrase")
INT_STATE = ("run", "sigma", "min_len", "doc")


def get(key: str, default=None):
    return st.session_state.get(f"bs.{key}", default)


def put(key: str, value) -> None:
    st.session_state[f"bs.{key}"] = value


def restore() -> None:
    """Once per session: the choices of a shared URL (values that are not
    whole numbers where numbers are due are ignored)."""
    if "bs.init" in st.session_state:
        return
    params = st.query_params
    for key in STATE:
        if key in params:
            value = params[key]
            if key in INT_STATE:
                try:
                    value = int(value)
                except ValueError:
                    continue
            put(key, value)
    st.session_state["bs.init"] = True


def share() -> None:
    """Write the view state to the URL."""
    for key in STATE:
        value = get(key)
        if value is None or value == "":
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != str(value):
            st.query_params[key] = str(value)
