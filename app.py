"""Boilerscope dashboard: `boilerscope dashboard` (what `make run` does).

The pages are the list of engine/ui/nav.py, shared with the installed entry
script (engine/ui/app.py, which `boilerscope dashboard` runs and which has no
pages/ folder beside it).  A plain `streamlit run app.py` in a checkout works
too: Streamlit sees pages/ beside this file and wraps the first run of a fresh
server in its folder-based navigation, which the st.navigation call below
replaces (checked in a browser with Streamlit 1.67: same menu, same URL paths).
"""
from engine.ui import nav

nav.run()
