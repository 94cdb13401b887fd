"""Near-duplicate documents by frequent closed itemsets (FCI clusters).

The method
----------
1. Exact duplicates first: documents with identical token streams form their
   own clusters (definition ``exact``).  One representative of each group goes
   on; a text copied in sigma or more documents is all boilerplate by the
   mining definition and would otherwise vanish when boilerplate is removed.
2. Descriptions, two families: syntactic (w-token shingles hashed to 64 bits)
   and lexical (I-Match style: the collection dictionary of words whose
   document frequency lies in an idf band; a document is the set of
   dictionary words it holds).
3. Sketches, both schemes of the method: ``bottom`` (the n minimal elements
   of one permutation) and ``minhash`` (the minimal element of each of n
   permutations, tagged by permutation).
4. Similarity of two documents = the number of common sketch elements;
   similar when at least t.  Candidates come from an inverted index on sketch
   elements (sub-quadratic: only documents sharing an element are paired;
   elements held by more than ``max_postings`` documents are stop elements).
5. Clusters, three definitions side by side:
   ``components``: connected components of the similar graph (the weakest);
   ``fci``: closed sets of documents whose common sketch elements number at
   least t, i.e. frequent closed itemsets of the transposed context (items =
   documents, transactions = sketch elements, minimum support t), mined per
   component with an LCM-style prefix-preserving closure extension; the
   maximal ones (by inclusion, size >= 2) are reported.  Every pair inside
   shares at least t elements and the result does not depend on document
   order.  ``cliques``: maximal cliques of the similar graph (Bron-Kerbosch),
   for components of at most ``clique_limit`` documents.

Departures: stop elements (postings longer than ``max_postings``) are skipped,
as LSH tools do with very common buckets; FCI enumeration has a budget per
component (``fci_budget`` closed sets) and the summary says when it was hit.

Complexity: sketches O(tokens × n) for minhash, O(tokens log) for bottom;
candidates O(sum of squared posting lengths); clusters per component.

References
----------
.. [1] D. I. Ignatov, S. O. Kuznetsov. Frequent Itemset Mining for Clustering
   Near Duplicate Web Documents. ICCS 2009, LNAI 5662 (FCI clusters).
.. [2] A. Broder. On the Resemblance and Containment of Documents. SEQUENCES
   1997; A. Broder, M. Charikar, A. Frieze, M. Mitzenmacher. Min-Wise
   Independent Permutations. STOC 1998 (shingles, bottom-n and n-permutation
   sketches).
.. [3] A. Chowdhury, O. Frieder, D. Grossman, M. C. McCabe. Collection
   Statistics for Fast Duplicate Document Detection. ACM TOIS 20(2), 2002
   (I-Match: the lexical description by an idf band).
.. [4] T. Uno, M. Kiyomi, H. Arimura. LCM ver. 2: Efficient Mining Algorithms
   for Frequent/Closed/Maximal Itemsets. FIMI 2004 (prefix-preserving closure
   extension).
.. [5] C. Bron, J. Kerbosch. Algorithm 457: Finding All Cliques of an
   Undirected Graph. CACM 16(9), 1973; E. Tomita, A. Tanaka, H. Takahashi.
   The Worst-Case Time Complexity for Generating All Maximal Cliques.
   TCS 363(1), 2006 (pivoting).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from .errors import BoilerscopeError
from .kernels import neardup as K


DESCRIPTIONS = ("shingles", "lexical")
SCHEMES = ("bottom", "minhash")


@dataclass
class DedupConfig:
    """Parameters of one detection.

    The defaults are the best measured configuration (``bench/dedup_eval.py``:
    pair F1 of the FCI clusters with the boilerplate removed, on planted
    near-duplicates among real template-sharing pages): 3-token shingles,
    bottom-64 sketches, t = 32.
    """

    method: str = "shingles"
    sketch: str = "bottom"
    shingle: int = 3
    sketch_size: int = 64
    threshold: int = 32
    idf_low: float = 0.0005
    idf_high: float = 0.05
    max_postings: int = 2000
    fci_budget: int = 20000
    clique_limit: int = 300
    seed: int = 1

    def check(self) -> None:
        if self.method not in DESCRIPTIONS:
            raise BoilerscopeError(f"{{method}} must be one of {', '.join(DESCRIPTIONS)}", "method")
        if self.sketch not in SCHEMES:
            raise BoilerscopeError(f"{{sketch}} must be one of {', '.join(SCHEMES)}", "sketch")
        if not 1 <= self.sketch_size <= 256:
            raise BoilerscopeError("{sketch_size} must be between 1 and 256", "sketch_size")
        if not 1 <= self.threshold <= self.sketch_size:
            raise BoilerscopeError(f"{{threshold}} must be between 1 and {{sketch_size}} ({self.sketch_size})",
                                   "threshold", "sketch_size")
        if self.shingle < 1:
            raise BoilerscopeError("{shingle} must be at least 1", "shingle")


def exact_groups(tokens, doc_offsets) -> list[np.ndarray]:
    """Groups (size >= 2) of documents with identical token streams."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    h = K.doc_hashes(tokens, doc_offsets)
    order = np.argsort(h, kind="stable")
    groups = []
    i = 0
    while i < order.shape[0]:
        j = i
        while j < order.shape[0] and h[order[j]] == h[order[i]]:
            j += 1
        if j - i > 1:
            # confirm token by token (a hash match is not proof)
            members = sorted(order[i:j].tolist())
            buckets: list[list[int]] = []
            for d in members:
                seq = tokens[doc_offsets[d]:doc_offsets[d + 1]]
                for b in buckets:
                    r = b[0]
                    if np.array_equal(tokens[doc_offsets[r]:doc_offsets[r + 1]], seq):
                        b.append(d)
                        break
                else:
                    buckets.append([d])
            groups += [np.array(b, np.int64) for b in buckets if len(b) > 1]
        i = j
    groups.sort(key=lambda g: int(g[0]))
    return groups


