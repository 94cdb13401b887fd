"""One benchmark run in its own process (so its peak RSS is its own).

    python bench/worker.py CORPUS.npz ALGO SIGMA L [--workers N]

Prints one JSON line: seconds (the mining call), covered (sum), a digest of
the per-document coverage, phrases, and peak RSS in bytes.
"""
import hashlib
import json
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402


def peak_rss() -> int:
    """VmHWM of this process (ru_maxrss can carry the parent's peak across exec)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main():
    path, algo, sigma, L = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    workers = int(sys.argv[6]) if len(sys.argv) > 6 and sys.argv[5] == "--workers" else None
    t0 = time.perf_counter()
    data = np.load(path)
    tokens, offsets, vocab = data["tokens"], data["doc_offsets"], int(data["vocab_size"])
    load = time.perf_counter() - t0
    out = {"algo": algo, "tokens": int(tokens.shape[0]), "load_seconds": load}
    if algo == "sql":
        from sqlpeer import sql_lgram_coverage
        t = time.perf_counter()
        covered, parts = sql_lgram_coverage(tokens, offsets, sigma, L)
        out["seconds"] = time.perf_counter() - t
        out["parts"] = parts
        out["phrases"] = None
    else:
        from engine.planner import mine_tokens, plan_mining

        def fn(tokens, offsets, vocab, sigma, L, workers=None):
            """The planner's choice for ``auto`` (what a store run does), else the miner asked for."""
            plan = plan_mining(tokens, offsets, sigma, L, algo)
            if algo == "auto":
                out["algo_used"] = plan.used
            return mine_tokens(tokens, offsets, vocab, sigma, L, workers=workers, plan=plan)
        # load the compiled kernels from numba's cache first, timed apart
        t = time.perf_counter()
        tiny = np.array([0, 1, 0, 1, 0, 1], np.int32), np.array([0, 3, 6], np.int64)
        fn(tiny[0], tiny[1], 2, 2, 2)
        if algo == "auto":  # both miners, whichever the choice will be
            for miner in ("bloomspan", "fhk"):
                mine_tokens(tiny[0], tiny[1], 2, 2, 2, algo=miner)
        out["compile_seconds"] = time.perf_counter() - t
        t = time.perf_counter()
        res = fn(tokens, offsets, vocab, sigma, L, workers=workers)
        out["seconds"] = time.perf_counter() - t
        out["parts"] = res.stats.get("timings", {})
        covered = res.covered
        out["phrases"] = int(res.node_max.sum())
    out["covered"] = int(covered.sum())
    out["digest"] = hashlib.sha1(np.asarray(covered, np.int64).tobytes()).hexdigest()[:12]
    out["peak_rss"] = peak_rss()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
