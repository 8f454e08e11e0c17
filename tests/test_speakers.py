"""Tests for attn.speakers, attn.pooling and attn.classifiers (chapter 11): the synthetic speakers, the pooling
laws, every hand-written gradient, padding invariance, and the bag of frames' chance level."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attn
from attn import backprop
from attn import classifiers as C
from attn import pooling as P
from attn import speakers as S
from attn import train as T


# --- the data ------------------------------------------------------------------------------------------

def test_pairings_are_disjoint_and_cover_every_sound():
    pairs = [set(S.pairing(s)) for s in range(S.MAX_SPEAKERS)]
    for s, p in enumerate(pairs):
        assert sorted(x for pair in p for x in pair) == list(range(S.N_SOUNDS))
        np.testing.assert_array_equal(S.partner_of(s)[S.partner_of(s)], np.arange(S.N_SOUNDS))  # an involution
        for t in range(s):
            assert not p & pairs[t]  # no two speakers join the same two sounds


def test_utterances_are_seeded_and_keep_their_promises():
    a = S.make_utterances(80, seed=3, layout=True)
    b = S.make_utterances(80, seed=3, layout=True)
    for (fa, sa, xa, ma), (fb, sb, xb, mb) in zip(a, b):
        np.testing.assert_array_equal(fa, fb)
        assert sa == sb
        at = np.flatnonzero(xa != S.SILENCE)
        assert sorted(xa[at]) == list(range(S.N_SOUNDS))  # every sound exactly once
        assert np.diff(at).min() >= 3  # sound frames 3 apart: no 3 consecutive frames hold two sounds
        windows = np.lib.stride_tricks.sliding_window_view(xa != S.SILENCE, 3)
        assert windows.sum(axis=1).max() == 1
        for x, y in S.pairing(sa):
            assert ma[xa == x] == ma[xa == y]  # a syllable's frames share a mark
        assert sorted(ma[at]) == [0, 0, 1, 1]
        assert np.all(ma[xa == S.SILENCE] == -1)
        assert fa.shape == (S.FRAME_SIZE, len(xa)) and 10 <= len(xa) <= 12
    speakers = [s for _, s, *_ in S.make_utterances(600, seed=4)]
    assert np.bincount(speakers, minlength=3).min() > 150  # all three speakers, about equally often


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), N=st.integers(10, 20), speaker=st.integers(0, 2))
def test_the_mean_frame_is_the_same_for_every_speaker(seed, N, speaker):
    frames, _, _ = S.make_utterance(speaker, N, np.random.default_rng(seed), noise=0.0)
    np.testing.assert_allclose(frames.mean(axis=1), np.r_[1, 1, 1, 1, N - 4, 2, 2] / N, atol=1e-15)


def test_markings_are_the_six_ways_to_mark_an_utterance():
    mark_rows = S.N_SOUNDS + 1 + np.arange(S.N_MARKS)
    for frames, speaker, sounds, marks in S.make_utterances(20, seed=6, layout=True):
        variants, who = S.markings(frames, sounds, marks)
        assert variants.shape == (6,) + frames.shape and who.tolist() == [0, 0, 1, 1, 2, 2]
        itself = [k for k, v in enumerate(variants) if np.array_equal(v, frames)]
        assert len(itself) == 1 and who[itself[0]] == speaker  # the utterance is one of them, with its speaker
        np.testing.assert_array_equal(np.delete(variants, mark_rows, axis=1),
                                      np.broadcast_to(np.delete(frames, mark_rows, axis=0),
                                                      (6, S.N_SOUNDS + 1, frames.shape[1])))  # only the marks move
        at = np.flatnonzero(sounds != S.SILENCE)
        noise = frames[mark_rows][:, at] - np.eye(S.N_MARKS)[marks[at]].T
        first_mark = np.zeros((6, S.N_SOUNDS))
        for k, (v, s) in enumerate(zip(variants, who)):
            onehot = v[mark_rows][:, at] - noise
            mark = onehot.argmax(axis=0)
            np.testing.assert_allclose(onehot, np.eye(S.N_MARKS)[mark].T, atol=1e-12)
            for x, y in S.pairing(s):  # speaker s's syllables share a mark ...
                assert mark[sounds[at] == x] == mark[sounds[at] == y]
            assert sorted(mark) == [0, 0, 1, 1]  # ... and the two syllables differ
            first_mark[k, sounds[at]] = mark == 0
        # every sound carries the first mark in exactly one of each speaker's two markings
        np.testing.assert_array_equal(first_mark[0::2] + first_mark[1::2], 1)
    with pytest.raises(ValueError, match="do not fit"):
        S.markings(frames[:, :-1], sounds, marks)


def test_pad_batch_and_batches():
    utterances = S.make_utterances(7, seed=5)
    I, real, speakers = S.pad_batch(utterances, length=15)
    assert I.shape == (7, S.FRAME_SIZE, 15) and real.sum() == sum(f.shape[1] for f, _ in utterances)
    assert np.all(I[~np.broadcast_to(real[:, None], I.shape)] == 0.0)
    assert [s for _, s in utterances] == speakers.tolist()
    got = S.batches(utterances, 3, seed=0)
    assert [b[1].size for b in got] == [3, 3, 1]
    assert sorted(s for b in got for s in b[1]) == sorted(speakers)


@pytest.mark.parametrize("call, message", [
    (lambda: S.make_utterances(0, seed=0), "n must be"),
    (lambda: S.make_utterances(5, seed=0, n_speakers=4), "at most 3"),
    (lambda: S.make_utterances(5, seed=0, min_len=6), "min_len must be"),
    (lambda: S.make_utterances(5, seed=0, noise=-1.0), "noise must be"),
    (lambda: S.make_utterance(0, 5, np.random.default_rng(0)), "cannot hold"),
    (lambda: S.pairing(3), "speaker must be in"),
    (lambda: S.pad_batch([]), "empty"),
    (lambda: S.pad_batch([(np.zeros((7, 9)), 0), (np.zeros((6, 9)), 1)]), "same frame size"),
    (lambda: S.pad_batch([(np.zeros((7, 9)), 0)], length=5), "length must be"),
    (lambda: S.check_frames(np.zeros((2, 7, 5)), np.ones((2, 4), bool)), r"shape \(B, N\) = \(2, 5\)"),
    (lambda: S.check_frames(np.zeros((2, 7, 5)), np.zeros((2, 5), bool)), "no real frame"),
])
def test_bad_input_is_a_clear_value_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- pooling laws --------------------------------------------------------------------------------------

padded = st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(1, 9), st.integers(0, 10_000)).map(
    lambda t: _padded(*t))


def _padded(B, f, N, seed):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(1, N + 1, size=B)
    real = np.arange(N)[None] < lengths[:, None]
    return rng.normal(size=(B, f, N)), real, lengths


@settings(max_examples=60, deadline=None)
@given(padded)
def test_masked_mean_is_the_mean_of_the_real_frames(case):
    X, real, lengths = case
    pooled = P.mean_pool(X, real)
    for b, n in enumerate(lengths):
        np.testing.assert_allclose(pooled[b], X[b, :, :n].mean(axis=1), rtol=1e-12, atol=1e-14)


@settings(max_examples=60, deadline=None)
@given(padded, st.integers(1, 6), st.integers(0, 1000))
def test_pooling_ignores_what_the_padding_holds_and_how_much_there_is(case, extra, seed):
    X, real, _ = case
    rng = np.random.default_rng(seed)
    noisy = np.where(real[:, None], X, rng.normal(size=X.shape) * 100)  # junk in the padding
    longer = np.concatenate([noisy, rng.normal(size=X.shape[:2] + (extra,))], axis=2)  # and more of it
    real_longer = np.concatenate([real, np.zeros((X.shape[0], extra), bool)], axis=1)
    np.testing.assert_allclose(P.mean_pool(longer, real_longer), P.mean_pool(X, real), rtol=1e-12, atol=1e-14)
    K = rng.normal(size=(X.shape[0], 3, X.shape[2]))
    K_longer = np.concatenate([np.where(real[:, None], K, 50.0), rng.normal(size=(X.shape[0], 3, extra)) * 50], axis=2)
    q = rng.normal(size=3)
    pooled, alpha, _ = P.attention_pool(X, K, q, real)
    pooled_l, alpha_l, _ = P.attention_pool(longer, K_longer, q, real_longer)
    np.testing.assert_allclose(pooled_l, pooled, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(alpha.sum(axis=1), 1.0)
    assert np.all(alpha_l[~real_longer] == 0.0)


def test_attention_pooling_is_one_query_of_self_attention():
    rng = np.random.default_rng(1)
    V, K, q = rng.normal(size=(1, 4, 6)), rng.normal(size=(1, 3, 6)), rng.normal(size=3)
    pooled, alpha, _ = P.attention_pool(V, K, q, np.ones((1, 6), bool), scale=0.5)
    np.testing.assert_allclose(alpha[0], attn.softmax(0.5 * K[0].T @ q), rtol=1e-12)
    np.testing.assert_allclose(pooled[0], V[0] @ alpha[0], rtol=1e-12)
    zero, _, _ = P.attention_pool(V, K, np.zeros(3), np.ones((1, 6), bool))
    np.testing.assert_allclose(zero, V.mean(axis=2), rtol=1e-12)  # q = 0 is mean pooling


def test_pooling_backward_by_finite_differences():
    rng = np.random.default_rng(2)
    X, real, _ = _padded(3, 2, 5, 7)
    K, q, d_pooled = rng.normal(size=(3, 4, 5)), rng.normal(size=4), rng.normal(size=(3, 2))

    def loss(X, K, q):
        return float(np.sum(P.attention_pool(X, K, q, real, scale=0.7)[0] * d_pooled))

    _, _, cache = P.attention_pool(X, K, q, real, scale=0.7)
    dX, dK, dq = P.attention_pool_backward(d_pooled, cache)
    for value, grad in ((X, dX), (K, dK), (q, dq)):
        numeric = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            saved = value[idx]
            value[idx] = saved + 1e-6
            up = loss(X, K, q)
            value[idx] = saved - 1e-6
            down = loss(X, K, q)
            value[idx] = saved
            numeric[idx] = (up - down) / 2e-6
        np.testing.assert_allclose(grad, numeric, atol=1e-8)
    dX_mean = P.mean_pool_backward(d_pooled, real)
    assert np.all(dX_mean[~np.broadcast_to(real[:, None], dX_mean.shape)] == 0.0)
    np.testing.assert_allclose(dX_mean.sum(axis=2), d_pooled)  # the gradient is shared out, nothing lost


@pytest.mark.parametrize("call, message", [
    (lambda: P.mean_pool(np.zeros((2, 3)), np.ones((2, 3), bool)), "must have 3 axes"),
    (lambda: P.mean_pool(np.zeros((2, 3, 4)), np.ones((2, 3), bool)), r"\(B, N\) = \(2, 4\)"),
    (lambda: P.mean_pool(np.zeros((2, 3, 4)), np.ones((2, 4), int)), "bool array"),
    (lambda: P.mean_pool(np.zeros((2, 3, 4)), np.array([[True] * 4, [False] * 4])), "no real column"),
    (lambda: P.attention_pool(np.zeros((2, 3, 4)), np.zeros((2, 5, 4)), np.zeros(3), np.ones((2, 4), bool)),
     "do not fit"),
    (lambda: P.mean_pool_backward(np.zeros((2, 3)), np.ones((3, 4), bool)), "both need B rows"),
])
def test_pooling_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- the classifiers -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def check_batch():
    return S.batches(S.make_utterances(3, seed=7), 3)[0]


@pytest.mark.parametrize("kind", C.KINDS)
def test_gradient_check_with_pooling_and_masking(kind, check_batch):
    (I, real), speakers = check_batch
    assert not real.all()  # the batch holds padding, so the masks are part of the check
    params = C.init_classifier(kind, 0, d_k=3, hidden=4, qk_init=1.0)
    assert T.gradient_check(C.classifier_loss_and_grads, params, (I, real), speakers) < 1e-7


def test_a_wrong_gradient_fails_the_check(check_batch):
    params = C.init_classifier("attention_pooling", 0, d_k=3, hidden=4, qk_init=1.0)

    def wrong(params, inputs, speakers):
        loss, grads = C.classifier_loss_and_grads(params, inputs, speakers)
        return loss, {**grads, "q_pool": 2 * grads["q_pool"]}

    assert T.gradient_check(wrong, params, *check_batch) > 0.1


@pytest.mark.parametrize("kind", C.KINDS)
def test_padding_changes_no_score(kind):
    params = C.init_classifier(kind, 3, qk_init=1.0)
    utterances = S.make_utterances(6, seed=8)
    alone = np.concatenate([C.speaker_scores(params, S.pad_batch([u])[:2]) for u in utterances], axis=1)
    for length in (None, 25):
        I, real, _ = S.pad_batch(utterances, length=length)
        np.testing.assert_allclose(C.speaker_scores(params, (I, real)), alone, rtol=1e-10, atol=1e-12)


def test_masked_attention_is_the_lecture_self_attention_per_utterance():
    utterances = S.make_utterances(4, seed=9)
    I, real, _ = S.pad_batch(utterances)
    rng = np.random.default_rng(0)
    W_q, W_k, W_v = (rng.normal(size=(3, S.FRAME_SIZE)) for _ in range(3))
    O, A_prime, _ = backprop.attention_forward(I, W_q, W_k, W_v, scale=0.5, is_real=real)
    for b, (frames, _) in enumerate(utterances):
        n = frames.shape[1]
        O_one, A_one = attn.self_attention(frames, W_q, W_k, W_v, scale=0.5)
        np.testing.assert_allclose(O[b, :, :n], O_one, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(A_prime[b, :n, :n], A_one, rtol=1e-10, atol=1e-12)
        assert np.all(A_prime[b, n:] == 0.0)


def _markings_named_right(params, utterances):
    """For every utterance, how many of its 6 markings the classifier gives to the speaker who marks it so."""
    right = []
    for frames, _, sounds, marks in utterances:
        variants, who = S.markings(frames, sounds, marks)
        right.append(int(np.sum(C.classifier_predict(params, (variants, np.ones((6, frames.shape[1]), bool))) == who)))
    return np.array(right)


def test_a_window_of_three_frames_names_at_most_four_of_the_six_markings():
    # No 3 consecutive frames hold two sounds, so a window model's score is a sum of one-sound votes, and such a sum
    # cannot be right on both markings of more than one speaker: at most 4 of 6, whatever the weights.
    train_set, test_set = S.make_utterances(600, seed=31), S.make_utterances(200, seed=32, layout=True)
    params, _ = C.train_classifier("window", 0, train_set=train_set, test_set=[u[:2] for u in test_set])
    assert _markings_named_right(params, test_set).max() <= 4
    # With sounds only 2 apart, the window centred on the silence between two sounds sees both: the bound is gone.
    train_set, test_set = (S.make_utterances(600, seed=31, gap=2, min_len=8),
                           S.make_utterances(200, seed=32, gap=2, min_len=8, layout=True))
    params, _ = C.train_classifier("window", 0, train_set=train_set, test_set=[u[:2] for u in test_set])
    assert _markings_named_right(params, test_set).max() > 4


@pytest.mark.parametrize("seed", [101, 202])
def test_bag_of_frames_stays_at_chance_on_fresh_data(seed):
    train_set = S.make_utterances(600, seed=seed)
    test_set = S.make_utterances(1000, seed=seed + 1)
    _, history = C.train_classifier("bag", seed, train_set=train_set, test_set=test_set)
    assert history["n_classes"] == 3
    assert abs(history["test_accuracy"] - 1 / 3) <= 0.05


@pytest.mark.parametrize("seed", [101, 202])
def test_self_attention_with_mean_pooling_solves_fresh_data(seed):
    # Utterances the chapter never draws (its data seeds are classifiers.DATA's), trained with the chapter's settings.
    assert seed not in (C.DATA["train"][1], C.DATA["test"][1])
    train_set = S.make_utterances(600, seed=seed)
    test_set = S.make_utterances(1000, seed=seed + 1)
    _, history = C.train_classifier("attention", seed, train_set=train_set, test_set=test_set)
    assert history["test_accuracy"] >= 0.90


def test_train_classifier_history_and_reexport():
    assert T.train_classifier is C.train_classifier
    small_train, small_test = S.make_utterances(60, seed=1), S.make_utterances(30, seed=2)
    params, history = T.train_classifier("window", 0, train_set=small_train, test_set=small_test, epochs=2)
    assert isinstance(history["test_accuracy"], float) and 0.0 <= history["test_accuracy"] <= 1.0
    assert len(history["validation_accuracy"]) == 2 and history["n_classes"] == 3
    assert set(params) == set(C.KEYS["window"])


def test_self_attention_learns_the_speakers():
    _, history = C.train_classifier("attention", 0)
    assert history["test_accuracy"] >= 0.95


@pytest.mark.parametrize("call, message", [
    (lambda: C.train_classifier("rnn", 0), "kind must be one of"),
    (lambda: C.train_classifier("bag", 0, hidden=3), "unknown settings"),
    (lambda: C.init_classifier("window", 0, half_width=-1), "half_width must be"),
    (lambda: C.kind_of({"W": 0}), "no classifier"),
    (lambda: C.attention_of(C.init_classifier("bag", 0), np.zeros((7, 8))), "attention classifier"),
    (lambda: C.classifier_loss_and_grads(C.init_classifier("bag", 0), (np.zeros((2, 7, 8)), np.ones((2, 8), bool)),
                                         np.array([0, 3])), "integer ids in 0..2"),
])
def test_classifier_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
