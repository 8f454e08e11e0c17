"""The checkers of chapters 3 and 4: a reference solution passes, typical wrong answers fail with a hint."""

import numpy as np
import pytest

import attn
from attn.exercises import ch03, ch04


# --- reference solutions (the same ones the chapters fold away) --------------------------------

def b1_reference():
    I, W_q, W_k, W_v = ch03.b1_problem()
    q1 = W_q @ I[:, 0]
    alpha = np.array([q1 @ (W_k @ I[:, i]) for i in range(3)])
    weights = np.exp(alpha) / np.exp(alpha).sum()
    return sum(weights[i] * (W_v @ I[:, i]) for i in range(3))


def b_i_reference(I, W_q, W_k, W_v, i):
    q = W_q @ I[:, i]
    alpha = np.array([q @ (W_k @ I[:, j]) for j in range(I.shape[1])])
    weights = attn.softmax(alpha)
    return sum(weights[j] * (W_v @ I[:, j]) for j in range(I.shape[1]))


def matrix_reference(I, W_q, W_k, W_v):
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = attn.softmax(K.T @ Q, axis=0)
    return V @ A_prime, A_prime


def row_reference(X, W_q, W_k, W_v):
    Q_r, K_r, V_r = X @ W_q.T, X @ W_k.T, X @ W_v.T
    return attn.softmax(Q_r @ K_r.T, axis=1) @ V_r


# --- chapter 3 -----------------------------------------------------------------------------------

def test_b1_by_hand_value():
    e = np.e
    expected = np.array([(1 + 3 * e) / (1 + 2 * e), (1 - e) / (1 + 2 * e)])  # worked out on paper
    np.testing.assert_allclose(b1_reference(), expected, rtol=1e-12)
    assert "Right" in ch03.check_b1(expected)
    assert "Right" in ch03.check_b1(np.round(expected, 4))


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda: np.array([3.0, -1.0]), "raw scores"),  # V @ alpha with alpha = (0, 1, 1)
        (lambda: np.array([4 / 3, 0.0]), "plain average"),
        (lambda: np.array([1.0, 2.0]), "Not yet"),
        (lambda: [1.0, 2.0, 3.0], r"shape \(2,\)"),
        (lambda: "b1", "2 numbers"),
    ],
)
def test_b1_wrong_answers(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch03.check_b1(wrong())


def test_b1_swapped_roles_and_summed_inputs_get_hints():
    I, W_q, W_k, W_v = ch03.b1_problem()
    swapped = W_v @ I @ attn.softmax((W_q @ I).T @ (W_k @ I[:, 0]))
    with pytest.raises(AssertionError, match="swapped"):
        ch03.check_b1(swapped)
    summed = I @ attn.softmax((W_k @ I).T @ (W_q @ I[:, 0]))
    with pytest.raises(AssertionError, match="values"):
        ch03.check_b1(summed)


def test_output_column_reference_passes():
    assert "Right" in ch03.check_output_column(b_i_reference)
    assert "Right" in ch03.check_output_column(lambda I, W_q, W_k, W_v, i: attn.self_attention_loop(I, W_q, W_k, W_v)[0][:, i])


def test_output_column_wrong_functions_fail():
    def transposed(I, W_q, W_k, W_v, i):  # scores q^j . k^i instead of q^i . k^j
        A = (W_k @ I).T @ (W_q @ I)
        return (W_v @ I) @ attn.softmax(A[i, :])

    with pytest.raises(AssertionError, match="row i of A"):
        ch03.check_output_column(transposed)
    with pytest.raises(AssertionError, match="wrong"):
        ch03.check_output_column(lambda I, W_q, W_k, W_v, i: (W_v @ I).mean(axis=1))
    with pytest.raises(AssertionError, match="shape"):
        ch03.check_output_column(lambda I, W_q, W_k, W_v, i: I[:, i])
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        ch03.check_output_column(lambda *args: 1 / 0)
    with pytest.raises(AssertionError, match="function itself"):
        ch03.check_output_column(np.zeros(3))


def test_scale_checker():
    assert "Right" in ch03.check_scale(1 / np.sqrt(256))
    for wrong, hint in ((1 / 256, "variance"), (16, "below 1"), (0.5, "c\\*\\*2"), ("x", "one number")):
        with pytest.raises(AssertionError, match=hint):
            ch03.check_scale(wrong)


# --- chapter 4 -----------------------------------------------------------------------------------

def test_matrix_form_reference_passes():
    assert "Right" in ch04.check_matrix_form(matrix_reference)
    assert "Right" in ch04.check_matrix_form(attn.self_attention)


def test_matrix_form_wrong_functions_fail():
    def rows_softmax(I, W_q, W_k, W_v):
        A_prime = attn.softmax((W_k @ I).T @ (W_q @ I), axis=1)
        return (W_v @ I) @ A_prime, A_prime

    def transposed(I, W_q, W_k, W_v):
        O, A_prime = attn.self_attention(I, W_q, W_k, W_v)
        return O, A_prime.T

    def bad_output(I, W_q, W_k, W_v):
        O, A_prime = attn.self_attention(I, W_q, W_k, W_v)
        return 2 * O, A_prime

    def output_as_rows(I, W_q, W_k, W_v):
        O, A_prime = attn.self_attention(I, W_q, W_k, W_v)
        return O.T, A_prime

    for func, hint in ((rows_softmax, "along the rows"), (transposed, "transposed"), (bad_output, "O is not"),
                       (output_as_rows, r"O should be \(d_v, N\)"),
                       (lambda *a: attn.self_attention(*a)[0], "pair"), (lambda *a: 1 / 0, "raised")):
        with pytest.raises(AssertionError, match=hint):
            ch04.check_matrix_form(func)


def test_parameter_count_checker():
    assert "Right" in ch04.check_parameter_count(19200, 19200)
    for answer, hint in (((19200, 20000), "differ"), ((128 * 128, 128 * 128), "attention matrix"),
                         ((6400, 6400), "one matrix"), ((100, 100), "Count"), (("a", 1), "whole numbers")):
        with pytest.raises(AssertionError, match=hint):
            ch04.check_parameter_count(*answer)


def test_row_form_checker():
    assert "Right" in ch04.check_row_form(row_reference)

    def columns_softmax(X, W_q, W_k, W_v):
        return attn.softmax((X @ W_q.T) @ (X @ W_k.T).T, axis=0) @ (X @ W_v.T)

    with pytest.raises(AssertionError, match="down the columns"):
        ch04.check_row_form(columns_softmax)
    with pytest.raises(AssertionError, match="column-form shape"):
        ch04.check_row_form(lambda X, W_q, W_k, W_v: row_reference(X, W_q, W_k, W_v).T)
    with pytest.raises(AssertionError, match="Y is wrong"):
        ch04.check_row_form(lambda X, W_q, W_k, W_v: 0 * row_reference(X, W_q, W_k, W_v))


def test_functions_returning_none_get_a_hint():
    with pytest.raises(AssertionError, match="returned None"):
        ch03.check_output_column(lambda *args: None)
    with pytest.raises(AssertionError, match="returned None"):
        ch04.check_matrix_form(lambda *args: None)
    with pytest.raises(AssertionError, match="returned None"):
        ch04.check_row_form(lambda *args: None)
