"""attn.rows: the row convention equals the lecture's column form, transposed."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import attn
from attn import rows


def case(d=3, d_k=2, d_v=4, N=5, seed=0):
    r = np.random.default_rng(seed)
    return r.normal(size=(d, N)), r.normal(size=(d_k, d)), r.normal(size=(d_k, d)), r.normal(size=(d_v, d))


def test_by_hand():
    # X = identity rows, identity weights: S = X X^T = identity, so P has e/(e+1) on the diagonal.
    Y, P = rows.row_form_attention(np.eye(2), np.eye(2), np.eye(2), np.eye(2))
    e = np.e
    np.testing.assert_allclose(P, [[e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]], rtol=1e-15)
    np.testing.assert_allclose(Y, P, rtol=1e-15)


def test_rows_sum_to_one_and_orientation():
    I, W_q, W_k, W_v = case()
    Y, P = rows.row_form_attention(I.T, W_q, W_k, W_v)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    # P[i, j] is query i's weight on key j: row 1 weights the values into b^2.
    V_r = I.T @ W_v.T
    np.testing.assert_allclose(Y[1], P[1] @ V_r, rtol=1e-12)


@given(st.integers(1, 5), st.integers(1, 4), st.integers(1, 4), st.integers(1, 7), st.integers(0, 2**32 - 1),
       st.sampled_from([1.0, 0.5, 3.0]))
def test_equals_column_form_transposed(d, d_k, d_v, N, seed, scale):
    I, W_q, W_k, W_v = case(d, d_k, d_v, N, seed)
    Y, P = rows.row_form_attention(I.T, W_q, W_k, W_v, scale=scale)
    O, A_prime = attn.self_attention(I, W_q, W_k, W_v, scale=scale)
    np.testing.assert_allclose(Y, O.T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(P, A_prime.T, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda X, q, k, v: (X[None], q, k, v), r"X must have 2 axes, got shape \(1, 5, 3\)"),
        (lambda X, q, k, v: (X[:0], q, k, v), r"X has shape \(0, 3\)"),
        (lambda X, q, k, v: (X[:, :2], q, k, v), r"W_q has shape \(2, 3\) but X has shape \(5, 2\)"),
        (lambda X, q, k, v: (X, q, k, v[:, :1]), r"W_v has shape \(4, 1\) but X has shape \(5, 3\)"),
        (lambda X, q, k, v: (X, q, np.vstack([k, k]), v), r"W_q has shape \(2, 3\) and W_k has shape \(4, 3\)"),
        (lambda X, q, k, v: (X * np.nan, q, k, v), "X must be finite"),
    ],
)
def test_rejects_bad_input(change, message):
    I, W_q, W_k, W_v = case()
    with pytest.raises(ValueError, match=message):
        rows.row_form_attention(*change(I.T, W_q, W_k, W_v))


def test_rejects_bad_scale():
    I, W_q, W_k, W_v = case()
    with pytest.raises(ValueError, match="scale"):
        rows.row_form_attention(I.T, W_q, W_k, W_v, scale=np.inf)


def test_parameter_count():
    assert rows.parameter_count(4, 2, 3) == 2 * 2 * 4 + 3 * 4
    assert rows.parameter_count(80, 80, 80) == 3 * 6400
    I, W_q, W_k, W_v = case(d=3, d_k=2, d_v=4)
    assert rows.parameter_count(3, 2, 4) == W_q.size + W_k.size + W_v.size
    for bad in (0, -1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="d must be an integer"):
            rows.parameter_count(bad, 2, 3)
