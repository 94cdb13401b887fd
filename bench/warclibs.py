"""fastwarc or warcio for WET files (issue 29: "measure both and say which and why").

Reads the same WET files (bench/formats.py writes webdocs as 8 per-record
gzip WET files) with each library, the way the ingest reads them: every
``conversion`` record, its URI and its payload decoded as UTF-8; nothing
else.  Interleaved, median of --runs after a warm-up, each read in its own
process (peak RSS from os.wait4).  Both must give the same documents (a
hash of every URI and payload, compared).

    python bench/warclibs.py                  # bench/work/formats/x1/wet
    python bench/warclibs.py FOLDER --runs 5

Results: bench/results/warclibs.json and .md.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
DEFAULT = os.path.join(HERE, "work", "formats", "x1", "wet")


def read_fastwarc(paths):
    from fastwarc import ArchiveIterator, WarcRecordType
    for p in paths:
        with open(p, "rb") as fh:
            for rec in ArchiveIterator(fh, record_types=WarcRecordType.conversion, parse_http=False):
                yield rec.headers.get("WARC-Target-URI"), rec.reader.read()


def read_warcio(paths):
    from warcio.archiveiterator import ArchiveIterator
    for p in paths:
        with open(p, "rb") as fh:
            for rec in ArchiveIterator(fh):
                if rec.rec_type == "conversion":
                    yield rec.rec_headers.get_header("WARC-Target-URI"), rec.content_stream().read()


def child(lib: str, folder: str) -> None:
    paths = sorted(glob.glob(os.path.join(folder, "*.warc.wet*")))
    t = time.perf_counter()
    h, n, size = hashlib.blake2b(digest_size=16), 0, 0
    for uri, payload in (read_fastwarc if lib == "fastwarc" else read_warcio)(paths):
        payload.decode("utf-8", "replace")
        h.update((uri or "").encode())
        h.update(payload)
        n += 1
        size += len(payload)
    print(json.dumps({"seconds": time.perf_counter() - t, "records": n, "bytes": size, "digest": h.hexdigest()}))


def run(lib: str, folder: str) -> dict:
    p = subprocess.Popen([sys.executable, __file__, "--child", lib, folder], stdout=subprocess.PIPE)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    if status:
        raise SystemExit(f"{lib} failed")
    return {**json.loads(out), "peak_rss_bytes": usage.ru_maxrss * 1024}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", default=DEFAULT)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.child:
        child(a.child, a.folder)
        return 0
    if not glob.glob(os.path.join(a.folder, "*.warc.wet*")):
        raise SystemExit(f"{a.folder}: no WET files; run bench/formats.py first (it writes them)")
    libs = ("fastwarc", "warcio")
    for lib in libs:
        run(lib, a.folder)  # warm-up: page cache, imports
    res = {lib: [] for lib in libs}
    for _ in range(a.runs):
        for lib in libs:
            res[lib].append(run(lib, a.folder))
    digests = {r["digest"] for rs in res.values() for r in rs}
    base = statistics.median(r["seconds"] for r in res["fastwarc"])
    rows = []
    for lib, rs in res.items():
        med = statistics.median(r["seconds"] for r in rs)
        rows.append({"library": lib, "median_seconds": med, "vs_fastwarc": med / base,
                     "mb_per_s": rs[0]["bytes"] / med / 1e6, "records": rs[0]["records"],
                     "peak_rss_bytes": max(r["peak_rss_bytes"] for r in rs),
                     "runs": [round(r["seconds"], 3) for r in rs]})
    report = {"folder": a.folder, "runs": a.runs, "same_documents": len(digests) == 1, "rows": rows}
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "warclibs.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    md = [f"# WET reading: fastwarc vs warcio, median of {a.runs} after a warm-up", "",
          f"Same documents from both: {report['same_documents']}.", "",
          "| library | median s | time vs fastwarc | payload MB/s | records | peak RSS | runs |",
          "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        md.append(f"| {r['library']} | {r['median_seconds']:.2f} | {r['vs_fastwarc']:.2f} | {r['mb_per_s']:.0f} | "
                  f"{r['records']} | {r['peak_rss_bytes'] / 2**20:.0f} MiB | {', '.join(map(str, r['runs']))} |")
    with open(os.path.join(RESULTS, "warclibs.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")
    print("\n".join(md))
    return 0 if report["same_documents"] else 1


if __name__ == "__main__":
    sys.exit(main())
