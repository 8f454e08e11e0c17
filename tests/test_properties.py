"""Laws of attention, checked on hypothesis-chosen shapes and values."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import attn

settings.register_profile("book", max_examples=60, deadline=None)
settings.load_profile("book")


@st.composite
def attention_case(draw, max_n=7):
    """Random (I, W_q, W_k, W_v, scale) of consistent shapes, values in a moderate range."""
    d = draw(st.integers(1, 5))
    d_k = draw(st.integers(1, 4))
    d_v = draw(st.integers(1, 4))
    N = draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2**32 - 1))
    r = np.random.default_rng(seed)
    scale = draw(st.sampled_from([1.0, 1 / np.sqrt(d_k), 0.1, 3.0]))
    size = draw(st.sampled_from([0.1, 1.0, 5.0]))
    return (size * r.normal(size=(d, N)), r.normal(size=(d_k, d)), r.normal(size=(d_k, d)),
            r.normal(size=(d_v, d)), scale)


@given(attention_case())
def test_columns_of_A_prime_sum_to_one(case):
    *args, scale = case
    _, A_prime = attn.self_attention(*args, scale=scale)
    assert np.all(A_prime >= 0)
    np.testing.assert_allclose(A_prime.sum(axis=0), 1.0, rtol=1e-12)


@given(attention_case(), st.randoms(use_true_random=False))
def test_permuting_inputs_permutes_outputs(case, random):
    I, W_q, W_k, W_v, scale = case
    perm = list(range(I.shape[1]))
    random.shuffle(perm)
    O, A_prime = attn.self_attention(I, W_q, W_k, W_v, scale=scale)
    O_p, A_p = attn.self_attention(I[:, perm], W_q, W_k, W_v, scale=scale)
    np.testing.assert_allclose(O_p, O[:, perm], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(A_p, A_prime[np.ix_(perm, perm)], rtol=1e-9, atol=1e-12)


@given(attention_case())
def test_loop_form_equals_matrix_form(case):
    *args, scale = case
    O_loop, A_loop = attn.self_attention_loop(*args, scale=scale)
    O, A_prime = attn.self_attention(*args, scale=scale)
    np.testing.assert_allclose(O_loop, O, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(A_loop, A_prime, rtol=1e-10, atol=1e-12)


@given(attention_case())
def test_one_head_equals_self_attention(case):
    I, W_q, W_k, W_v, scale = case
    O1, A1 = attn.self_attention(I, W_q, W_k, W_v, scale=scale)
    O, A_primes = attn.multi_head_attention(I, W_q[None], W_k[None], W_v[None], np.eye(W_v.shape[0]), scale=scale)
    np.testing.assert_allclose(O, O1, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(A_primes[0], A1, rtol=1e-13, atol=1e-14)


@given(
    st.integers(1, 6), st.integers(1, 6), st.integers(0, 1),
    st.floats(-1e6, 1e6), st.integers(0, 2**32 - 1), st.sampled_from([1.0, 100.0, 1e5]),
)
def test_softmax_shift_invariant_and_finite(rows, cols, axis, shift, seed, size):
    x = size * np.random.default_rng(seed).normal(size=(rows, cols))
    p = attn.softmax(x, axis=axis)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-12)
    np.testing.assert_allclose(attn.softmax(x + shift, axis=axis), p, rtol=1e-6, atol=1e-12)
