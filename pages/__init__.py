"""The dashboard's page scripts (run by Streamlit through engine/ui/nav.py).

Installed as ``engine.ui.screens``; each page reads the view state, calls the
read layer (engine.ui.data) and draws.  Helpers live in engine/ui, never here.
"""
