"""The cut rule (engine.clean) against its brute-force definition (tests/naive.py)."""
import numpy as np
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import naive
from engine.clean import cut_mask, cut_text, decision_counts, decision_cut, stop_grams, template_mask
from engine.tokenizer import tokenize_arrow

words = st.lists(st.sampled_from("abc"), max_size=12)
VOCAB = {t: i for i, t in enumerate("abc")}


def flat(docs):
    """The token ids and document offsets of documents of "abc" tokens."""
    return (np.array([VOCAB[t] for d in docs for t in d], np.int32),
            np.concatenate(([0], np.cumsum([len(d) for d in docs]))).astype(np.int64))


def templates_only(noise, keep):
    """A text beginning or ending with * is no template: engine and oracle
    both never match it; such texts are left out."""
    ok = [t for t in noise + keep if not t.startswith("*") and not t.endswith("*")]
    return [t for t in noise if t in ok], [t for t in keep if t in ok]


@settings(max_examples=400, deadline=None)
@given(st.lists(words, min_size=1, max_size=6), st.lists(words, max_size=3), st.lists(words, max_size=2),
       st.integers(2, 4))
def test_cut_mask_matches_the_definition(docs, noise, keep, L):
    tokens, off = flat(docs)
    grams = stop_grams([" ".join(p) for p in noise], [" ".join(p) for p in keep], VOCAB, L)
    got = cut_mask(tokens, off, L, grams)
    want = naive.cut_mask(docs, L, noise, keep)
    assert got.astype(bool).tolist() == [x for m in want for x in m]


def test_keep_wins_and_unknown_tokens_never_match():
    vocab = {"a": 0, "b": 1, "c": 2}
    grams = stop_grams(["a b c", "a b zz"], ["b c"], vocab, 2)
    assert grams.tolist() == [[0, 1]]  # "b c" is kept; "b zz" cannot occur
    assert cut_mask(np.array([0, 1, 2, 0, 1], np.int32), np.array([0, 3, 5]), 2, grams).tolist() == [1, 1, 0, 1, 1]


# "z" is in no document and not in the vocabulary (a decision made on another snapshot)
decision = st.lists(st.sampled_from("abcz*"), min_size=1, max_size=6).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(st.lists(words, min_size=1, max_size=6), st.lists(decision, max_size=3), st.lists(decision, max_size=2),
       st.integers(2, 3), st.integers(1, 3))
def test_decision_cut_with_templates_matches_the_definition(docs, noise, keep, L, max_slot):
    tokens, off = flat(docs)
    noise, keep = templates_only(noise, keep)
    got = decision_cut(tokens, off, L, noise, keep, VOCAB, max_slot)
    want = naive.decision_cut(docs, L, noise, keep, max_slot)
    assert got.astype(bool).tolist() == [x for m in want for x in m]


@settings(max_examples=300, deadline=None)
@given(st.lists(words, min_size=1, max_size=6), st.lists(decision, max_size=5), st.lists(decision, max_size=2),
       st.integers(2, 3), st.integers(1, 3))
def test_each_decision_cuts_what_the_definition_cuts_with_it_alone(docs, noise, keep, L, max_slot):
    """decision_counts: one scan for all decisions gives each one's count on its own (keep still wins)."""
    tokens, off = flat(docs)
    noise, keep = templates_only(noise, keep)
    got = decision_counts(tokens, off, L, noise, keep, VOCAB, max_slot).tolist()
    want = [sum(x for m in naive.decision_cut(docs, L, [d], keep, max_slot) for x in m) for d in noise]
    assert got == want


def test_counts_of_overlapping_and_repeated_decisions():
    vocab = {t: i for i, t in enumerate("abcxyz")}
    doc = np.array([vocab[t] for t in "a b c a b c x y z".split()], np.int32)
    off = np.array([0, 9])
    # "a b c" cuts "b c" twice (1, 2, 4, 5), "b c a b" adds "c a" (3);
    # "a b" is kept: its gram is nobody's; a gram holding an unknown token never occurs, the phrase's
    # other grams do ("x y" of "x y zz"); a phrase shorter than L cuts nothing
    got = decision_counts(doc, off, 2, ["a b c", "b c a b", "x y zz", "x", "a b c", "zz q"], ["a b"], vocab, 2)
    assert got.tolist() == [4, 5, 2, 0, 4, 0]
    # keep wins per L-gram, whatever other token its phrase holds
    assert decision_cut(doc[:5], np.array([0, 5]), 2, ["a b c"], ["b c zz"], vocab, 2).tolist() == [1, 1, 0, 1, 1]
    assert decision_counts(doc, off, 2, ["a * c", "x * z"], ["y z"], vocab, 2).tolist() == [6, 1]


def test_template_cut_minimal_cases():
    vocab = {t: i for i, t in enumerate("abcxyz")}
    ids = lambda s: np.array([vocab[t] for t in s.split()], np.int32)
    # «a * c»: one slot of 1..2 tokens, never across documents
    doc = ids("a x c a x y c a x y z c")
    assert template_mask(doc, np.array([0, 12]), ["a * c"], vocab, 2).tolist() == [1] * 7 + [0] * 5
    assert template_mask(ids("a x c"), np.array([0, 2, 3]), ["a * c"], vocab, 2).tolist() == [0, 0, 0]
    # a noise template cuts, a keep phrase's L-grams shield it, a keep template wins over noise phrases
    doc = ids("a x b c z")
    assert decision_cut(doc, np.array([0, 5]), 2, ["a * c"], [], vocab, 2).tolist() == [1, 1, 1, 1, 0]
    assert decision_cut(doc, np.array([0, 5]), 2, ["a * c"], ["x b"], vocab, 2).tolist() == [1, 0, 0, 1, 0]
    assert decision_cut(doc, np.array([0, 5]), 2, ["a x b c"], ["a * c"], vocab, 2).tolist() == [0] * 5
    # a template with a token the snapshot never has cannot occur
    assert decision_cut(doc, np.array([0, 5]), 2, ["a * nope"], [], vocab, 2).tolist() == [0] * 5


ALPHABET = "ab ,.Σ\n"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=40), st.data())
def test_cut_text_matches_the_definition(text, data):
    tk = tokenize_arrow(pa.array([text]))
    n = tk.n_tokens
    mask = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    got = cut_text(text, tk.span_start, tk.span_end, np.array(mask, bool))
    want = naive.cut_text(text, [(int(a), int(b)) for a, b in zip(tk.span_start, tk.span_end)], mask)
    assert got == want
    # cut words never merge: the tokens left are exactly the uncut ones
    left = naive.tokenize(got)[0]
    assert left == [t for t, m in zip(naive.tokenize(text)[0], mask) if not m]
