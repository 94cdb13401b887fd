"""Reading index snapshots (Parquet, JSONL, CSV) into one normalized table.

A snapshot has one row per document: ``text`` (string) or ``tokens`` (list of
strings, already tokenized by the index: used as given, lowercased; when
both exist, ``text`` wins); optional ``url``, ``site`` (else the host of
``url``, else ``"unknown"``) and ``doc_id`` (int64, unique; else the row
number, from 0).  A null text is an empty document.

Every problem with the input raises :class:`~engine.errors.BoilerscopeError`
with one line that says what is wrong and what to do.
"""
from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import BoilerscopeError
from .tokenize import Tokenized, tokenize_arrow, tokenize_token_lists


SNAPSHOT_SUFFIXES = (".parquet", ".jsonl", ".csv")


@dataclass
class Snapshot:
    """A normalized snapshot: ``table`` has doc_id, site, url, text."""

    table: pa.Table
    tokenized: Tokenized
    snapshot_id: str
    source: str


def _first_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return msg[0] if msg else type(exc).__name__


def read_table(path: str) -> pa.Table:
    """Read a snapshot file into an Arrow table (no normalization)."""
    if "\x00" in path:
        raise BoilerscopeError("the snapshot path holds a NUL byte; give a plain file path")
    if not os.path.exists(path):
        raise BoilerscopeError(
            f"{path}: file not found; give the path of a .parquet, .jsonl or .csv snapshot")
    if os.path.isdir(path):
        raise BoilerscopeError(f"{path} is a folder; give a .parquet, .jsonl or .csv file")
    if not stat.S_ISREG(os.stat(path).st_mode):
        # a FIFO or a device would block or never end
        raise BoilerscopeError(f"{path} is not a regular file; give a .parquet, .jsonl or .csv file")
    low = path.lower()
    try:
        if low.endswith(".parquet"):
            import pyarrow.parquet as pq
            return pq.read_table(path)
        if low.endswith(".jsonl"):
            import pyarrow.json as pj
            return pj.read_json(path, read_options=pj.ReadOptions(block_size=16 << 20))
        if low.endswith(".csv"):
            import pyarrow.csv as pcsv
            return pcsv.read_csv(path, convert_options=pcsv.ConvertOptions(
                column_types={"text": pa.large_string(), "url": pa.string(),
                              "site": pa.string()},
                strings_can_be_null=False))
    except BoilerscopeError:
        raise
    except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as exc:
        kind = {".parquet": "Parquet", ".jsonl": "JSONL", ".csv": "CSV"}[os.path.splitext(low)[1]]
        detail = _first_line(exc)
        if "utf8" in detail.lower() or "utf-8" in detail.lower():
            raise BoilerscopeError(
                f"{path} is not valid UTF-8 ({detail}); re-encode it as UTF-8") from None
        raise BoilerscopeError(
            f"{path} is not a readable {kind} file ({detail}); check the file or export it again") from None
    raise BoilerscopeError(
        f"{path}: unknown format; a snapshot ends in .parquet, .jsonl or .csv, a store in .duckdb")


def _host(url: str | None) -> str | None:
    if not url:
        return None
    try:
        host = urlsplit(url if "//" in url else "//" + url).hostname
    except ValueError:
        return None
    return host or None


def _string_column(table: pa.Table, name: str, path: str) -> pa.ChunkedArray | None:
    if name not in table.column_names:
        return None
    col = table.column(name)
    if pa.types.is_null(col.type):
        return pa.chunked_array([pa.nulls(len(col), pa.large_string())])
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
            or pa.types.is_string_view(col.type)):
        raise BoilerscopeError(
            f"{path}: column '{name}' holds {col.type}, not strings; store it as text")
    return col.cast(pa.large_string())


