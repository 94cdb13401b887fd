"""Near-duplicate clusters against brute-force references of their definitions."""
import itertools
import random

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kernels import neardup as K
from engine.neardup import DedupConfig, closed_sets, components, detect, exact_groups, similar_pairs


def brute_common(sk):
    sets = [set(int(e) for e in row if e != K.EMPTY) for row in sk]
    out = {}
    for a, b in itertools.combinations(range(len(sets)), 2):
        c = len(sets[a] & sets[b])
        if c:
            out[(a, b)] = c
    return out, sets


sketch_rows = st.lists(st.lists(st.integers(0, 12), min_size=1, max_size=6, unique=True), min_size=2, max_size=9)


def as_sketch(rows, n=6):
    sk = np.full((len(rows), n), K.EMPTY, np.uint64)
    for i, r in enumerate(rows):
        sk[i, :len(r)] = np.array(sorted(r), np.uint64)
    return sk


@settings(max_examples=200, deadline=None)
@given(sketch_rows, st.integers(1, 4))
def test_pairs_match_brute_force(rows, t):
    sk = as_sketch(rows)
    a, b, common, _ = similar_pairs(sk, t, max_postings=10**6)
    got = {(int(x), int(y)): int(c) for x, y, c in zip(a, b, common)}
    want, _ = brute_common(sk)
    assert got == {k: v for k, v in want.items() if v >= t}


@settings(max_examples=200, deadline=None)
@given(sketch_rows, st.integers(1, 3))
def test_components_and_closed_sets_match_definitions(rows, t):
    sk = as_sketch(rows)
    a, b, _, _ = similar_pairs(sk, t, 10**6)
    n = len(rows)
    labels = components(n, a, b)
    # components: brute-force reachability
    adj = {i: set() for i in range(n)}
    for x, y in zip(a.tolist(), b.tolist()):
        adj[x].add(y)
        adj[y].add(x)
    for i in range(n):
        seen, todo = {i}, [i]
        while todo:
            for v in adj[todo.pop()]:
                if v not in seen:
                    seen.add(v)
                    todo.append(v)
        assert {j for j in range(n) if labels[j] == labels[i]} == seen
    _, sets = brute_common(sk)
    elems = {i: sets[i] for i in range(n)}
    for comp in {int(c) for c in labels}:
        members = [i for i in range(n) if labels[i] == comp]
        if len(members) < 2:
            continue
        found, _, hit = closed_sets(members, elems, t, 10**6)
        assert not hit
        # brute force: all doc subsets of the component with >= t common elements, closed, maximal
        frequent = []
        for k in range(2, len(members) + 1):
            for sub in itertools.combinations(members, k):
                common = set.intersection(*(sets[i] for i in sub))
                if len(common) >= t:
                    closure = tuple(j for j in range(n) if common <= sets[j])
                    frequent.append(closure)
        closed = set(frequent)
        maximal = sorted(c for c in closed if not any(set(c) < set(o) for o in closed))
        assert found == maximal
        for c in found:  # every pair inside shares at least t elements
            for x, y in itertools.combinations(c, 2):
                assert len(sets[x] & sets[y]) >= t


