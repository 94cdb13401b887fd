"""Progress bars on stderr (tqdm) for the command line; no-ops when disabled."""
from __future__ import annotations

import sys

from tqdm import tqdm


class Progress:
    """A stage-aware progress bar.

    ``advance_bytes(n)`` advances a byte counter (ingestion); ``stage(name,
    fraction)`` shows a named stage and the fraction done (mining).
    """

    def __init__(self, desc: str, total=None, enabled: bool = True):
        self.enabled = enabled
        self.desc = desc
        self.bar = None
        self.total = total

    def __enter__(self):
        if self.enabled:
            self.bar = tqdm(total=self.total, desc=self.desc, file=sys.stderr,
                            unit="B" if self.total is None else "", unit_scale=True,
                            leave=False, dynamic_ncols=True, mininterval=0.5,
                            delay=1.0)
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()

    def advance_bytes(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def stage(self, name: str, fraction: float) -> None:
        if self.bar is not None:
            self.bar.set_description(f"{self.desc}: {name}", refresh=False)
            target = round(min(max(fraction, 0.0), 1.0), 3)
            if target > self.bar.n:
                self.bar.update(target - self.bar.n)
