"""Laws of attention, checked on hypothesis-chosen shapes and values."""

import numpy as np
from conftest import attention_case, seeds
from hypothesis import given
from hypothesis import strategies as st

import attn


@given(attention_case())
def test_columns_of_A_prime_sum_to_one(case):
    *args, scale = case
    _, A_prime = attn.self_attention(*args, scale=scale)
    assert np.all(A_prime >= 0)
    np.testing.assert_allclose(A_prime.sum(axis=0), 1.0, rtol=1e-12)


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
    st.floats(-1e6, 1e6), seeds, st.sampled_from([1.0, 100.0, 1e5]),
)
def test_softmax_shift_invariant_and_finite(rows, cols, axis, shift, seed, size):
    x = size * np.random.default_rng(seed).normal(size=(rows, cols))
    p = attn.softmax(x, axis=axis)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=1e-12)
    np.testing.assert_allclose(attn.softmax(x + shift, axis=axis), p, rtol=1e-6, atol=1e-12)
