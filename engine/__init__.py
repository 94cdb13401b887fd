"""Boilerscope engine: exact mining of repeated text (BloomSpan), coverage,
and the store it keeps its answers in."""
__version__ = "0.1.0"

from .api import Run, ingest, mine  # noqa: E402
from .errors import BoilerscopeError  # noqa: E402

__all__ = ["Run", "ingest", "mine", "BoilerscopeError", "__version__"]
