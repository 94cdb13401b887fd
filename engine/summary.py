"""The summary of a run: one typed record for every engine.

``summary.json`` and the store's ``runs.summary`` column hold
:meth:`RunSummary.to_dict`: the fields in the order declared here, the ones
an engine does not fill (``None`` for the optional groups below) left out,
except the few that are always written, ``None`` included.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

#: Written even when None (a reader tests them for None).
ALWAYS = {"snapshot_id", "run_id", "algo_choice", "filters"}


@dataclass
class RunSummary:
    """What a run did, on what, with which parameters, and what it found.

    ``sigma`` is the document count the run used and ``sigma_given`` what
    was asked (``"0.5%"``); ``algo`` what was asked and ``algo_used`` /
    ``algo_choice`` what the planner (:mod:`engine.planner`) chose and why;
    ``memory`` the memory plan.  ``filters`` are the miner's counters,
    ``seconds`` its stages and the whole run's.  ``templates`` is filled by
    a ``--templates`` run, ``engine``/``master``/``spark`` by a Spark run.
    """

    snapshot_id: str | None
    sigma: int
    sigma_given: str
    min_len: int
    algo: str
    algo_used: str
    documents: int
    tokens: int
    covered_tokens: int
    phrases: int
    blocks: int | None = None
    version: str = ""
    tool: str = "boilerscope"
    run_id: int | None = None
    engine: str | None = None
    master: str | None = None
    algo_choice: dict | None = None
    filters: dict | None = None
    workers: int | None = None
    filter_bytes: int | None = None
    explaining_phrases: int | None = None
    compile_seconds: float | None = None
    memory: dict | None = None
    spark: dict | None = None
    templates: dict | None = None
    seconds: dict | None = None
    peak_rss_bytes: int | None = None

    #: The order of the keys in summary.json.
    ORDER = ("tool", "version", "engine", "master", "snapshot_id", "run_id", "sigma", "sigma_given", "min_len",
             "algo", "algo_used", "algo_choice", "documents", "tokens", "covered_tokens", "coverage", "phrases",
             "blocks", "filters", "workers", "filter_bytes", "explaining_phrases", "compile_seconds", "memory", "spark",
             "templates", "seconds", "peak_rss_bytes")

    @property
    def coverage(self) -> float:
        """Covered tokens over tokens (0 for an empty snapshot)."""
        return self.covered_tokens / self.tokens if self.tokens else 0.0

    def to_dict(self) -> dict[str, Any]:
        """summary.json's object.  A local run writes the ``ALWAYS`` keys even
        when None; a Spark run has no planner or miner counters to write."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values["coverage"] = self.coverage
        always = ALWAYS if self.engine is None else {"snapshot_id", "run_id"}
        return {k: values[k] for k in self.ORDER if values[k] is not None or k in always}

    def __getitem__(self, key: str):
        """``summary["coverage"]``: the key of summary.json (as the summary
        read back from a file or the store is indexed)."""
        return self.to_dict()[key]
