"""What the tests share: corpora they write, the brute-force oracles' inputs,
and the checks every command-line test makes.  Import it as
``from tests.support import ...`` (the oracles are in :mod:`tests.naive`).
"""
import gzip
import json
import os
import random

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine.store import Store

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def mine_token_lists(docs, sigma, min_len, workers=1, memory=None):
    """Mine documents given as token lists; answer as {phrase tuple: (df, occ)}.
    ``memory``: the budget (a tiny one forces the out-of-core path)."""
    from engine.planner import mine_tokens

    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    flat = np.array([t for d in ids for t in d], np.int32)
    off = np.zeros(len(docs) + 1, np.int64)
    off[1:] = np.cumsum([len(d) for d in ids])
    res = mine_tokens(flat, off, len(vocab), sigma, min_len, workers=workers, memory=memory)
    inv = {v: k for k, v in vocab.items()}
    answer = {}
    for i in np.flatnonzero(res.node_max):
        r, m = int(res.node_rep[i]), int(res.node_len[i])
        answer[tuple(inv[int(x)] for x in flat[r:r + m])] = (int(res.node_df[i]), int(res.node_occ[i]))
    return answer, [int(c) for c in res.covered], res, flat, off


EXAMPLE = [
    "Новый ноутбук Acer Swift. Доставка бесплатно при заказе от 3000 рублей!",
    "Чехол для iPhone 15 — доставка бесплатно, при заказе от 3000 рублей.",
    "Доставка бесплатно при заказе от 3000 рублей. Наушники Sony",
    "наушники sony wh 1000 доставка бесплатно",
]


def snapshot(tmp_path, name="snap.parquet", texts=EXAMPLE, **cols):
    table = pa.table({"text": texts, "url": [f"https://shop{i % 2}.example/p{i}" for i in range(len(texts))], **cols})
    path = tmp_path / name
    pq.write_table(table, path)
    return path


def assert_one_line_error(status, out, err, *words):
    assert status == 2, (status, out, err)
    lines = [line for line in err.strip().splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for w in words:
        assert w.lower() in lines[0].lower(), lines[0]


WORDS = ["alpha", "Beta", "gamma", "δέλτα", "e-mail", "x", "2024", "ünï"]


def documents(n, seed=0, sites=3):
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30)))
        docs.append({"doc_id": 1000 + 7 * i, "url": f"https://s{i % sites}.example/p{i}",
                     "text": f"Header of the site. {body} Footer © 2024 all rights reserved"})
    return docs


def write_parquet(path, docs, row_group=None):
    table = pa.table({k: [d[k] for d in docs] for k in ("doc_id", "url", "text")})
    pq.write_table(table, path, row_group_size=row_group)


def write_jsonl(path, docs):
    with open(path, "w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")


def write_compressed_jsonl(path, docs, codec=None):
    """JSON lines compressed as a whole file (codec from the suffix: .gz, .zst, .bz2)."""
    codec = codec or {".gz": "gzip", ".zst": "zstd", ".bz2": "bz2"}[os.path.splitext(str(path))[1]]
    with pa.CompressedOutputStream(str(path), codec) as out:
        for d in docs:
            out.write((json.dumps(d, ensure_ascii=False) + "\n").encode("utf-8"))


