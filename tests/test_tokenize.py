"""Tokenisation contract: maximal runs of [\\p{L}\\p{M}\\p{N}]+, str.lower(), code-point spans."""
import json
import os

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import naive
from engine.errors import BoilerscopeError
from engine.tokenizer import tokenize_arrow, tokenize_lists

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = [json.loads(line) for line in open(os.path.join(HERE, "contract", "tokens.jsonl"), encoding="utf-8")]


def engine_tokens(texts, **kw):
    tk = tokenize_arrow(pa.array(texts, pa.string()), **kw)
    out = []
    for d in range(len(texts)):
        a, b = tk.doc_offsets[d], tk.doc_offsets[d + 1]
        out.append(([tk.vocab[i] for i in tk.tokens[a:b]],
                    [[int(s), int(e)] for s, e in zip(tk.span_start[a:b], tk.span_end[a:b])]))
    return out


@pytest.mark.parametrize("fast_ascii", [True, False], ids=["ascii-fast-path", "decoder-only"])
@pytest.mark.parametrize("case", VECTORS, ids=[v["text"][:20] for v in VECTORS])
def test_contract_vectors(case, fast_ascii):
    [(toks, spans)] = engine_tokens([case["text"]], fast_ascii=fast_ascii)
    assert toks == case["tokens"]
    assert spans == case["spans"]


def test_named_cases():
    cases = {
        "Все права защищены.": ["все", "права", "защищены"],
        "İ": ["i̇"],
        "ΟΔΟΣ": ["οδος"],
        "e\u0301te\u0301": ["e\u0301te\u0301"],  # combining acute stays inside the token
        "a.b,c;d": ["a", "b", "c", "d"],
        "MiXeD CaSe": ["mixed", "case"],
    }
    got = engine_tokens(list(cases))
    for (text, want), (toks, spans) in zip(cases.items(), got):
        assert toks == want, text
        for tok, (s, e) in zip(toks, spans):
            assert text[s:e].lower() == tok


def test_spans_map_back_to_original_text():
    text = "Hello, WORLD! Ünïcode—dash"
    [(toks, spans)] = engine_tokens([text])
    assert [text[s:e] for s, e in spans] == ["Hello", "WORLD", "Ünïcode", "dash"]


def test_ids_shared_across_documents_and_case():
    tk = tokenize_arrow(pa.array(["Foo foo FOO", "fOO"]))
    assert len(set(tk.tokens.tolist())) == 1
    assert tk.vocab == ["foo"]


def test_nulls_are_empty_documents():
    tk = tokenize_arrow(pa.array(["a b", None, "", "c"]))
    assert np.diff(tk.doc_offsets).tolist() == [2, 0, 0, 1]


def test_invalid_utf8_is_reported():
    data = b"ok\xff\xfe"
    arr = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, len(data)], np.int64)),
                                           pa.py_buffer(data))
    with pytest.raises(BoilerscopeError, match="not valid UTF-8"):
        tokenize_arrow(arr)


def test_token_lists_used_as_given():
    tk, texts = tokenize_lists([["Foo", "bar-baz"], None, ["foo"]])
    assert tk.vocab == ["foo", "bar-baz"]
    assert texts == ["Foo bar-baz", "", "foo"]
    assert tk.span_start.tolist() == [0, 4, 0]


ALPHABET = "aAbΣσςİi\u0301 ,.-1²日😀\n"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET, max_size=30), min_size=1, max_size=6))
def test_matches_reference_tokenizer(texts):
    got = engine_tokens(texts)
    for text, (toks, spans) in zip(texts, got):
        ref_toks, ref_spans = naive.tokenize(text)
        assert toks == ref_toks
        assert spans == [list(s) for s in ref_spans]


def same_tokenized(a, b) -> None:
    assert a.vocab == b.vocab
    for name in ("tokens", "doc_offsets", "span_start", "span_end"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


#: Mixed scripts, with long ASCII runs (the fast path's loops) beside
#: multi-byte letters, marks and separators that end or carry on a token.
MIXED = st.lists(st.sampled_from(["a", "Z", "q9", "Hello", " ", ".,", "-\n", "é", "Σ", "ς", "İ", "\u0301",
                                          "日本", "😀", "²", "ß", "Ǆ", "\u00a0", "\u200b", "x\u0308"]), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), MIXED), min_size=1, max_size=8), st.integers(0, 2))
