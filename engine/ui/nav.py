"""The dashboard's pages: one list, used by every entry script.

``streamlit run app.py`` in a checkout and ``boilerscope dashboard`` (which
runs :mod:`engine.ui.app`) both call :func:`run`, so they serve the same
pages under the same URL paths.  A page is named by its script's stem
(``"document"``) wherever the code switches to it.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import streamlit as st

from . import paths


class PageSpec(NamedTuple):
    script: str      # the file in pages/, without .py
    title: str
    icon: str
    url_path: str
    default: bool = False


PAGES = (
    PageSpec("load", "Load", ":material/folder_open:", "snapshots"),
    PageSpec("mine", "Mine", ":material/construction:", "mining", default=True),
    PageSpec("blocks", "Blocks", ":material/view_agenda:", "blocks"),
    PageSpec("phrases", "Phrases", ":material/repeat:", "repeats"),
    PageSpec("templates", "Templates", ":material/data_object:", "templates"),
    PageSpec("sites", "Sites", ":material/language:", "by-site"),
    PageSpec("document", "Document", ":material/article:", "reader"),
    PageSpec("duplicates", "Duplicates", ":material/content_copy:", "near-duplicates"),
    PageSpec("export", "Decisions & export", ":material/cleaning_services:", "decisions"),
)


def script(name: str) -> str:
    """The absolute path of a page's script (``st.switch_page`` takes it)."""
    if name not in {p.script for p in PAGES}:
        raise ValueError(f"no page {name!r}")
    return os.path.join(paths.pages_dir(), name + ".py")


def switch(name: str, query_params=None) -> None:
    """Open another page (its script's stem), with the view state in the URL."""
    st.switch_page(script(name), query_params=query_params)


def run() -> None:
    """Configure the page and run the navigation (the whole body of an entry script)."""
    # a local icon: the page never fetches anything from another host
    st.set_page_config(page_title="Boilerscope", page_icon=os.path.join(paths.settings_dir(), "icon.png"),
                       layout="wide")
    st.navigation([st.Page(script(p.script), title=p.title, icon=p.icon, url_path=p.url_path, default=p.default)
                   for p in PAGES]).run()
