"""``boilerscope dashboard``: serve the app with Streamlit's public command line.

The entry script is :mod:`engine.ui.app` (inside the package, so an installed
wheel serves the same app from any folder); Streamlit's settings come from
the shipped ``config.toml`` as command-line options, since Streamlit itself
reads ``.streamlit/config.toml`` only from the folder it is started in.
"""
from __future__ import annotations

import os
import sys
import tomllib

import streamlit.web.cli as stcli

from ..constants import DEFAULT_ADDRESS, DEFAULT_PORT
from . import paths

ENTRY = os.path.join(paths.HERE, "app.py")


def settings_flags(config: str | None = None) -> list[str]:
    """The options of a Streamlit config.toml as ``--section.option=value`` flags."""
    config = config or os.path.join(paths.settings_dir(), "config.toml")
    with open(config, "rb") as fh:
        sections = tomllib.load(fh)
    flags = []
    for section, options in sections.items():
        for option, value in options.items():
            value = str(value).lower() if isinstance(value, bool) else str(value)
            flags.append(f"--{section}.{option}={value}")
    return flags


def command(port: int = DEFAULT_PORT, address: str = DEFAULT_ADDRESS) -> list[str]:
    """The arguments of ``streamlit`` (after the program name)."""
    return ["run", ENTRY, *settings_flags(), f"--server.port={int(port)}", f"--server.address={address}"]


def serve(db: str | None = None, port: int = DEFAULT_PORT, address: str = DEFAULT_ADDRESS) -> int:
    """Run the dashboard in this process until it is stopped (Streamlit needs
    the main thread); the store goes to the server as BOILERSCOPE_DB (an
    absolute path, resolved here)."""
    os.environ["BOILERSCOPE_DB"] = os.path.abspath(db) if db else paths.db_path()
    sys.argv = ["streamlit", *command(port, address)]
    return stcli.main()
