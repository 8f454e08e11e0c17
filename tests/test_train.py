"""Tests for attn.tagging_data, attn.backprop, attn.taggers and attn.train: the toy task, every hand-written
gradient, the taggers, training."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attn
from attn import backprop as B
from attn import taggers as M
from attn import tagging_data as D
from attn import train as T


def small_batch(seed=3, N=6, B=3):
    return D.length_batches(D.make_sentences(B, seed=seed, min_len=N, max_len=N), B)[0]


# --- the data ------------------------------------------------------------------------------------

def test_sentences_are_seeded_and_well_formed():
    a, b = D.make_sentences(50, seed=4), D.make_sentences(50, seed=4)
    for (ta, ga), (tb, gb) in zip(a, b):
        np.testing.assert_array_equal(ta, tb)
        np.testing.assert_array_equal(ga, gb)
        assert 8 <= len(ta) <= 24
        assert np.sum(np.isin(ta, D.CUE_IDS)) == 1
        assert D.is_ambiguous(ta).any()
        assert D.PAD_ID not in ta


def test_the_cue_decides_every_ambiguous_tag():
    tokens = D.encode(["sold", "the", "saw", "I", "book"])
    assert [D.TAGS[k] for k in D.true_tags(tokens)] == ["V", "DET", "N", "PRON", "N"]
    tokens = D.encode(["I", "saw", "a", "red", "fly", "yesterday"])
    assert [D.TAGS[k] for k in D.true_tags(tokens)] == ["PRON", "V", "DET", "ADJ", "V", "ADV"]


def test_cues_are_balanced_and_reach_far():
    sentences = D.make_sentences(400, seed=5)
    yesterday = sum(D.decode(t)[D.cue_position(t)] == "yesterday" for t, _ in sentences)
    assert 150 < yesterday < 250
    assert D.cue_distances(sentences).max() >= 20


def test_length_batches_keep_every_sentence_once():
    sentences = D.make_sentences(70, seed=6)
    batches = D.length_batches(sentences, 8)
    assert sum(t.shape[0] for t, _ in batches) == 70
    assert all(t.shape == g.shape and t.shape[0] <= 8 for t, g in batches)


def test_window_ceiling_by_hand():
    tokens = D.encode(["yesterday", "the", "saw", "a", "dog", "saw"])  # saws at distance 2 and 5
    sentences = [(tokens, D.true_tags(tokens))]
    assert D.window_ceiling(sentences, 1) == pytest.approx((6 - 0.5 * 2) / 6)
    assert D.window_ceiling(sentences, 2) == pytest.approx((6 - 0.5) / 6)
    assert D.window_ceiling(sentences, 5) == 1.0


@pytest.mark.parametrize("call, message", [
    (lambda: D.make_sentences(0, seed=0), "n must be an integer >= 1"),
    (lambda: D.make_sentences(3, seed=0, min_len=5, max_len=4), "max_len must be an integer >= 5"),
    (lambda: D.encode(["saw", "hammer"]), "unknown: \\['hammer'\\]"),
    (lambda: D.check_tokens(np.array([[1, 99]])), "outside 0..20"),
    (lambda: D.check_tokens(np.zeros((2, 0), dtype=int)), "shape \\(2, 0\\)"),
    (lambda: D.cue_position(D.encode(["the", "saw"])), "exactly one cue, found 0"),
    (lambda: D.window_ceiling(D.make_sentences(2, seed=0), -1), "half_width must be an integer >= 0"),
])
def test_data_input_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- layers agree with attn.core, gradients agree with finite differences --------------------------

def test_attention_forward_is_the_lectures_self_attention():
    rng = np.random.default_rng(0)
    I = rng.normal(size=(2, 4, 7))
    W_q, W_k, W_v = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.normal(size=(5, 4))
    O, A_prime, _ = B.attention_forward(I, W_q, W_k, W_v, scale=1 / np.sqrt(3))
    for b in range(2):
        O_ref, A_ref = attn.self_attention(I[b], W_q, W_k, W_v, scale=1 / np.sqrt(3))
        np.testing.assert_allclose(O[b], O_ref, rtol=1e-12)
        np.testing.assert_allclose(A_prime[b], A_ref, rtol=1e-12)
    np.testing.assert_allclose(B.softmax_columns(I[0]), attn.softmax(I[0], axis=0), rtol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 6))
def test_softmax_backward_matches_finite_differences(seed, N):
    rng = np.random.default_rng(seed)
    A, dA_prime = rng.normal(size=(N, N)), rng.normal(size=(N, N))
    eps = 1e-6
    numeric = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        up, down = A.copy(), A.copy()
        up[idx] += eps
        down[idx] -= eps
        numeric[idx] = np.sum(dA_prime * (attn.softmax(up) - attn.softmax(down))) / (2 * eps)
    np.testing.assert_allclose(B.softmax_columns_backward(attn.softmax(A), dA_prime), numeric, atol=1e-8)


def test_cross_entropy_gradient_and_value():
    logits = np.array([[0.0, 2.0], [np.log(3.0), 0.0]])
    loss, d = B.cross_entropy(logits, np.array([1, 0]))
    p0 = 3.0 / 4.0
    p1 = np.exp(2.0) / (np.exp(2.0) + 1.0)
    assert loss == pytest.approx(-(np.log(p0) + np.log(p1)) / 2)
    np.testing.assert_allclose(d.sum(axis=0), [0.0, 0.0], atol=1e-15)


@pytest.mark.parametrize("init, loss_and_grads", [
    (M.init_window_model, M.window_loss_and_grads),
    (M.init_attention_model, M.attention_loss_and_grads),
    (lambda seed, **kw: M.init_attention_model(seed, n_positions=8, **kw), M.attention_loss_and_grads),
], ids=["window", "attention", "attention+position"])
def test_gradient_check_passes(init, loss_and_grads):
    params = init(1, d=3, hidden=4)
    assert T.gradient_check(loss_and_grads, params, *small_batch()) <= 1e-6


def test_gradient_check_passes_at_the_chapters_start():
    """W_q and W_k start small (qk_init=0.1): the check must hold there too, positions included."""
    params = M.init_attention_model(4, d=4, d_k=4, hidden=5, n_positions=6)
    tokens, tags = D.length_batches(D.make_order_sentences(3, seed=1, min_len=6, max_len=6), 3)[0]
    assert T.gradient_check(M.attention_loss_and_grads, params, tokens, tags) <= 1e-6


def test_gradient_check_catches_a_wrong_gradient():
    def broken(params, tokens, tags):
        loss, grads = M.attention_loss_and_grads(params, tokens, tags)
        grads["W_k"] = grads["W_k"].T  # a typical slip: square matrix, wrong orientation
        return loss, grads

    params = M.init_attention_model(2, d=3, d_k=3, hidden=4)
    assert T.gradient_check(broken, params, *small_batch()) > 0.1


def test_window_sees_its_neighbours_and_pads():
    win = M.window_tokens(np.array([[5, 6, 7]]), 1)
    np.testing.assert_array_equal(win[:, 0], [[D.PAD_ID, 5, 6], [5, 6, 7], [6, 7, D.PAD_ID]])


def test_window_model_ignores_words_outside_its_window():
    params = M.init_window_model(0, half_width=1)
    a = D.encode(["yesterday", "the", "dog", "saw", "a", "red", "tree", "book"])
    b = a.copy()
    b[0] = D.WORD_ID["sold"]  # change a word 3 away from "saw" at position 3
    assert M.window_predict(params, a)[3] == M.window_predict(params, b)[3]


def test_adam_moves_against_the_gradient():
    params, grads = {"w": np.array([1.0, -1.0])}, {"w": np.array([2.0, -0.5])}
    new = T.adam_step(params, grads, {}, lr=0.1)
    np.testing.assert_allclose(new["w"], [0.9, -0.9])  # the first step has size lr in every coordinate
    np.testing.assert_array_equal(params["w"], [1.0, -1.0])


def test_short_training_lowers_the_loss_and_is_deterministic():
    sentences = D.make_sentences(120, seed=7)
    batches = D.length_batches(sentences, 16)
    runs = [T.train(M.attention_loss_and_grads, M.init_attention_model(0), batches, epochs=3, seed=1)
            for _ in range(2)]
    loss = runs[0][1]["loss"]
    assert loss[-1] < 0.7 * loss[0]
    assert runs[0][1]["loss"] == runs[1][1]["loss"]


def test_every_predict_returns_tags_and_attention_weights_come_from_their_own_function():
    tokens = D.encode(["yesterday", "the", "dog", "saw", "a", "red", "fly"])
    params = M.init_attention_model(5, qk_init=1.0)
    for predict, p in ((M.window_predict, M.init_window_model(5)), (M.attention_predict, params)):
        tags = predict(p, tokens)
        assert isinstance(tags, np.ndarray) and tags.shape == tokens.shape and tags.dtype.kind == "i"
        batch = predict(p, np.stack([tokens, tokens[::-1]]))
        np.testing.assert_array_equal(batch[0], tags)
    A_prime = M.attention_weights(params, tokens)
    scale = 1 / np.sqrt(params["W_q"].shape[0])
    _, expected = attn.self_attention(params["W_emb"][:, tokens], params["W_q"], params["W_k"], params["W_v"],
                                      scale=scale)
    np.testing.assert_allclose(A_prime, expected, rtol=1e-12)
    assert M.attention_weights(params, tokens[None]).shape == (1, 7, 7)


def test_the_loop_trains_a_sequence_classifier_too():
    """train, adam_step and gradient_check take any (loss_and_grads, predict): here N frames -> one label."""
    rng = np.random.default_rng(0)

    def make(n):  # label 1: the frames' mean leans along (1, -1); sequences of 3 or 5 frames
        batches = []
        for N in (3, 5):
            y = rng.integers(0, 2, n)
            X = rng.normal(size=(n, 2, N)) + (2 * y - 1)[:, None, None] * np.array([1.0, -1.0])[None, :, None]
            batches.append((X, y))
        return batches

    def loss_and_grads(params, X, y):  # mean pooling over frames, then a linear layer, then cross entropy
        pooled = X.mean(axis=2).T  # (2, B)
        loss, dlogits = B.cross_entropy(params["W"] @ pooled + params["b"][:, None], y)
        return loss, {"W": dlogits @ pooled.T, "b": dlogits.sum(axis=1)}

    def predict(params, X):
        return (params["W"] @ X.mean(axis=2).T + params["b"][:, None]).argmax(axis=0)

    params = {"W": np.zeros((2, 2)), "b": np.zeros(2)}
    assert T.gradient_check(loss_and_grads, {"W": rng.normal(size=(2, 2)), "b": rng.normal(size=2)},
                            *make(4)[0]) <= 1e-6
    validation = make(50)
    trained, history = T.train(loss_and_grads, params, make(32), epochs=5, lr=0.1, predict=predict,
                               validation=validation)
    zeros = sum(int(np.sum(y == 0)) for _, y in validation)
    assert history["validation"][0] == zeros / 100  # all-zero weights tie, and argmax picks label 0 every time
    assert len(history["validation"]) == 6 and history["validation"][-1] > 0.9
    assert history["loss"][-1] < history["loss"][0]
    np.testing.assert_array_equal(params["W"], 0.0)  # the initial parameters are left alone


def test_accuracy_counts_tokens_and_ambiguous_words():
    sentences = D.make_sentences(20, seed=8)
    perfect = lambda params, tokens: D.true_tags(tokens) if tokens.ndim == 1 else np.stack(  # noqa: E731
        [D.true_tags(t) for t in tokens])
    assert T.accuracy(perfect, None, sentences) == (1.0, 1.0)
    distance, correct = T.ambiguous_hits(perfect, None, sentences)
    assert correct.all() and len(distance) == len(D.cue_distances(sentences))


# --- the order task ---------------------------------------------------------------------------------

def test_order_tags_follow_the_word_before():
    assert [D.TAGS[k] for k in D.order_tags(D.encode(["I", "saw", "a", "saw"]))] == ["PRON", "V", "DET", "N"]
    assert [D.TAGS[k] for k in D.order_tags(D.encode(["the", "fly", "she", "book"]))] == ["DET", "N", "PRON", "V"]


def test_order_sentences_hide_the_tags_from_the_set_of_words():
    sentences = D.make_order_sentences(300, seed=5)
    readings = []
    for tokens, tags in sentences:
        words = D.decode(tokens)
        n_ambiguous = int(D.is_ambiguous(tokens).sum())
        assert 4 <= len(tokens) <= 8 and n_ambiguous == len(tokens) // 3
        assert sum(w in D.DETERMINERS for w in words) == sum(w in D.PRONOUNS for w in words) == n_ambiguous
        np.testing.assert_array_equal(tags, D.order_tags(tokens))
        readings += [D.TAGS[t] for t in tags[D.is_ambiguous(tokens)]]
    assert 0.4 < readings.count("V") / len(readings) < 0.6
    # the same multiset of words occurs with both readings: sort each sentence, group, look at the tags
    by_set = {}
    for tokens, tags in D.make_order_sentences(1000, seed=6, min_len=4, max_len=4):
        key = tuple(sorted(tokens))
        by_set.setdefault(key, set()).add(tuple(sorted(tags)))
    assert sum(len(v) > 1 for v in by_set.values()) > 10


def test_set_ceiling_by_hand():
    tokens = D.encode(["I", "saw", "a", "saw", "dog", "the"])  # 2 ambiguous of 6 tokens
    assert D.set_ceiling([(tokens, D.order_tags(tokens))]) == pytest.approx((6 - 1) / 6)


def test_window_ceiling_band_holds_the_ceiling_and_narrows_with_more_sentences():
    small, large = D.make_sentences(50, seed=3), D.make_sentences(400, seed=3)
    lo_s, hi_s = D.window_ceiling_band(small, 2)
    lo_l, hi_l = D.window_ceiling_band(large, 2)
    assert lo_s < D.window_ceiling(small, 2) < hi_s and lo_l < D.window_ceiling(large, 2) < hi_l
    assert (lo_l + hi_l) / 2 == pytest.approx(D.window_ceiling(large, 2))  # symmetric about the ceiling
    assert hi_l - lo_l < hi_s - lo_s
    assert D.window_ceiling_band(large, 30) == (1.0, 1.0)


def enumerated_accuracies(sentences, half_width):
    """Every outcome of the consistent guesser, one per choice of cues (equally likely)."""
    n_tokens = sum(len(t) for t, _ in sentences)
    blind = np.array([np.sum(far > half_width) for far in D._cue_distances_each(sentences)])
    right = np.array(list(itertools.product((0, 1), repeat=len(sentences))))  # (2**n, n): blind words right or not
    return (n_tokens - blind.sum() + right @ blind) / n_tokens


def test_window_ceiling_band_by_enumerating_the_cues():
    one, two = D.encode(["yesterday", "the", "saw", "a", "dog", "saw"]), D.encode(["sold", "the", "dog", "saw"])
    tiny = [(t, D.true_tags(t)) for t in (one, two)]  # at half_width 1: 2 and 1 blind words of 10 tokens
    assert sorted(enumerated_accuracies(tiny, 1)) == pytest.approx([0.7, 0.8, 0.9, 1.0])
    assert D.window_ceiling_band(tiny, 1, coverage=0.5) == pytest.approx((0.8, 0.9))  # P(< 0.8) = 1/4 is allowed
    assert D.window_ceiling_band(tiny, 1, coverage=0.6) == pytest.approx((0.7, 1.0))
    for seed in (0, 1):
        sentences = D.make_sentences(9, seed=seed)
        outcomes = enumerated_accuracies(sentences, 2)
        for coverage in (0.3, 0.5, 0.8, 0.95):
            low, high = D.window_ceiling_band(sentences, 2, coverage=coverage)
            tail = (1 - coverage) / 2
            assert np.any(outcomes == low) and np.any(outcomes == high)
            assert np.mean(outcomes < low) <= tail and np.mean(outcomes > high) <= tail
            assert np.mean((outcomes >= low) & (outcomes <= high)) >= coverage
            assert np.mean(outcomes <= low) > tail and np.mean(outcomes >= high) > tail  # no narrower band does


def test_window_ceiling_band_is_wider_than_per_word_coins():
    sentences = D.make_sentences(300, seed=8)
    n_tokens = sum(len(t) for t, _ in sentences)
    n_blind = int(np.sum(D.cue_distances(sentences) > 2))
    below = itertools.accumulate(math.comb(n_blind, k) for k in range(n_blind + 1))  # right ~ Binomial(n_blind, 1/2)
    k = next(k for k, ways in enumerate(below) if 40 * ways > 2 ** n_blind)  # the same 95% rule, a coin per blind word
    per_word = ((n_tokens - n_blind + k) / n_tokens, (n_tokens - k) / n_tokens)
    low, high = D.window_ceiling_band(sentences, 2)
    assert low < per_word[0] < per_word[1] < high
    assert high - low > 2 * (per_word[1] - per_word[0])


# --- the claims of the chapter, on seeds the chapter does not use ---------------------------------------

CLAIM_SEEDS = (1001, 1002, 1003)  # the chapter shows seeds 0-9 and 85


def test_self_attention_beats_the_window_on_unseen_seeds():
    for seed in CLAIM_SEEDS:
        _, attention = T.train_tagger("attention", seed)
        assert attention["accuracy"][-1] >= 0.95, seed
    for seed in CLAIM_SEEDS[:2]:
        _, window = T.train_tagger("window", seed)
        assert window["accuracy"][-1] < 0.90, seed


def test_order_needs_positions_on_unseen_seeds():
    for seed in CLAIM_SEEDS[:2]:
        _, with_positions = T.train_tagger("attention+position", seed, task="order")
        assert with_positions["accuracy"][-1] >= 0.95, seed
    _, without = T.train_tagger("attention", CLAIM_SEEDS[0], task="order")
    assert without["accuracy"][-1] < 0.90


def test_train_tagger_history_and_its_validation_split():
    train_set, test_set = D.make_sentences(60, seed=11), D.make_sentences(20, seed=12)
    params, history = T.train_tagger("window", 0, train_set=train_set, test_set=test_set, epochs=2)
    assert len(history["loss"]) == 2 and len(history["validation"]) == 3 and len(history["accuracy"]) == 1
    assert history["accuracy"][-1] == T.accuracy(M.window_predict, params, test_set)[0]
    fit, val = T.split_validation(train_set, 0.2)
    assert len(fit) == 48 and len(val) == 12
    assert history["validation"][-1] == T.accuracy(M.window_predict, params, val)[0]
    positional, _ = T.train_tagger("attention+position", 0, task="order", epochs=1)
    assert positional["P"].shape == (16, 8)


@pytest.mark.parametrize("call, message", [
    (lambda: T.train_tagger("cnn", 0), "kind must be one of 'window', 'attention', 'attention\\+position'"),
    (lambda: T.train_tagger("window", 0, task="pos"), "task must be one of 'cue', 'order'"),
    (lambda: T.train_tagger("window", 0, learning_rate=0.1), "unknown settings \\['learning_rate'\\]"),
    (lambda: T.default_data("pos"), "task must be one of"),
    (lambda: T.split_validation(D.make_sentences(4, seed=0), 1.0), "validation_share must be in"),
    (lambda: T.train(M.window_loss_and_grads, M.init_window_model(0), [small_batch()], lr=0),
     "lr must be positive"),
    (lambda: T.train(M.window_loss_and_grads, M.init_window_model(0), []), "batches is empty"),
    (lambda: M.attention_predict(M.init_attention_model(0, n_positions=3), D.encode(["I", "saw", "a", "saw"])),
     "longer than the 3 positions"),
    (lambda: M.attention_weights(M.init_window_model(0), D.encode(["I", "saw"])), "missing \\['W_q', 'W_k', 'W_v'\\]"),
    (lambda: M.window_predict({**M.init_window_model(0), "P": np.zeros((8, 3))}, D.encode(["I", "saw"])),
     "missing \\[\\], unexpected \\['P'\\]"),
    (lambda: T.train_tagger("attention+position", 0, task="order", train_set=D.make_order_sentences(20, seed=0,
                            max_len=5), test_set=D.make_order_sentences(5, seed=1, min_len=7)),
     "a test sentence has [78] words, but the longest training sentence has 5"),
    (lambda: T.train_tagger("window", 0, train_set=[(np.arange(4), np.zeros(3, int))] * 10),
     "training sentence 0 has \\(4,\\) tokens but \\(3,\\) tags"),
    (lambda: D.order_tags(D.encode(["saw", "I"])), "must follow a determiner or a pronoun"),
    (lambda: D.order_tags(D.encode(["I", "saw", "yesterday"])), "no cue words"),
    (lambda: D.make_order_sentences(2, seed=0, min_len=2), "min_len must be an integer >= 3"),
    (lambda: D.window_ceiling_band(D.make_sentences(2, seed=0), 2, coverage=1.0), "coverage must be in"),
    (lambda: D.window_ceiling_band(D.make_sentences(2, seed=0), 2, coverage=0), "in \\(0, 1\\), got 0"),
    (lambda: D.window_ceiling_band(D.make_sentences(2, seed=0), -1), "half_width must be an integer >= 0"),
    (lambda: D.window_ceiling_band([], 2), "sentences is empty"),
    (lambda: M.attention_loss_and_grads(M.init_window_model(0), *small_batch()),
     "missing \\['W_q', 'W_k', 'W_v'\\], unexpected \\[\\]"),
    (lambda: M.window_loss_and_grads(M.init_window_model(0), np.zeros((2, 3), int), np.zeros((2, 4), int)),
     "shape \\(B, N\\), got \\(2, 3\\) and \\(2, 4\\)"),
    (lambda: B.attention_forward(np.zeros((4, 5)), np.eye(4), np.eye(4), np.eye(4)), "shape \\(B, d, N\\)"),
    (lambda: B.attention_forward(np.zeros((1, 4, 5)), np.eye(3), np.eye(4), np.eye(4)), "W_q has shape \\(3, 3\\)"),
    (lambda: B.cross_entropy(np.zeros((3, 2)), np.array([0, 3])), "tags must lie in 0..2"),
    (lambda: B.softmax_columns_backward(np.eye(2), np.eye(3)), "must be equal shapes"),
    (lambda: T.adam_step({"w": np.zeros(2)}, {"w": np.zeros(3)}, {}), "grads\\['w'\\] has shape \\(3,\\)"),
    (lambda: M.init_attention_model(0, d=0), "d must be an integer >= 1"),
    (lambda: T.gradient_check(M.window_loss_and_grads, M.init_window_model(0), *small_batch(), eps=0),
     "eps must be positive"),
])
def test_train_input_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()