def token_keys(vocab: list[str]) -> np.ndarray:
    """A 64-bit key per token id from the token's text, so that sketches do not
    depend on the order in which ids were given (document order)."""
    import hashlib
    return np.array([int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little")
                     for t in vocab], dtype=np.uint64)


def sketches(tokens, doc_offsets, cfg: DedupConfig, keys: np.ndarray | None = None) -> np.ndarray:
    """(n_docs, n) uint64 sketches; EMPTY marks missing slots.  ``keys`` maps
    token ids to their text keys (default: the ids themselves)."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    w = cfg.shingle
    if cfg.method == "lexical":
        n_docs = doc_offsets.shape[0] - 1
        vocab = int(tokens.max()) + 1 if tokens.shape[0] else 1
        from .kernels.bloomspan import word_df
        df = word_df(tokens, doc_offsets, vocab)
        lo = max(2, int(np.ceil(cfg.idf_low * n_docs)))
        hi = max(lo, int(np.floor(cfg.idf_high * n_docs)))
        keep = ((df >= lo) & (df <= hi)).astype(np.uint8)[tokens]
        tokens, doc_offsets = K.filter_tokens(tokens, doc_offsets, keep)
        w = 1  # a set of dictionary words
    stream = keys[tokens] if keys is not None else tokens.astype(np.uint64)
    fn = K.sketch_bottom if cfg.sketch == "bottom" else K.sketch_minhash
    return fn(np.ascontiguousarray(stream), doc_offsets, w, cfg.sketch_size, cfg.seed)


def similar_pairs(sk: np.ndarray, t: int, max_postings: int):
    """(a, b, common, skipped stop elements) for pairs with >= t common elements."""
    n_docs, n = sk.shape
    doc = np.repeat(np.arange(n_docs, dtype=np.int64), n)
    elem = sk.reshape(-1)
    ok = elem != K.EMPTY
    elem, doc = elem[ok], doc[ok]
    order = np.lexsort((doc, elem))
    keys, counts, skipped = K.candidate_pairs(elem[order], doc[order], n_docs, max_postings)
    sel = counts >= t
    keys, counts = keys[sel], counts[sel]
    return keys // n_docs, keys % n_docs, counts, int(skipped)


def components(n_docs: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Component label of every document (the smallest member's index)."""
    parent = np.arange(n_docs)

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for x, y in zip(a.tolist(), b.tolist()):
        rx, ry = find(x), find(y)
        if rx != ry:
            if rx < ry:
                parent[ry] = rx
            else:
                parent[rx] = ry
    return np.array([find(x) for x in range(n_docs)])


