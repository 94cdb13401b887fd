"""The dashboard's entry script, as installed: ``boilerscope dashboard`` runs it.

It lives here, away from any ``pages/`` folder, so Streamlit never switches
to its folder-based navigation; the pages are the list of :mod:`engine.ui.nav`.
"""
from engine.ui import nav

nav.run()
