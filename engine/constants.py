"""The product's constants, each defined once: defaults of a run, the limits
of its parameters and of the token arrays, and the spellings the files share.

The command line, the Python API and the dashboard read their defaults from
here; the kernels, which may import nothing but numpy and numba, keep their
own copy of the slot id (:data:`engine.kernels.templates.SLOT`, checked equal
by the tests).
"""
from __future__ import annotations

#: The release (pyproject.toml reads it from here).
VERSION = "0.1.0"

#: The store a command uses when none is given.
DEFAULT_DB = "boilerscope.duckdb"
#: sigma: the least number of documents a phrase occurs in.
DEFAULT_SIGMA = 20
#: L: the least length of a reported phrase, in tokens.
DEFAULT_MIN_LEN = 10
#: The miners a run may ask for; ``auto`` lets the planner choose.
ALGOS = ("auto", "bloomspan", "fhk")
DEFAULT_ALGO = "auto"

#: W: the most tokens a template's slot stands for, and its range.
DEFAULT_MAX_SLOT = 4
MAX_SLOT_RANGE = (1, 16)
#: The most slots a template has.
DEFAULT_MAX_SLOTS = 4
#: A slot, as written in a template's text («showing * of * products»).
SLOT_TEXT = "*"
#: The scope of a decision that holds for every snapshot of a store.
ALL_SNAPSHOTS = "*"

#: The most tokens whose positions fit in int32 (the suffix-array baseline's
#: limit, and the templates' growth keeps positions in int32 up to it).
MAX_TOKENS_32 = 2**31 - 2
#: sigma and L are counts of documents and tokens, so they fit where positions do.
MAX_COUNT = MAX_TOKENS_32

#: JSON lines compressed as a whole file, by the suffix of the compression
#: (C4 and Dolma ship .json.gz, the Pile and RedPajama .jsonl.zst).
JSON_CODECS = {".gz": "gzip", ".zst": "zstd", ".bz2": "bz2"}
COMPRESSED_JSONL_SUFFIXES = tuple(f"{base}{ext}" for base in (".jsonl", ".json") for ext in JSON_CODECS)
#: Files a snapshot may be, and those a folder or glob of shards may hold
#: (``.arrow``: Arrow IPC streams, as Hugging Face's save_to_disk writes them).
#: Common Crawl's WET files (the crawl's text with the markup stripped) and
#: WARC files (its HTML responses, whose text is extracted on reading).
WET_SUFFIXES = (".warc.wet.gz", ".warc.wet")
WARC_SUFFIXES = (".warc.gz", ".warc")
SNAPSHOT_SUFFIXES = (".parquet", ".jsonl", ".csv", ".arrow") + COMPRESSED_JSONL_SUFFIXES + WET_SUFFIXES + WARC_SUFFIXES
SHARD_SUFFIXES = (".parquet", ".jsonl", ".arrow") + COMPRESSED_JSONL_SUFFIXES + WET_SUFFIXES + WARC_SUFFIXES
#: A store's file name ends so.
STORE_SUFFIX = ".duckdb"

# -- ingest memory (issue 29: peak memory does not grow with the input) -----------
#: Parquet column chunks are read through a buffer of this size, not whole.
PARQUET_BUFFER_BYTES = 8 << 20
#: DuckDB's buffer pool during an ingest (it keeps every written block cached
#: up to 80% of RAM otherwise: +1.2 GB at 4x webdocs); restored afterwards.
#: More is not faster (4x webdocs: 35-37 s with 512MB, 1GB or 2GB; peak 1.8, 1.9, 2.3-2.6 GiB).
INGEST_DUCKDB_MEMORY = "512MB"

#: Where ``boilerscope dashboard`` serves by default.
DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "localhost"
