"""The snapshot of a Spark run, written by the executors: ``mine --engine
spark --partitioned --db STORE`` stores the snapshot without reading or
tokenizing it on the driver.

A store's snapshot is the documents (doc_id, site, url, text), their tokens
as ids into a vocabulary (with each token's document frequency) and each
token's characters.  The job's step 3 tokenizes every document on the
executors anyway; there each Arrow batch also becomes a *part*
(:func:`write_part`): its documents with their text, its tokens as ids into
the batch's own dictionary, their characters, that dictionary (token, local
id, documents per token) and a small JSON file written last (its counts and
a content digest), all written under temporary names and renamed, so that a
retried task rewrites the same part and a reader never sees half a part.

The driver then holds no text and no token array in Python: DuckDB (its
memory capped, spilling to disk) numbers the distinct tokens of the parts'
dictionaries in order of first occurrence (the order of the part names, then
of the local ids: the local reader's rule, applied to the documents in part
order) and writes each part's map from local to global ids
(:meth:`engine.store.Store.add_parts_snapshot`; in Spark the same took 15 s
of webdocs' job against about 1 s here: a sort-based numbering, joins and a
partitioned write, each a job).  The store then copies the parts in order
into its own layout, a part at a time (:class:`PartsReader`, read by
:meth:`engine.store.Store.add_snapshot`): memory is one part plus its map,
and the vocabulary goes from Parquet to the store's table inside DuckDB.

Snapshot id
-----------
The local id hashes the content in read order (:class:`engine.snapshot.ContentHasher`);
Spark reads shards in no fixed order, so a Spark snapshot's id is a hash of
the document count and the sum modulo 2^128 of a 128-bit BLAKE2b digest of
each document (doc_id, site, url, text, each length-prefixed): independent
of the partitioning, computed per part on the executors, the same for the
same documents however they are sharded.  It is not the local id of the same
shards (a local ingest of them is a second snapshot of the same text), and
document order (doc_index) is the parts' order, not doc_id's: runs are
matched to a stored snapshot by doc_id.  Each part is checked against its
JSON file (counts, digest) as it is copied: a lost or changed part is one
clear error, nothing stored.

Complexity: on the executors, linear in each batch's tokens (its document
frequencies by :func:`engine.kernels.bloomspan.word_df`) and text (the
digests); at the store, DuckDB's aggregate over the parts' dictionaries
(one per batch, so their total grows with the batches) and one linear copy
of the parts.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import BoilerscopeError

#: A part's files: ``<name>.docs.parquet``, ``.tokens.npy``, ``.span_start.npy``,
#: ``.span_end.npy``, ``.vocab.parquet`` and ``.json`` (written last).
PART_ARRAYS = ("tokens", "span_start", "span_end")
MOD = 1 << 128


def part_name(partition: int, batch: int) -> str:
    """A part's name; names sort in the parts' order."""
    return f"{partition:07d}-{batch:07d}"


def part_number(name: str) -> int:
    """The part's number, in the same order as its name (the vocabulary's ``part``)."""
    p, b = name.split("-")
    return (int(p) << 24) | int(b)


def document_digests(doc_id, sites: list, urls: list, text: pa.Array) -> int:
    """The sum modulo 2^128 of the documents' digests (see the module docstring)."""
    total = 0
    ids = np.asarray(doc_id.to_numpy(zero_copy_only=False) if hasattr(doc_id, "to_numpy") else doc_id, np.int64)
    for i, (s, u, t) in enumerate(zip(sites, urls, text.to_pylist())):
        h = hashlib.blake2b(digest_size=16)
        h.update(struct.pack("<q", int(ids[i])))
        for value in (s, u, t):
            b = (value if value is not None else "\x00null").encode("utf-8", "surrogatepass")
            h.update(struct.pack("<q", len(b)))
            h.update(b)
        total = (total + int.from_bytes(h.digest(), "little")) % MOD
    return total


def snapshot_id(n_docs: int, digest_sum: int) -> str:
    """The snapshot id of a Spark run's documents (20 hex digits, as local ids)."""
    h = hashlib.blake2b(digest_size=10)
    h.update(b"spark-text")
    h.update(struct.pack("<q", n_docs))
    h.update(digest_sum.to_bytes(16, "little"))
    return h.hexdigest()


def write_part(folder: str, name: str, tk, doc_id: pa.Array, sites: list, urls: list, text: pa.Array) -> None:
    """Write one batch's part (``tk`` its tokenization: tokens, doc_offsets,
    span_start, span_end, vocab).  Every file is written under a temporary
    name and renamed; the JSON file last."""
    n = len(sites)
    if n == 0:
        return
    stem = os.path.join(folder, name)
    tag = f".tmp-{uuid.uuid4().hex}"
    offsets = np.asarray(tk.doc_offsets, np.int64)
    tokens = np.asarray(tk.tokens, np.int32)
    vocab_n = len(tk.vocab)
    from .kernels.bloomspan import word_df
    df = np.asarray(word_df(tokens, offsets, vocab_n), np.int64)  # documents per token in this batch
    docs = pa.table({"row": pa.array(np.arange(n, dtype=np.int64)), "doc_id": doc_id,
                     "site": pa.array(sites, pa.string()), "url": pa.array(urls, pa.string()),
                     "n_tokens": pa.array(np.diff(offsets)), "text": text.cast(pa.large_string())})
    pq.write_table(docs, stem + ".docs.parquet" + tag, compression="zstd")
    for arr, suffix in ((tokens, "tokens"), (np.asarray(tk.span_start, np.int32), "span_start"),
                        (np.asarray(tk.span_end, np.int32), "span_end")):
        with open(stem + f".{suffix}.npy" + tag, "wb") as fh:
            np.save(fh, arr)
    pq.write_table(pa.table({"part": pa.array(np.full(vocab_n, part_number(name), np.int64)),
                             "local_id": pa.array(np.arange(vocab_n, dtype=np.int64)),
                             "token": pa.array(list(tk.vocab), pa.string()), "df": pa.array(df)}),
                   stem + ".vocab.parquet" + tag, compression="zstd")
    for suffix in ("docs.parquet", "tokens.npy", "span_start.npy", "span_end.npy", "vocab.parquet"):
        os.replace(stem + "." + suffix + tag, stem + "." + suffix)
    with open(stem + ".json" + tag, "w", encoding="utf-8") as fh:
        json.dump({"documents": n, "tokens": int(tokens.shape[0]), "vocabulary": vocab_n,
                   "digest": str(document_digests(doc_id, sites, urls, text))}, fh)
    os.replace(stem + ".json" + tag, stem + ".json")


