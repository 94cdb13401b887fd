"""The ``boilerscope`` command line.

Bad input prints one line (what is wrong, what to do) and exits with status 2.
"""
from __future__ import annotations

import argparse
import errno
import logging
import os
import sys
import threading

from tqdm import tqdm

from .constants import (ALGOS, DEFAULT_ADDRESS, DEFAULT_ALGO, DEFAULT_DB, DEFAULT_MAX_SLOT, DEFAULT_MIN_LEN, DEFAULT_PORT,
                        DEFAULT_SIGMA, VERSION)
from .errors import BoilerscopeError
from .neardup import DESCRIPTIONS, SCHEMES, DedupConfig

#: The defaults of a detection: one source for the command line, the API and the page.
DEDUP = DedupConfig()


class StderrBars:
    """The command line's progress: one bar on stderr (tqdm) per stage,
    driven by the engine's ``progress(stage, fraction)`` protocol
    (:mod:`engine.progress`).  ``with StderrBars(quiet) as progress:``;
    ``progress`` is None when quiet."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.bar = None
        self.stage = None

    def __enter__(self):
        return None if self.quiet else self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()

    def __call__(self, stage: str, fraction: float) -> None:
        if stage != self.stage:
            if self.bar is not None:
                self.bar.close()
            self.stage = stage
            self.bar = tqdm(total=1.0, desc=stage, file=sys.stderr, leave=False, dynamic_ncols=True,
                            mininterval=0.5, delay=1.0, bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}")
        target = round(min(max(fraction, 0.0), 1.0), 3)
        if target > self.bar.n:
            self.bar.update(target - self.bar.n)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2
        self.exit(2, f"boilerscope: error: {message} (see 'boilerscope {self.prog.split()[-1]} --help')\n"
                  if " " in self.prog else f"boilerscope: error: {message} (see 'boilerscope --help')\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not a count of at least 1")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="boilerscope", description="Find the repeated text (boilerplate) in an index snapshot.")
    p.add_argument("--version", action="version", version=f"boilerscope {VERSION}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    ing = sub.add_parser("ingest", help="load a snapshot (.parquet, .jsonl, .jsonl.gz/.zst/.bz2, .csv, or shards) into the store")
    ing.add_argument("snapshot", help="a snapshot file, a folder of .parquet or (compressed) .jsonl shards, "
                                      "or a glob of shards ('crawl/part-*.parquet')")
    ing.add_argument("--db", default=DEFAULT_DB, help="the store (default: %(default)s)")
    ing.add_argument("--quiet", action="store_true", help="no progress bars")

    m = sub.add_parser("mine", help="mine the maximal repeated phrases and the coverage")
    m.add_argument("source", help="a snapshot file or shards (ingested first), or a store (.duckdb)")
    m.add_argument("--sigma", default=str(DEFAULT_SIGMA),
                   help="minimum documents: a count or a share like 0.5%% (default %(default)s)")
    m.add_argument("--min-len", default=str(DEFAULT_MIN_LEN),
                   help="minimum phrase length in tokens, >= 2 (default %(default)s)")
    m.add_argument("--algo", default=DEFAULT_ALGO, choices=ALGOS,
                   help="auto (default: fhk on long periodic runs, else bloomspan), bloomspan, "
                        "or fhk, the suffix-array baseline")
    m.add_argument("--db", default=None, help=f"the store (default: {DEFAULT_DB}; with --engine spark: "
                                              "none unless given)")
    m.add_argument("--snapshot", default=None, help="snapshot id in a store holding several (default: latest)")
    m.add_argument("--out", default=None, help="folder for phrases/documents/sites.parquet and summary.json")
    m.add_argument("--templates", action="store_true",
                   help="also mine templates with slots (templates.parquet, template_occurrences.parquet, "
                        "spans.parquet); their occurrences count in the coverage")
    m.add_argument("--max-slot", default=str(DEFAULT_MAX_SLOT),
                   help="with --templates: the most tokens a slot stands for, 1 to 16 (default %(default)s)")
    m.add_argument("--workers", type=_positive_int, default=None, help="threads (default: the cores)")
    m.add_argument("--memory", default=None,
                   help="memory budget such as 8GB or 512MB (default: $BOILERSCOPE_MEMORY, else half the "
                        "machine's memory); a snapshot that does not fit is mined out of core, same answer")
    m.add_argument("--engine", default="local", choices=("local", "spark"),
                   help="local (default) or spark: the same job on Apache Spark (needs --out DIR or --db STORE, "
                        "and a snapshot file or shards; 'make install-spark')")
    m.add_argument("--master", default=None,
                   help="with --engine spark: the Spark master URL (default: the one spark-submit gives, else local[*])")
    m.add_argument("--partitioned", action=argparse.BooleanOptionalAction, default=None,
                   help="with --engine spark (the default there): mine the repeated text on the executors, "
                        "nothing on the driver growing with the corpus (with --db the executors also write the "
                        "snapshot); --no-partitioned: step 4 on the driver, which must hold the repeated text "
                        "(faster in local mode on a corpus it holds)")
    m.add_argument("--parts", type=_positive_int, default=None,
                   help="with the partitioned job: the parts the seeds are dealt to (default: from their occurrences)")
    m.add_argument("--plan", action="store_true",
                   help="with the partitioned job: print what it would use (partitions, filter, memory per "
                        "stage) from the shards' footers, and stop")
    m.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                   help="with --engine spark: a Spark setting, e.g. spark.driver.memory=4g (repeatable)")
    m.add_argument("--quiet", action="store_true", help="no progress bars")

    r = sub.add_parser("runs", help="list the stored runs, or delete one")
    r.add_argument("--db", default=DEFAULT_DB, help="the store (default: %(default)s)")
    r.add_argument("--delete", type=int, default=None, metavar="RUN_ID", help="delete this run and its data")

    c = sub.add_parser("clean", help="write a cleaned snapshot: cut the phrases marked noise")
    c.add_argument("source", help="the store (.duckdb) holding the run, or the snapshot it was mined from")
    c.add_argument("--run", type=int, required=True, metavar="RUN_ID", help="the run whose L is used")
    c.add_argument("--stoplist", required=True, help="stop-phrase list (CSV or JSON) exported by the dashboard")
    c.add_argument("--out", required=True, help="the cleaned snapshot (.parquet)")
    c.add_argument("--db", default=DEFAULT_DB, help="the store when SOURCE is a snapshot")
    c.add_argument("--force", action="store_true", help="replace --out if it exists (never the source)")
    c.add_argument("--quiet", action="store_true", help="no progress bars")

    dd = sub.add_parser("dedup", help="cluster near-duplicate documents (frequent closed itemsets)")
    dd.add_argument("source", help="a snapshot (ingested first) or a store (.duckdb)")
    g = dd.add_mutually_exclusive_group()
    g.add_argument("--run", type=int, default=None, metavar="RUN_ID", help="remove this run's boilerplate")
    g.add_argument("--raw", action="store_true", help="detect on the raw text")
    dd.add_argument("--method", default=DEDUP.method, choices=DESCRIPTIONS,
                    help="document description (default %(default)s)")
    dd.add_argument("--sketch", default=DEDUP.sketch, choices=SCHEMES,
                    help="bottom: n minimal elements of one permutation; minhash: min of n permutations")
    dd.add_argument("--shingle", type=int, default=DEDUP.shingle, help="shingle width w in tokens (default %(default)s)")
    dd.add_argument("--sketch-size", type=int, default=DEDUP.sketch_size, help="sketch size n (default %(default)s)")
    dd.add_argument("--threshold", type=int, default=DEDUP.threshold,
                    help="t: common sketch elements to be similar (default %(default)s)")
    dd.add_argument("--db", default=DEFAULT_DB, help="the store (default: %(default)s)")
    dd.add_argument("--snapshot", default=None, help="snapshot id in a store holding several")
    dd.add_argument("--out", default=None, help="folder for clusters.parquet, pairs.parquet, dedup_summary.json")
    dd.add_argument("--quiet", action="store_true", help="no progress bars")

    rp = sub.add_parser("report", help="write the repetition card of a run: one self-contained HTML page to share")
    rp.add_argument("store", nargs="?", default=None, help="the store (.duckdb); the same as --db")
    rp.add_argument("--db", default=None, help=f"the store (default: {DEFAULT_DB})")
    rp.add_argument("--run", type=int, default=None, metavar="RUN_ID",
                    help="the run (default: the newest of --snapshot, else of the store)")
    rp.add_argument("--snapshot", default=None, metavar="SID", help="snapshot id: its newest run")
    rp.add_argument("--out", required=True, help="the card (.html): no script, opens without a server or network")
    rp.add_argument("--force", action="store_true", help="replace --out even if it is not an earlier card")

    d = sub.add_parser("dashboard", help="open the dashboard (Streamlit) on a store")
    d.add_argument("--db", default=None, help="the store (default: .boilerscope/app.duckdb beside app.py in a checkout, "
                                              "in the current folder when installed)")
    d.add_argument("--port", type=int, default=DEFAULT_PORT, help="default %(default)s")
    d.add_argument("--address", default=DEFAULT_ADDRESS, help="default %(default)s")
    return p


def _cmd_dedup(args) -> int:
    from .api import dedup
    from .neardup import DedupConfig
    cfg = DedupConfig(method=args.method, sketch=args.sketch, shingle=args.shingle, sketch_size=args.sketch_size,
                      threshold=args.threshold)
    with StderrBars(args.quiet) as progress:
        s = dedup(args.source, run=args.run, raw=args.raw, config=cfg, db=args.db, out=args.out,
                  snapshot=args.snapshot, progress=progress).summary
    c = s["clusters"]
    print(f"dedup {s['dedup_id']}: {s['documents']} documents, {s['exact_groups']} exact groups, "
          f"{s['similar_pairs']} similar pairs; clusters: "
          + ", ".join(f"{k} {c.get(k, 0)}" for k in ("exact", "components", "fci", "cliques"))
          + (" (raw text)" if s["raw"] else f" (boilerplate of run {s['run_id']} removed)"))
    if args.out:
        print(f"results in {args.out}")
    return 0


def _cmd_report(args) -> int:
    from .api import report
    if args.store is not None and args.db is not None and os.path.abspath(args.store) != os.path.abspath(args.db):
        raise BoilerscopeError(f"two stores given ({args.store} and --db {args.db}); give one")
    db = args.store or args.db or DEFAULT_DB
    card = report(db, run=args.run, snapshot=args.snapshot, out=args.out, force=args.force)
    print(f"{args.out}: repetition card of run {card.run_id} (snapshot {card.snapshot_id}), "
          f"{len(card.html.encode('utf-8')) / 1024:,.0f} KB")
    return 0


def _cmd_dashboard(args) -> int:
    from .ui.launch import serve
    return serve(args.db, args.port, args.address)


def _cmd_clean(args) -> int:
    from .api import clean
    with StderrBars(args.quiet) as progress:
        figures = clean(args.source, run=args.run, stoplist=args.stoplist, out=args.out, db=args.db,
                        force=args.force, progress=progress)
    total = figures.row(0, named=True)
    print(f"{args.out}: {total['documents']} documents, tokens {total['tokens_before']} -> "
          f"{total['tokens_after']} ({100 * total['cut_share']:.2f}% cut), mean length "
          f"{total['mean_length_before']:.1f} -> {total['mean_length_after']:.1f}")
    return 0


def _plan_spark(args) -> int:
    from .params import RunParams
    from .spark import plan_partitioned
    if args.partitioned is False:
        raise BoilerscopeError("--plan is for the partitioned job; drop --no-partitioned")
    params = RunParams(sigma=args.sigma, min_len=args.min_len).checked()
    cores = 2
    if args.master and args.master.startswith("local[") and args.master[6:-1].split(",")[0].isdigit():
        cores = int(args.master[6:-1].split(",")[0])
    p = plan_partitioned(args.source, args.sigma, params.min_len, args.parts, cores)
    mb = 1 << 20
    print(f"{p['shards']} shards, {p['documents']:,} documents, {p['text_bytes'] / mb:,.0f} MB of text, "
          f"about {p['tokens_estimated']:,} tokens")
    print(f"filter: {p['filter_buckets']:,} buckets ({p['driver_filter_bytes'] / mb:.0f} MB on the driver, "
          f"{p['filter_buckets'] / mb:.0f} MB of counters per counting task)")
    print(f"batches: {p['batch_rows']:,} documents; largest row group {p['largest_row_group_bytes'] / mb:,.0f} MB; "
          f"executor heap per task: at least {p['executor_heap_bytes'] / mb:,.0f} MB")
    print(f"segments: about {p['segment_tokens_estimated']:,} tokens; seeds: {p['seed_partitions']} partitions, "
          f"about {p['seed_occurrences_estimated']:,} occurrences; parts: {p['parts']} "
          f"(first context {p['first_context']} tokens)")
    for name, size in p["worker_bytes_per_task"].items():
        print(f"python worker per task, {name}: about {size / mb:,.0f} MB")
    return 0


def _mine_spark(args) -> int:
    from .spark import mine_spark
    if args.snapshot is not None:
        raise BoilerscopeError("--snapshot is for mining a store; --engine spark reads the shards")
    if args.source.lower().endswith(".duckdb"):
        raise BoilerscopeError(f"{args.source}: --engine spark reads the snapshot's shards, not a store")
    if args.templates:
        raise BoilerscopeError("--templates runs on the local engine only; drop --engine spark")
    if args.algo not in ("auto", "bloomspan"):
        raise BoilerscopeError(f"--engine spark mines with bloomspan over the segments; drop --algo {args.algo}")
    conf = {}
    for item in args.conf:
        key, eq, value = item.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise BoilerscopeError(f"--conf {item}: give KEY=VALUE, e.g. --conf spark.driver.memory=4g")
        conf[key.strip()] = value.strip()
    partitioned = args.partitioned is not False  # the default on Spark
    if args.parts is not None and not partitioned:
        raise BoilerscopeError("--parts is for the partitioned job; drop --no-partitioned or --parts")
    if args.plan:
        return _plan_spark(args)
    with StderrBars(args.quiet) as progress:
        s = mine_spark(args.source, args.sigma, args.min_len, args.out, master=args.master,
                       progress=progress, db=args.db, partitioned=partitioned, parts=args.parts,
                       conf=conf)
    print(f"spark ({s.master}): {s.phrases} phrases, {s.covered_tokens} of {s.tokens} tokens covered "
          f"({100 * s.coverage:.2f}%), sigma {s.sigma}, L {s.min_len}, {s.seconds['total']:.2f} s")
    if args.db is not None:
        print(f"run {s.run_id} of snapshot {s.snapshot_id} stored in {args.db}")
    if args.out is not None:
        print(f"results in {args.out}")
    return 0


def _cmd_ingest(args) -> int:
    from .api import ingest
    with StderrBars(args.quiet) as progress:
        sid, created = ingest(args.snapshot, db=args.db, progress=progress)
    print(f"snapshot {sid} {'ingested' if created else 'already in the store'} ({args.db})")
    return 0


def _cmd_mine(args) -> int:
    from .api import mine
    if args.engine == "spark":
        return _mine_spark(args)
    for flag, given in (("--master", args.master), ("--[no-]partitioned", args.partitioned is not None),
                        ("--parts", args.parts),
                        ("--conf", args.conf), ("--plan", args.plan)):
        if given:
            raise BoilerscopeError(f"{flag} is for --engine spark")
    with StderrBars(args.quiet) as progress:
        run = mine(args.source, sigma=args.sigma, min_len=args.min_len, algo=args.algo,
                   db=args.db, out=args.out, snapshot=args.snapshot,
                   progress=progress, workers=args.workers, templates=args.templates,
                   max_slot=args.max_slot, memory=args.memory)
    s = run.summary
    print(f"run {run.run_id}: {s.phrases} phrases, {s.covered_tokens} of {s.tokens} tokens "
          f"covered ({100 * s.coverage:.2f}%), sigma {s.sigma}, L {s.min_len}, {s.algo_used}, "
          f"{s.seconds['total']:.2f} s")
    if args.templates:
        t = s.templates
        print(f"{t['templates']} templates; coverage {100 * t['coverage_without_templates']:.2f}% without them, "
              f"{100 * t['coverage_with_templates']:.2f}% with them")
    if args.out:
        print(f"results in {args.out}")
    return 0


def _cmd_runs(args) -> int:
    from .store import Store
    if not os.path.exists(args.db):
        raise BoilerscopeError(f"{args.db}: store not found; run 'boilerscope ingest' or 'boilerscope mine' first")
    with Store(args.db, read_only=args.delete is None) as st:
        if args.delete is not None:
            if not st.delete_run(args.delete):
                raise BoilerscopeError(f"run {args.delete} is not in {args.db}; 'boilerscope runs' lists them")
            print(f"run {args.delete} deleted")
            return 0
        runs = st.runs()
        if runs.height == 0:
            print("no runs yet")
            return 0
        print(f"{'run':>5}  {'snapshot':<20}  {'sigma':>6}  {'L':>3}  {'algo':<9}  {'phrases':>8}  {'coverage':>8}  created")
        for row in runs.iter_rows(named=True):
            print(f"{row['run_id']:>5}  {row['snapshot_id']:<20}  {row['sigma']:>6}  {row['min_len']:>3}  "
                  f"{row['algo']:<9}  {row['phrases']:>8}  {100 * (row['coverage'] or 0):>7.2f}%  "
                  f"{row['created']:%Y-%m-%d %H:%M:%S}")
    return 0


_COMMANDS = {"ingest": _cmd_ingest, "mine": _cmd_mine, "runs": _cmd_runs,
             "clean": _cmd_clean, "dashboard": _cmd_dashboard, "dedup": _cmd_dedup, "report": _cmd_report}

#: Failures of the machine rather than of the code: one line, status 2.
_STORAGE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


def flag(param: str) -> str:
    """The flag of an API parameter (``max_slot`` -> ``--max-slot``): the one
    place the engine's parameter names become flags."""
    return "--" + param.replace("_", "-")


