"""Boilerscope dashboard: `streamlit run app.py` (or `make run`).

Start it with `boilerscope dashboard` (what `make run` does): a plain
`streamlit run app.py` works too, but Streamlit then serves the first session of
a fresh server with its folder-based navigation of pages/.  URL paths differ
from the file names in pages/ for the same reason.
"""
import os

import streamlit as st

# a local icon: the page never fetches anything from another host
st.set_page_config(page_title="Boilerscope", page_icon=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                  ".streamlit", "icon.png"), layout="wide")
st.navigation([
    st.Page("pages/load.py", title="Load", icon=":material/folder_open:", url_path="snapshots"),
    st.Page("pages/mine.py", title="Mine", icon=":material/construction:", url_path="mining", default=True),
    st.Page("pages/phrases.py", title="Phrases", icon=":material/repeat:", url_path="repeats"),
    st.Page("pages/templates.py", title="Templates", icon=":material/data_object:", url_path="templates"),
    st.Page("pages/sites.py", title="Sites", icon=":material/language:", url_path="by-site"),
    st.Page("pages/document.py", title="Document", icon=":material/article:", url_path="reader"),
    st.Page("pages/duplicates.py", title="Duplicates", icon=":material/content_copy:", url_path="near-duplicates"),
    st.Page("pages/export.py", title="Decisions & export", icon=":material/cleaning_services:", url_path="decisions"),
]).run()