def closed_sets(members: list[int], elems: dict[int, set], t: int, budget: int):
    """Maximal frequent closed document sets (support >= t) of one component,
    by LCM's prefix-preserving closure extension over documents as items.

    Returns (maximal sets as sorted tuples, number of closed sets, hit budget)."""
    docs = sorted(members)
    universe = sorted(set().union(*(elems[d] for d in docs)))
    index = {e: i for i, e in enumerate(universe)}
    bits = [sum(1 << index[e] for e in elems[d]) for d in docs]
    k = len(docs)

    def closure(E):
        return sum(1 << i for i in range(k) if bits[i] & E == E)

    found = []
    hit = False
    stack = []
    full = (1 << len(universe)) - 1
    root_x = closure(full)
    if len(universe) >= t and root_x:
        found.append(root_x)  # the documents holding every element
    stack.append((root_x, full, -1))
    while stack:
        X, E, core = stack.pop()
        for j in range(core + 1, k):
            if X >> j & 1:
                continue
            E2 = E & bits[j]
            if bin(E2).count("1") < t:
                continue
            Y = closure(E2)
            mask = (1 << j) - 1
            if Y & mask != X & mask:
                continue  # not a prefix-preserving extension: found elsewhere
            found.append(Y)
            if len(found) >= budget:
                hit = True
                stack.clear()
                break
            stack.append((Y, E2, j))
    sets = [Y for Y in found if bin(Y).count("1") >= 2]
    sets = sorted(set(sets), key=lambda Y: -bin(Y).count("1"))
    maximal = []
    for Y in sets:
        if not any(Y & M == Y for M in maximal):
            maximal.append(Y)
    out = [tuple(docs[i] for i in range(k) if Y >> i & 1) for Y in maximal]
    return sorted(out), len(found), hit


def maximal_cliques(members: list[int], adj: dict[int, set]) -> list[tuple]:
    """Bron-Kerbosch with pivoting; cliques of size >= 2."""
    out = []

    def bk(R, P, X):
        if not P and not X:
            if len(R) >= 2:
                out.append(tuple(sorted(R)))
            return
        pivot = max(P | X, key=lambda u: len(adj[u] & P))
        for v in sorted(P - adj[pivot]):
            bk(R | {v}, P & adj[v], X & adj[v])
            P = P - {v}
            X = X | {v}

    bk(set(), set(members), set())
    return sorted(out)


@dataclass
class DedupResult:
    clusters: pl.DataFrame
    pairs: pl.DataFrame
    summary: dict


