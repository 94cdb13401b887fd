"""Fingerprint of what a mining run writes: every result file and every store
row, as one SHA-256 per file and per table (rows sorted, so the order DuckDB
returns them in does not count).  A refactoring must leave them unchanged:

    python bench/fingerprint.py data/demo.parquet --templates > before.json
    ... change the code ...
    python bench/fingerprint.py data/demo.parquet --templates > after.json
    diff before.json after.json

Volatile fields (timings, peak memory, compile time, the version) are left out
of summary.json and of the runs table's summary; everything else counts.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import duckdb
import pyarrow.parquet as pq

VOLATILE = {"seconds", "compile_seconds", "peak_rss_bytes", "version", "created", "created_at"}


def _clean(obj):
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in sorted(obj.items()) if k not in VOLATILE}
    if isinstance(obj, list):
        return [_clean(v) for v in obj]
    return obj


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def files_fingerprint(folder: str) -> dict:
    out = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if name.endswith(".json"):
            with open(path, encoding="utf-8") as fh:
                out[name] = _sha(json.dumps(_clean(json.load(fh)), sort_keys=True).encode())
        else:  # the table's content, not the file's bytes (row groups, writer version)
            table = pq.read_table(path)
            with open(path, "rb") as fh:
                raw = _sha(fh.read())
            out[name] = [table.num_rows, table.schema.to_string(show_schema_metadata=False),
                         _sha(table.to_pandas().to_csv(index=False).encode()), raw]
    return out


def store_fingerprint(db: str) -> dict:
    con = duckdb.connect(db, read_only=True)
    out = {}
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
    for t in tables:
        cols = [r[0] for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position",
            [t]).fetchall()]
        keep = [c for c in cols if c not in VOLATILE]
        rows = con.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in keep)} FROM "{t}"').fetchall()
        if "summary" in keep:
            i = keep.index("summary")
            rows = [r[:i] + (json.dumps(_clean(json.loads(r[i])), sort_keys=True),) + r[i + 1:] for r in rows]
        rows = sorted(repr(r) for r in rows)
        out[t] = [len(rows), keep, _sha("\n".join(rows).encode())]
    con.close()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("snapshot")
    p.add_argument("--sigma", default="20")
    p.add_argument("--min-len", default="10")
    p.add_argument("--templates", action="store_true")
    p.add_argument("--checkout", default=None,
                   help="run the engine of another checkout (e.g. a git worktree of the previous release)")
    a = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db, out = os.path.join(tmp, "s.duckdb"), os.path.join(tmp, "out")
        cmd = [sys.executable, "-m", "engine.cli", "mine", os.path.abspath(a.snapshot), "--db", db,
               "--out", out, "--sigma", a.sigma, "--min-len", a.min_len, "--quiet"]
        root = os.path.abspath(a.checkout or os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        subprocess.run(cmd + (["--templates"] if a.templates else []), check=True, stdout=subprocess.DEVNULL,
                       cwd=tmp, env={**os.environ, "PYTHONPATH": root})
        json.dump({"files": files_fingerprint(out), "store": store_fingerprint(db)}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
