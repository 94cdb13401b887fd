"""Cut the demo snapshot (data/demo.parquet) from ../shared/corpora/webdocs.parquet.

A fixed, seeded sample of pages from every site, small enough to ship (a few
MB) and to mine in about a second.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "shared", "corpora", "webdocs.parquet")
PER_SITE = 250
MAX_CHARS = 40_000


def main() -> None:
    if not os.path.exists(SOURCE):
        sys.exit(f"{SOURCE} not found: the demo is cut from the shared corpora")
    table = pq.read_table(SOURCE)
    rng = np.random.default_rng(20261202)
    lengths = pc.utf8_length(table["text"]).to_numpy(zero_copy_only=False)
    sites = table["site"].to_numpy(zero_copy_only=False)
    keep = []
    for site in sorted(set(sites)):
        idx = np.flatnonzero((sites == site) & (lengths <= MAX_CHARS))
        keep.extend(sorted(rng.choice(idx, size=min(PER_SITE, idx.shape[0]), replace=False)))
    out = table.take(np.array(sorted(keep))).select(["doc_id", "site", "url", "text"])
    pq.write_table(out, os.path.join(HERE, "demo.parquet"), compression="zstd")
    print(f"demo.parquet: {out.num_rows} documents")


if __name__ == "__main__":
    main()