def corpus(seed=0, n_groups=6, copies=3, singles=20, vocab=3000, length=120):
    rng = random.Random(seed)
    docs, truth = [], []
    template = [f"nav{i}" for i in range(40)]
    for g in range(n_groups):
        base = [f"w{rng.randrange(vocab)}" for _ in range(length)]
        for c in range(copies):
            v = list(base)
            for _ in range(3):  # a few word edits
                v[rng.randrange(len(v))] = f"x{rng.randrange(10**6)}"
            docs.append(" ".join(template + v + template[::-1]))
            truth.append(g)
    for s in range(singles):  # template-only look-alikes
        body = [f"w{rng.randrange(vocab)}" for _ in range(length // 3)]
        docs.append(" ".join(template + body + template[::-1]))
        truth.append(100 + s)
    docs.append(docs[0])  # an exact copy
    truth.append(0)
    return docs, truth


def tokenized(docs, with_vocab=False):
    from engine.tokenizer import tokenize_arrow
    tk = tokenize_arrow(pa.array(docs))
    return (tk.tokens, tk.doc_offsets, tk.vocab) if with_vocab else (tk.tokens, tk.doc_offsets)


def test_planted_groups_recovered_and_template_pages_apart():
    docs, truth = corpus()
    tokens, off = tokenized(docs)
    from engine.planner import mine_tokens
    res = mine_tokens(tokens, off, int(tokens.max()) + 1, 10, 10)
    keep = np.ones(tokens.shape[0], np.uint8)
    for p, m in zip(res.rng_pos.tolist(), res.rng_len.tolist()):
        keep[p:p + m] = 0
    cfg = DedupConfig(sketch_size=64, threshold=16)
    out = detect(tokens, off, np.arange(len(docs)), cfg, keep=keep)
    fci = out.clusters.filter(pl.col("definition") == "fci")
    groups = sorted(tuple(sorted(g)) for g in fci.group_by("cluster_id").agg("doc_id")["doc_id"].to_list())
    want = sorted(tuple(i for i, t in enumerate(truth) if t == g) for g in range(6))
    assert groups == want
    exact = out.clusters.filter(pl.col("definition") == "exact")["doc_id"].to_list()
    assert sorted(exact) == [0, len(docs) - 1]
    # raw text: the shared template chains look-alikes into one component
    raw = detect(tokens, off, np.arange(len(docs)), cfg)
    comp = raw.clusters.filter(pl.col("definition") == "components")
    assert comp.group_by("cluster_id").len()["len"].max() > 3


def test_result_does_not_depend_on_document_order():
    docs, _ = corpus(seed=3)
    perm = list(range(len(docs)))
    random.Random(9).shuffle(perm)
    t1, o1, v1 = tokenized(docs, True)
    t2, o2, v2 = tokenized([docs[i] for i in perm], True)
    cfg = DedupConfig(sketch_size=32, threshold=8)
    r1 = detect(t1, o1, np.arange(len(docs)), cfg, vocab=v1)
    r2 = detect(t2, o2, np.array(perm), cfg, vocab=v2)

    def canon(frame):
        return sorted((d, tuple(sorted(m))) for d, m in
                      frame.group_by(["cluster_id", "definition"]).agg("doc_id").select("definition", "doc_id").rows())

    assert canon(r1.clusters) == canon(r2.clusters)
    assert r1.pairs.sort(["doc_a", "doc_b"]).equals(r2.pairs.sort(["doc_a", "doc_b"]))


def test_exact_groups_confirm_tokens():
    tokens = np.array([1, 2, 1, 2, 3, 1, 2], np.int32)
    off = np.array([0, 2, 4, 5, 7], np.int64)
    assert [g.tolist() for g in exact_groups(tokens, off)] == [[0, 1, 3]]


def test_lexical_and_minhash_run():
    docs, _ = corpus(seed=5)
    tokens, off = tokenized(docs)
    for cfg in (DedupConfig(method="lexical", sketch="minhash", sketch_size=32, threshold=20, idf_low=0.01, idf_high=0.5),
                DedupConfig(sketch="minhash", sketch_size=64, threshold=32)):
        out = detect(tokens, off, np.arange(len(docs)), cfg)
        assert out.pairs.height > 0
        assert set(out.clusters["definition"].unique()) <= {"exact", "components", "fci", "cliques"}


def test_dedup_cli(cli, tmp_path):
    docs, _ = corpus(seed=1)
    pq.write_table(pa.table({"text": docs}), tmp_path / "d.parquet")
    status, out, err = cli("dedup", tmp_path / "d.parquet", "--out", "res", "--quiet", "--threshold", "16")
    assert status == 0, err
    clusters = pl.read_parquet(tmp_path / "res" / "clusters.parquet")
    assert clusters.schema == {"cluster_id": pl.Int64, "doc_id": pl.Int64, "definition": pl.String}
    pairs = pl.read_parquet(tmp_path / "res" / "pairs.parquet")
    assert pairs.columns == ["doc_a", "doc_b", "common", "jaccard"]
    assert (tmp_path / "res" / "dedup_summary.json").exists()
    status, out, err = cli("dedup", "boilerscope.duckdb", "--raw", "--quiet", "--threshold", "16")
    assert status == 0 and "raw text" in out
    for args, word in ((["--threshold", "0"], "threshold"), (["--run", "99"], "run 99"),
                       (["--sketch-size", "999"], "sketch-size")):
        status, out, err = cli("dedup", "boilerscope.duckdb", *args, "--quiet")
        assert status == 2 and word in err and "Traceback" not in err
