"""Where the dashboard's files are, in a checkout and in an installed package.

A checkout keeps them at its top level (``app.py``, ``pages/``, ``data/``,
``.streamlit/``); a wheel installs the same folders inside this package
(``screens/``, ``demo/``, ``settings/``: the package-dir mapping of
pyproject.toml).  An editable install runs from the checkout.
"""
from __future__ import annotations

import os

from ..errors import BoilerscopeError

HERE = os.path.dirname(os.path.abspath(__file__))
#: The folder holding the ``engine`` package: a checkout's root, or site-packages.
ROOT = os.path.dirname(os.path.dirname(HERE))


def in_checkout() -> bool:
    """True when the engine runs from a checkout (app.py and pages/ beside it)."""
    return os.path.isfile(os.path.join(ROOT, "app.py")) and os.path.isfile(os.path.join(ROOT, "pages", "mine.py"))


def _folder(checkout: str, installed: str) -> str:
    return os.path.join(ROOT, checkout) if in_checkout() else os.path.join(HERE, installed)


def pages_dir() -> str:
    """The page scripts."""
    folder = _folder("pages", "screens")
    if not os.path.isfile(os.path.join(folder, "mine.py")):
        raise BoilerscopeError(f"the dashboard's page scripts are missing from {folder}; reinstall Boilerscope")
    return folder


def demo_dir() -> str:
    """The folder of the demo snapshot (the first folder the Load page lists)."""
    return _folder("data", "demo")


def demo_file() -> str:
    return os.path.join(demo_dir(), "demo.parquet")


def settings_dir() -> str:
    """Streamlit's settings (config.toml) and the app's icon."""
    return _folder(".streamlit", "settings")


def default_db() -> str:
    """The app's store when neither ``--db`` nor BOILERSCOPE_DB names one:
    ``.boilerscope/app.duckdb`` beside app.py in a checkout, else in the
    folder the dashboard is started from."""
    base = ROOT if in_checkout() else os.getcwd()
    return os.path.join(base, ".boilerscope", "app.duckdb")


def db_path() -> str:
    return os.environ.get("BOILERSCOPE_DB") or default_db()