def normalize(table: pa.Table, path: str, progress=None) -> Snapshot:
    """Validate a raw table and tokenize it."""
    n = table.num_rows
    if n == 0:
        raise BoilerscopeError(f"{path} holds no documents; give a snapshot with at least one row")
    cols = table.column_names
    texts = _string_column(table, "text", path)
    if texts is None:
        if "tokens" not in cols:
            raise BoilerscopeError(
                f"{path} has no 'text' or 'tokens' column (columns: {', '.join(cols)}); "
                "name the document text column 'text'")
        col = table.column("tokens")
        if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)) or not (
                pa.types.is_string(col.type.value_type)
                or pa.types.is_large_string(col.type.value_type)
                or pa.types.is_null(col.type.value_type)):
            raise BoilerscopeError(
                f"{path}: column 'tokens' holds {col.type}, not lists of strings")
        tokenized, texts = tokenize_token_lists(col)
        texts = pa.chunked_array([texts])
        # the input kind is part of the id: a tokens snapshot never shares an id
        # (and so the stored spans) with a text snapshot of the joined tokens
        text_digest = _column_digest(texts, "tokens")
    else:
        texts = texts.fill_null("")
        # hash the text while it is tokenized (hashlib releases the GIL)
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(1) as ex:
            text_digest = ex.submit(_column_digest, texts, "text")
            tokenized = tokenize_arrow(texts, progress=progress)
            text_digest = text_digest.result()

    if "doc_id" in cols:
        ids = table.column("doc_id")
        if not pa.types.is_integer(ids.type):
            raise BoilerscopeError(
                f"{path}: column 'doc_id' holds {ids.type}; it must hold whole numbers")
        if ids.null_count:
            raise BoilerscopeError(f"{path}: column 'doc_id' has empty values; give every row an id")
        if pa.types.is_uint64(ids.type) and pc.max(ids).as_py() > 2**63 - 1:
            raise BoilerscopeError(
                f"{path}: column 'doc_id' holds {pc.max(ids).as_py()}, above 2^63 - 1; doc_id must fit in int64")
        doc_id = ids.cast(pa.int64()).to_numpy()
        if np.unique(doc_id).shape[0] != n:
            vals, counts = np.unique(doc_id, return_counts=True)
            dup = int(vals[counts > 1][0])
            raise BoilerscopeError(
                f"{path}: doc_id {dup} appears more than once; doc_id must be unique")
    else:
        doc_id = np.arange(n, dtype=np.int64)

    urls = _string_column(table, "url", path)
    url_list = urls.to_pylist() if urls is not None else [None] * n
    sites = _string_column(table, "site", path)
    site_list = sites.to_pylist() if sites is not None else [None] * n
    site_list = [s if s else (_host(u) or "unknown") for s, u in zip(site_list, url_list)]

    out = pa.table({
        "doc_id": pa.array(doc_id, pa.int64()),
        "site": pa.array(site_list, pa.string()),
        "url": pa.array(url_list, pa.string()),
        "text": texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts,
    })
    return Snapshot(table=out, tokenized=tokenized, snapshot_id=content_id(out, text_digest),
                    source=os.path.abspath(path))


def _column_digest(col, name: str) -> bytes:
    """Digest of a string column's offsets (rebased) and bytes; nulls differ from ''."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    arr = pc.fill_null(col.cast(pa.large_string()), "\x00null")
    offs = np.frombuffer(arr.buffers()[1], np.int64)[arr.offset:arr.offset + len(arr) + 1]
    h = hashlib.blake2b(digest_size=16)
    h.update(name.encode())
    h.update((offs - offs[0]).tobytes())
    data = arr.buffers()[2]
    if data is not None:
        h.update(memoryview(data)[offs[0]:offs[-1]])
    return h.digest()


def content_id(table: pa.Table, text_digest: bytes | None = None) -> str:
    """Content hash of a normalized snapshot (same content, same id,
    whatever the file format)."""
    h = hashlib.blake2b(digest_size=10)
    h.update(np.ascontiguousarray(table.column("doc_id").to_numpy()).tobytes())
    for name in ("site", "url"):
        h.update(_column_digest(table.column(name), name))
    h.update(text_digest if text_digest is not None else _column_digest(table.column("text"), "text"))
    return h.hexdigest()


def load(path: str, progress=None) -> Snapshot:
    """Read, validate and tokenize a snapshot file."""
    return normalize(read_table(path), path, progress=progress)