def detect(tokens, doc_offsets, doc_ids, cfg: DedupConfig | None = None, *, keep=None,
           vocab: list[str] | None = None, progress=None) -> DedupResult:
    """Exact groups on the raw tokens, then near-duplicates on the tokens where
    ``keep`` is 1 (all when None: raw text).  Give ``vocab`` (token texts) so
    that the result does not depend on document order.

    Returns clusters (cluster_id, doc_id, definition) and pairs (doc_a, doc_b,
    common, jaccard) among the documents, plus a summary.
    """
    cfg = cfg or DedupConfig()
    cfg.check()
    report = progress or (lambda stage, frac: None)
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    doc_ids = np.asarray(doc_ids, np.int64)
    n_docs = int(doc_offsets.shape[0] - 1)

    groups = exact_groups(tokens, doc_offsets)
    rep_of = np.arange(n_docs)
    rep_doc = {}
    for g in groups:  # the smallest doc_id represents its group (order independent)
        r = int(g[np.argmin(doc_ids[g])])
        rep_of[g] = r
        rep_doc[r] = g
    reps = np.flatnonzero(rep_of == np.arange(n_docs))
    report("exact", 0.2)

    if keep is not None:
        t2, o2 = K.filter_tokens(tokens, doc_offsets, np.ascontiguousarray(keep, dtype=np.uint8))
    else:
        t2, o2 = tokens, doc_offsets
    # representatives only
    sel_off = np.concatenate(([0], np.cumsum(o2[reps + 1] - o2[reps]))).astype(np.int64)
    sel_tok = np.concatenate([t2[o2[r]:o2[r + 1]] for r in reps]) if reps.shape[0] else np.zeros(0, np.int32)
    sk = sketches(sel_tok, sel_off, cfg, token_keys(vocab) if vocab is not None else None)
    report("sketches", 0.5)
    a, b, common, skipped = similar_pairs(sk, cfg.threshold, cfg.max_postings)
    report("pairs", 0.7)

    # clusters among representatives, then expanded to their exact copies
    members_of = {r: g.tolist() for r, g in rep_doc.items()}

    def expand(local):
        out = []
        for i in local:
            out += members_of.get(int(reps[i]), [int(reps[i])])
        return sorted(out)

    rows = []  # (definition, tuple of doc indices)
    for g in groups:
        rows.append(("exact", tuple(g.tolist())))
    comp = components(reps.shape[0], a, b)
    comp_members: dict[int, list[int]] = {}
    for i, c in enumerate(comp.tolist()):
        comp_members.setdefault(c, []).append(i)
    big = {c: m for c, m in comp_members.items() if len(m) >= 2}
    for c, m in big.items():
        rows.append(("components", tuple(expand(m))))
    elems = {}
    adj: dict[int, set] = {}
    for x, y in zip(a.tolist(), b.tolist()):
        adj.setdefault(x, set()).add(y)
        adj.setdefault(y, set()).add(x)
    n_closed, budget_hit, skipped_cliques = 0, 0, 0
    for c, m in big.items():
        for i in m:
            elems[i] = {int(e) for e in sk[i] if e != K.EMPTY}
        sets, nc, hit = closed_sets(m, elems, cfg.threshold, cfg.fci_budget)
        n_closed += nc
        budget_hit += int(hit)
        for s in sets:
            rows.append(("fci", tuple(expand(s))))
        if len(m) <= cfg.clique_limit:
            for q in maximal_cliques(m, adj):
                rows.append(("cliques", tuple(expand(q))))
        else:
            skipped_cliques += 1
    report("clusters", 0.9)

    # canonical cluster ids: by definition, size desc, smallest doc_id
    order = {"exact": 0, "components": 1, "fci": 2, "cliques": 3}
    keyed = sorted(((order[d], -len(m), sorted(doc_ids[list(m)].tolist()), d) for d, m in rows))
    cid, did, dfn = [], [], []
    for i, (_, _, ids, d) in enumerate(keyed):
        cid += [i] * len(ids)
        did += ids
        dfn += [d] * len(ids)
    clusters = pl.DataFrame({"cluster_id": pl.Series(cid, dtype=pl.Int64),
                             "doc_id": pl.Series(did, dtype=pl.Int64),
                             "definition": pl.Series(dfn, dtype=pl.String)})
    da = doc_ids[reps[a]] if a.shape[0] else np.zeros(0, np.int64)
    db = doc_ids[reps[b]] if b.shape[0] else np.zeros(0, np.int64)
    lo, hi = np.minimum(da, db), np.maximum(da, db)
    pairs = pl.DataFrame({"doc_a": lo.astype(np.int64), "doc_b": hi.astype(np.int64),
                          "common": common.astype(np.int64),
                          "jaccard": (common / cfg.sketch_size).astype(np.float64)}).sort(["doc_a", "doc_b"])
    counts = clusters.group_by("definition").agg(pl.col("cluster_id").n_unique().alias("n"))
    summary = {
        "config": asdict(cfg), "documents": n_docs, "exact_groups": len(groups),
        "representatives": int(reps.shape[0]), "similar_pairs": int(a.shape[0]),
        "stop_elements_skipped": skipped, "closed_sets": n_closed, "fci_budget_hit": budget_hit,
        "components_without_cliques": skipped_cliques,
        "clusters": {r["definition"]: int(r["n"]) for r in counts.iter_rows(named=True)},
        "boilerplate_removed": keep is not None,
        "tokens_used": int(t2.shape[0]),
    }
    return DedupResult(clusters=clusters, pairs=pairs, summary=summary)
