"""Boilerscope engine: exact mining of repeated text (BloomSpan), coverage,
and the store it keeps its answers in."""

import os as _os


def _numba_cache_dir() -> None:
    """Numba caches compiled kernels beside their sources; where the checkout
    is not writable (another user's install) it would fail on every command,
    so the cache goes to the user's cache folder instead (before numba loads)."""
    if _os.environ.get("NUMBA_CACHE_DIR"):
        return
    kernels = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "kernels")
    cache = _os.path.join(kernels, "__pycache__")
    if _os.access(cache if _os.path.isdir(cache) else kernels, _os.W_OK):
        return
    import tempfile
    base = _os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache")
    for folder in (_os.path.join(base, "boilerscope", "numba"),
                   _os.path.join(tempfile.gettempdir(), f"boilerscope-numba-{_os.getuid()}")):
        try:
            _os.makedirs(folder, exist_ok=True)
        except OSError:
            continue
        if _os.access(folder, _os.W_OK):
            _os.environ["NUMBA_CACHE_DIR"] = folder
            return


_numba_cache_dir()

from .constants import VERSION as __version__  # noqa: E402
from .api import Boilerscope, Run, Snapshot, clean, connect, dedup, ingest, mine  # noqa: E402
from .errors import BoilerscopeError  # noqa: E402
from .params import RunParams  # noqa: E402
from .summary import RunSummary  # noqa: E402

__all__ = ["Boilerscope", "BoilerscopeError", "Run", "RunParams", "RunSummary", "Snapshot", "clean", "connect",
           "dedup", "ingest", "mine", "__version__"]
