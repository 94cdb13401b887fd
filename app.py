"""Boilerscope dashboard: `boilerscope dashboard` (what `make run` does).

The pages are the list of engine/ui/nav.py, shared with the installed entry
script (engine/ui/app.py, which `boilerscope dashboard` runs).  A plain
`streamlit run app.py` in a checkout works too, with one difference: Streamlit
sees the pages/ folder beside this file and may draw its folder-based menu on
the first page a fresh server serves; `boilerscope dashboard` never does.
"""
from engine.ui import nav

nav.run()