def _run(args) -> int:
    """The command, with every failure turned into one line on stderr."""
    try:
        return _COMMANDS[args.command](args)
    except BoilerscopeError as exc:
        print(f"boilerscope: error: {exc.render(flag)}", file=sys.stderr)
        return 2
    except MemoryError:
        print("boilerscope: error: out of memory; mine a smaller snapshot or raise --sigma", file=sys.stderr)
        return 2
    except OSError as exc:
        if exc.errno in _STORAGE_ERRNOS:
            where = f" ({exc.filename})" if exc.filename else ""
            print(f"boilerscope: error: {exc.strerror}{where}; free some space or check permissions, "
                  "then run again (the store keeps what it had)", file=sys.stderr)
            return 2
        return _internal(exc)
    except Exception as exc:  # an unexpected failure: one line, no traceback
        return _internal(exc)


def _internal(exc: BaseException) -> int:
    if os.environ.get("BOILERSCOPE_DEBUG"):
        raise exc
    print(f"boilerscope: internal error: {type(exc).__name__}: {exc} "
          "(set BOILERSCOPE_DEBUG=1 for details)", file=sys.stderr)
    return 1


def _interrupted() -> int:
    print("boilerscope: interrupted; the store keeps every finished run", file=sys.stderr)
    return 130


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=os.environ.get("BOILERSCOPE_LOG", "WARNING"),
                        format="%(levelname)s %(name)s: %(message)s")
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "dashboard":  # Streamlit needs the main thread
        try:
            return _run(args)
        except KeyboardInterrupt:
            return _interrupted()
    # The work runs in a worker thread so that Ctrl-C is seen at once even while
    # a kernel runs (numba kernels cannot be interrupted): the main thread waits,
    # and on SIGINT the process ends with 130 without committing anything.  Each
    # run is one transaction and files are published by rename, so the store
    # and the outputs keep what they had; leftovers are cleaned by the next run.
    result: dict = {}

    def work():
        try:
            result["status"] = _run(args)
        except KeyboardInterrupt:
            result["status"] = 130
        except BaseException as exc:  # BOILERSCOPE_DEBUG re-raises: pass it on
            result["error"] = exc

    worker = threading.Thread(target=work, name="boilerscope-command", daemon=True)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.1)
    except KeyboardInterrupt:
        status = _interrupted()
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(status)
    if "error" in result:
        raise result["error"]
    if result.get("status") == 130:
        return _interrupted()
    return result["status"]


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()
