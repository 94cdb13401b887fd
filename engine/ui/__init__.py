"""The dashboard (Streamlit): everything but the page scripts.

Layout
------
``paths``     where the app's files are: a checkout, or an installed package
``launch``    ``boilerscope dashboard``: ``streamlit run`` on :mod:`engine.ui.app`
``app``       the entry script: builds the navigation (:mod:`engine.ui.nav`)
``nav``       the page list, its titles and URL paths (one list for every entry)
``boot``      every page's first line: the store, the demo on first start, the view state
``data``      the read layer for pages: :mod:`engine.views` over the app's store, cached
``actions``   what pages change: decisions, runs (ingest, mine, dedup, clean with progress)
``state``     the view state, shared through the URL
``render``    HTML and charts (document text is untrusted and always escaped)
``progress``  a worker thread and the progress bar that follows it
``widgets``   widgets shared by several pages

The page scripts live in the top-level ``pages/`` folder of a checkout; the
wheel installs them as ``engine.ui.screens`` (a package-dir mapping in
pyproject.toml), beside the demo snapshot (``engine.ui.demo``) and Streamlit's
settings (``engine.ui.settings``).  Pages import from here and never from the
store, duckdb or the token arrays.
"""
