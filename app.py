"""Boilerscope dashboard: `streamlit run app.py` (or `make run`)."""
import streamlit as st

st.set_page_config(page_title="Boilerscope", page_icon="🔁", layout="wide")
st.navigation([
    st.Page("pages/load.py", title="Load", icon="📂", url_path="load"),
    st.Page("pages/mine.py", title="Mine", icon="⛏️", url_path="mine", default=True),
    st.Page("pages/phrases.py", title="Phrases", icon="🔁", url_path="phrases"),
    st.Page("pages/sites.py", title="Sites", icon="🌐", url_path="sites"),
    st.Page("pages/document.py", title="Document", icon="📄", url_path="document"),
    st.Page("pages/export.py", title="Decisions & export", icon="🧹", url_path="export"),
]).run()