def test_ascii_fast_path_equals_the_decoder(texts, regrow):
    """The ASCII fast path and the decoder-only twin give the same tokens,
    ids and spans on mixed scripts (tiny buffers too: a token resumed after
    a regrowth is read again from its start, by either path)."""
    kw = {0: {}, 1: {"_start_size": 2, "chunk_bytes": 5}, 2: {"_start_size": 4, "chunk_bytes": 64}}[regrow]
    fast = tokenize_arrow(pa.array(texts, pa.string()), fast_ascii=True, **kw)
    slow = tokenize_arrow(pa.array(texts, pa.string()), fast_ascii=False, **kw)
    same_tokenized(fast, slow)
    for text, (toks, spans) in zip(texts, engine_tokens(texts)):
        ref_toks, ref_spans = naive.tokenize(text or "")
        assert toks == ref_toks and spans == [list(s) for s in ref_spans]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET, max_size=60), min_size=1, max_size=6))
def test_tiny_buffers_regrow_mid_document(texts):
    """Buffers of 2 entries: every token may hit a regrowth and the scan
    resumes inside the document; the answer stays the reference's."""
    got = engine_tokens(texts, _start_size=2, chunk_bytes=7)
    for text, (toks, spans) in zip(texts, got):
        ref_toks, ref_spans = naive.tokenize(text)
        assert toks == ref_toks
        assert spans == [list(s) for s in ref_spans]


def test_one_huge_document_costs_about_its_size():
    """A 40 MB document that is one token: the buffers follow what is found
    (before, they were sized for 20M tokens: about 40 bytes per byte; now
    about 5: the text's bytes, the raw token, its str, the first guess of
    one token per 8 bytes)."""
    import tracemalloc
    text = "x" * (40 << 20)
    arr = pa.array([text, "a b"], pa.large_string())
    tracemalloc.start()
    try:
        tk = tokenize_arrow(arr, workers=1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert tk.tokens.tolist() == [0, 1, 2] and tk.vocab[1:] == ["a", "b"]
    assert len(tk.vocab[0]) == 40 << 20
    assert peak < 6 * (40 << 20), peak


def test_threaded_tokenizer_equals_serial():
    import random
    rng = random.Random(3)
    words = ["Alpha", "beta", "ΓΑΜΜΑ", "İzmir", "naïve", "日本語", "x²", "don't"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    texts[5] = None
    one = tokenize_arrow(pa.array(texts), workers=1)
    two = tokenize_arrow(pa.array(texts), workers=2, parallel_min_bytes=0, chunk_bytes=4096)
    same_tokenized(one, two)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=ALPHABET, max_size=40), min_size=1, max_size=12),
       st.lists(st.integers(0, 12), max_size=4), st.sampled_from([1, 2]), st.sampled_from([2, 1 << 16]))
def test_chunks_with_kept_raw_tables_read_as_one(texts, cuts, workers, start):
    """A corpus tokenized chunk by chunk with the workers' raw-token tables
    and the vocabulary kept across chunks (the snapshot reader's way) gives
    the ids, spans and vocabulary of one call on the whole corpus: raw
    tokens met in earlier chunks map through the tables, new ones get the
    next ids in order of first occurrence."""
    whole = tokenize_arrow(pa.array(texts, pa.string()), workers=1)
    vocabulary, tables = ({}, []), []
    bounds = [0, *sorted(min(c, len(texts)) for c in cuts), len(texts)]
    toks, starts, ends = [], [], []
    for a, b in zip(bounds, bounds[1:]):
        tk = tokenize_arrow(pa.array(texts[a:b], pa.string()), workers=workers, parallel_min_bytes=0,
                            chunk_bytes=16, vocabulary=vocabulary, raw_tables=tables, _start_size=start)
        toks.append(tk.tokens)
        starts.append(tk.span_start)
        ends.append(tk.span_end)
        assert len(tk.tokens) == int(tk.doc_offsets[-1])
    assert vocabulary[1] == whole.vocab
    assert np.concatenate(toks).tolist() == whole.tokens.tolist()
    assert np.concatenate(starts).tolist() == whole.span_start.tolist()
    assert np.concatenate(ends).tolist() == whole.span_end.tolist()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.text(alphabet=ALPHABET, max_size=5)),
                                               max_size=6)), min_size=1, max_size=6),
       st.sampled_from(["list", "large_list"]))
def test_token_lists_match_their_plain_reading(docs, kind):
    """Token lists (the index's own tokens): used as given, null tokens
    skipped, lowercased with str.lower(), joined by single spaces, spans in
    code points into that text."""
    from engine.tokenizer import tokenize_token_lists
    typ = pa.list_(pa.string()) if kind == "list" else pa.large_list(pa.large_string())
    tk, texts = tokenize_token_lists(pa.array(docs, typ))
    for d, lst in enumerate(docs):
        raw = [t for t in (lst or []) if t is not None]
        text = " ".join(raw)
        a, b = tk.doc_offsets[d], tk.doc_offsets[d + 1]
        assert [tk.vocab[i] for i in tk.tokens[a:b]] == [t.lower() for t in raw]
        assert texts[d].as_py() == text
        assert [text[s:e] for s, e in zip(tk.span_start[a:b], tk.span_end[a:b])] == raw