def write_hf_dataset(folder, docs, shards=1, split=None):
    """A folder as Hugging Face ``datasets`` ``save_to_disk`` writes it: Arrow
    IPC streams ``data-0000i-of-0000n.arrow``, ``dataset_info.json`` and
    ``state.json`` listing the files (with ``split``: inside ``folder/split``)."""
    folder = os.path.join(str(folder), split) if split else str(folder)
    os.makedirs(folder, exist_ok=True)
    names = [f"data-{i:05d}-of-{shards:05d}.arrow" for i in range(shards)]
    step = -(-len(docs) // shards) if docs else 1
    for i, name in enumerate(names):
        part = docs[i * step:(i + 1) * step]
        table = pa.table({k: [d[k] for d in part] for k in ("doc_id", "url", "text")},
                         schema=pa.schema([("doc_id", pa.int64()), ("url", pa.string()), ("text", pa.string())]))
        with pa.OSFile(os.path.join(folder, name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
            for batch in table.to_batches(max_chunksize=7):
                w.write_batch(batch)
    with open(os.path.join(folder, "dataset_info.json"), "w") as fh:
        json.dump({"features": {"doc_id": {"dtype": "int64", "_type": "Value"},
                                "url": {"dtype": "string", "_type": "Value"},
                                "text": {"dtype": "string", "_type": "Value"}}}, fh)
    with open(os.path.join(folder, "state.json"), "w") as fh:
        json.dump({"_data_files": [{"filename": n} for n in names], "_fingerprint": "0", "_format_columns": None,
                   "_format_kwargs": {}, "_format_type": None, "_output_all_columns": False,
                   "_split": split}, fh)


def wet_record(rtype: str, uri: str | None, payload: bytes, record_id: int = 0) -> bytes:
    """One WARC record as Common Crawl writes WET files (its own gzip member)."""
    head = ["WARC/1.0", f"WARC-Type: {rtype}", f"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{record_id:012d}>",
            "WARC-Date: 2024-01-01T00:00:00Z"]
    head += [f"WARC-Target-URI: {uri}"] if uri else []
    head += ["Content-Type: text/plain", f"Content-Length: {len(payload)}", "", ""]
    return gzip.compress("\r\n".join(head).encode() + payload + b"\r\n\r\n")


def write_wet(path, docs, compressed=True):
    """A WET file of ``docs`` (url and text): a warcinfo record, then one
    conversion record per document, with a metadata record between (skipped
    by readers)."""
    parts = [wet_record("warcinfo", None, b"software: boilerscope tests\r\n")]
    for i, d in enumerate(docs):
        parts.append(wet_record("conversion", d["url"], d["text"].encode("utf-8"), i))
        if i % 3 == 0:
            parts.append(wet_record("metadata", d["url"], b"fetchTimeMs: 12\r\n", 10_000 + i))
    data = b"".join(parts)
    with open(path, "wb") as fh:
        fh.write(data if compressed else gzip.decompress(data))


def warc_response(uri: str, body: bytes, content_type: str = "text/html; charset=utf-8", record_id: int = 0) -> bytes:
    """One WARC response record (HTTP headers and body), its own gzip member."""
    http = (f"HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
    head = ["WARC/1.0", "WARC-Type: response", f"WARC-Target-URI: {uri}", "WARC-Date: 2024-01-01T00:00:00Z",
            f"WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{record_id:012d}>",
            "Content-Type: application/http; msgtype=response", f"Content-Length: {len(http)}", "", ""]
    return gzip.compress("\r\n".join(head).encode() + http + b"\r\n\r\n")


def cut(docs, sizes):
    out, i = [], 0
    for s in sizes:
        out.append(docs[i:i + s])
        i += s
    out.append(docs[i:])
    return out


def store_state(db):
    with Store(str(db), read_only=True) as st:
        return (st.snapshots()["snapshot_id"].to_list(), st.runs()["run_id"].to_list(),
                st.query("SELECT count(*) AS n FROM documents")["n"][0],
                st.query("SELECT count(*) AS n FROM run_phrases")["n"][0])


def leftovers(folder):
    """Temporary names any writer of ours uses."""
    found = []
    for base, dirs, files in os.walk(folder):
        for n in dirs + files:
            if n.endswith(".tmp") or n.startswith(".tmp-") or ".new-" in n or ".old-" in n:
                found.append(os.path.join(base, n))
    return found


def planted_corpus(n_docs=40, words=300, seed=7):
    """Documents of unique random words with three phrases planted in 3, 5 and
    4 of them: (token lists, {phrase: documents}) (bench's Synthetic 1, small)."""
    from bench.corpora import planted_lists
    return planted_lists(n_docs, words, seed)


def planted(path, docs=60, seed=0):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]
    names = ["anna smith", "bob", "carol de la cruz", "dan", "eve jones"]
    texts = []
    for i in range(docs):
        line = (f"Posted by {rng.choice(names)} on {rng.randint(1, 28)} March {rng.choice([2023, 2024])} "
                "· Leave a comment · Share on Facebook Twitter")
        texts.append(" ".join(rng.choice(words) for _ in range(30)) + " " + line + " "
                     + " ".join(rng.choice(words) for _ in range(10)))
    pq.write_table(pa.table({"text": texts, "url": [f"https://s{i % 3}.example/{i}" for i in range(docs)]}), path)
    return texts


def write_shards(folder, texts, cuts, doc_ids=None, sites=None, fmt="parquet"):
    """The documents cut into shards at ``cuts`` (uneven sizes, empty ones allowed)."""
    os.makedirs(folder, exist_ok=True)
    bounds = [0, *sorted(cuts), len(texts)]
    for k, (a, b) in enumerate(zip(bounds, bounds[1:])):
        cols = {"text": texts[a:b]}
        if doc_ids is not None:
            cols["doc_id"] = doc_ids[a:b]
        if sites is not None:
            cols["url"] = [f"https://{s}/{i}" for s, i in zip(sites[a:b], range(a, b))]
        path = os.path.join(folder, f"part-{k:03d}.{fmt}")
        if fmt == "parquet":
            pq.write_table(pa.table(cols, schema=pa.schema(
                [(n, pa.int64() if n == "doc_id" else pa.string()) for n in cols])), path, row_group_size=3)
        else:
            with open(path, "w", encoding="utf-8") as fh:
                for i in range(b - a):
                    fh.write(json.dumps({n: v[i] for n, v in cols.items()}) + "\n")
    return folder