def _changed(folder: str, name: str) -> BoilerscopeError:
    return BoilerscopeError(f"{folder}: snapshot part {name} is incomplete or changed since the job wrote it "
                            "(lost files, or other content); nothing was stored: mine again, with the store's "
                            "folder on storage every executor shares")


@dataclass
class PartChunk:
    """One part as :meth:`engine.store.Store.add_snapshot` takes a chunk."""
    table: pa.Table
    tokens: np.ndarray
    span_start: np.ndarray
    span_end: np.ndarray
    n_tokens: np.ndarray


class PartsReader:
    """The parts of ``folder`` as a snapshot reader for
    :meth:`engine.store.Store.add_snapshot`: the parts in name order, each
    part's tokens mapped to global ids.  :meth:`engine.store.Store.add_parts_snapshot`
    numbers the vocabulary first: ``vocab_files`` (token_id, token, df),
    ``n_vocab`` and the maps (``maps/part=<number>/``: local_id, token_id)."""

    def __init__(self, folder: str, origin: str, replaced_payloads: int = 0):
        self.folder, self.origin = folder, origin
        self.maps = os.path.join(folder, "maps")
        self.vocabulary = os.path.join(folder, "vocabulary.parquet")
        self.names = sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".json") and ".tmp-" not in f)
        self.meta = {}
        for name in self.names:
            try:
                with open(os.path.join(folder, name + ".json"), encoding="utf-8") as fh:
                    self.meta[name] = json.load(fh)
            except (OSError, ValueError):
                raise _changed(folder, name) from None
        self.n_docs = sum(m["documents"] for m in self.meta.values())
        self.n_tokens = sum(m["tokens"] for m in self.meta.values())
        self.snapshot_id = snapshot_id(self.n_docs, sum(int(m["digest"]) for m in self.meta.values()) % MOD)
        self.vocab_files: list[str] = []
        self.n_vocab = 0
        self.replaced_payloads = replaced_payloads
        self.n_sites = 0  # counted by the store (DuckDB over the parts)

    def docs_files(self) -> list[str]:
        return [os.path.join(self.folder, n + ".docs.parquet") for n in self.names]

    def vocab_parts(self) -> list[str]:
        return [os.path.join(self.folder, n + ".vocab.parquet") for n in self.names]

    def _map(self, name: str) -> np.ndarray:
        folder = os.path.join(self.maps, f"part={part_number(name)}")
        files = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".parquet")) \
            if os.path.isdir(folder) else []
        table = pa.concat_tables([pq.read_table(f, columns=["local_id", "token_id"]) for f in files]) \
            if files else None
        size = self.meta[name]["vocabulary"]
        out = np.full(size, -1, np.int64)
        if table is not None and table.num_rows:
            out[table.column("local_id").to_numpy()] = table.column("token_id").to_numpy()
        if size and out.min() < 0:
            raise _changed(self.folder, name)
        return out.astype(np.int32)

    def chunks(self, prefetch: bool = True):
        for name in self.names:
            try:
                yield self._chunk(name)
            except (OSError, ValueError, KeyError, pa.ArrowException):
                raise _changed(self.folder, name) from None

    def _chunk(self, name: str) -> PartChunk:
        """One part, checked against its JSON file (counts and digest)."""
        stem = os.path.join(self.folder, name)
        meta = self.meta[name]
        docs = pq.read_table(stem + ".docs.parquet")
        local = np.load(stem + ".tokens.npy")
        span_start, span_end = np.load(stem + ".span_start.npy"), np.load(stem + ".span_end.npy")
        ids = self._map(name)
        n_tokens = docs.column("n_tokens").to_numpy().astype(np.int64)
        table = docs.select(["doc_id", "site", "url", "text"])
        table = table.set_column(3, "text", pc.cast(table.column("text"), pa.large_string()))
        if (docs.num_rows != meta["documents"] or int(n_tokens.sum()) != meta["tokens"]
                or not local.shape[0] == span_start.shape[0] == span_end.shape[0] == meta["tokens"]
                or (local.shape[0] and (int(local.max()) >= ids.shape[0] or int(local.min()) < 0))
                or str(document_digests(table.column("doc_id").combine_chunks(), table.column("site").to_pylist(),
                                        table.column("url").to_pylist(), table.column("text").combine_chunks()))
                != meta["digest"]):
            raise _changed(self.folder, name)
        return PartChunk(table=table, tokens=ids[local] if local.shape[0] else local, span_start=span_start,
                         span_end=span_end, n_tokens=n_tokens)
