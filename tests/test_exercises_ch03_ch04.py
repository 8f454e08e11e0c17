"""The checkers of chapters 3 and 4: a reference solution passes, typical wrong answers fail with a hint."""

import numpy as np
import pytest

import attn
import attn.rows
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


def _b1_variant(scores=None, values=None):
    I, W_q, W_k, W_v = ch03.b1_problem()
    alpha = (W_k @ I).T @ (W_q @ I[:, 0])
    weights = attn.softmax(alpha) if scores is None else scores(alpha)
    return (W_v @ I if values is None else values(I)) @ weights


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda: np.array([3.0, -1.0]), "raw scores"),  # V @ alpha with alpha = (0, 1, 1)
        (lambda: _b1_variant(scores=lambda a: a), "raw scores"),
        (lambda: np.array([4 / 3, 0.0]), "plain average"),
        (lambda: _b1_variant(scores=lambda a: attn.softmax(a / np.sqrt(2))), r"sqrt\(d_k\) = sqrt\(2\)"),
        (lambda: [1.42, -0.27], r"Close: \[1.42, -0.27\] is right to 2 decimals.*within 0.001"),
        (lambda: [1.423, -0.26], "right to 2 decimals"),  # -0.26: one entry truncated, not rounded
        (lambda: np.array([1.0, 2.0]), r"^Steps: q\^1 = W_q a\^1.*within 0.001 of the exact value"),
        (lambda: [1.0, 2.0, 3.0], r"shape \(2,\)"),
        (lambda: "b1", "2 numbers"),
        (lambda: ..., "b1 should be 2 numbers, got Ellipsis"),  # the notebook's stub
    ],
)
def test_b1_wrong_answers(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch03.check_b1(wrong())


def test_b1_hints_never_repeat_not_yet():
    """The notebook prints "Not yet:" before the hint, so no hint starts with it again."""
    for wrong in ([1.42, -0.27], [1.0, 2.0], [3.0, -1.0], [4 / 3, 0.0]):
        with pytest.raises(AssertionError) as info:
            ch03.check_b1(wrong)
        assert not str(info.value).lower().startswith("not yet")


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

    def b_i_plain_loops(I, W_q, W_k, W_v, i):  # no attn at all: the softmax written out
        N = I.shape[1]
        q = W_q @ I[:, i]
        scores = [q @ (W_k @ I[:, j]) for j in range(N)]
        top = max(scores)
        e = [np.exp(s - top) for s in scores]
        return sum(e[j] / sum(e) * (W_v @ I[:, j]) for j in range(N))

    assert "Right" in ch03.check_output_column(b_i_plain_loops)

    def b_i_vector_per_query(I, W_q, W_k, W_v, i):  # numpy for query i alone, a loop for the weighted sum
        scores = (W_k @ I).T @ (W_q @ I[:, i])          # (N,): one query's scores, no (N, N) array
        w = np.exp(scores - scores.max())
        w = w / w.sum()
        return sum(w[j] * (W_v @ I[:, j]) for j in range(I.shape[1]))

    assert "Right" in ch03.check_output_column(b_i_vector_per_query)

    def b_i_no_loop(I, W_q, W_k, W_v, i):  # the steps for query i alone, each one numpy product: no loop needed
        return (W_v @ I) @ attn.softmax((W_k @ I).T @ (W_q @ I[:, i]))

    assert "Right" in ch03.check_output_column(b_i_no_loop)


def _column(weights):
    """A b_i that loops over the keys and weights the values by ``weights(scores, d_k)``."""
    def b_i(I, W_q, W_k, W_v, i):
        q = W_q @ I[:, i]
        scores = np.array([q @ (W_k @ I[:, j]) for j in range(I.shape[1])])
        return (W_v @ I) @ weights(scores, W_q.shape[0])
    return b_i


def _shifted(I, W_q, W_k, W_v, i):  # i taken as 1-based: the column before
    return b_i_reference(I, W_q, W_k, W_v, i - 1 if i > 0 else i)


def _transposed(I, W_q, W_k, W_v, i):  # scores q^j . k^i instead of q^i . k^j (row i of A, made alone)
    return (W_v @ I) @ attn.softmax((W_q @ I).T @ (W_k @ I[:, i]))


def _matrix_softmax(I, W_q, W_k, W_v, i):  # the whole matrix form, then column i
    A_prime = attn.softmax((W_k @ I).T @ (W_q @ I), axis=0)
    return (W_v @ I @ A_prime)[:, i]


def _softmax_columns(I, W_q, W_k, W_v, i):  # the whole matrix through attn.backprop, and a loop for show
    import attn.backprop
    _ = [j for j in range(I.shape[1])]
    A_prime = attn.backprop.softmax_columns((W_k @ I).T @ (W_q @ I))
    return (W_v @ I @ A_prime)[:, i]


def _exp_matrix(I, W_q, W_k, W_v, i):  # a whole-matrix softmax written with np.exp, and a loop for show
    _ = [j for j in range(I.shape[1])]
    A = (W_k @ I).T @ (W_q @ I)
    E = np.exp(A - A.max(axis=0))
    return (W_v @ I @ (E / E.sum(axis=0)))[:, i]


def _einsum_matrix(I, W_q, W_k, W_v, i):  # the scores of every query by np.einsum, then column i
    _ = [j for j in range(I.shape[1])]
    A = np.einsum("kj,ki->ji", W_k @ I, W_q @ I)
    return (W_v @ I) @ attn.softmax(A[:, i])


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda I, W_q, W_k, W_v, i: attn.self_attention(I, W_q, W_k, W_v)[0][:, i], "calls attn's self_attention"),
        (lambda I, W_q, W_k, W_v, i: attn.self_attention_loop(I, W_q, W_k, W_v)[0][:, i],
         "calls attn's self_attention_loop"),
        (_matrix_softmax, "calls attn's softmax on a matrix"),
        (_softmax_columns, "calls attn's softmax_columns on a matrix"),
        (_exp_matrix, r"computes an \(N, N\) = \(5, 5\) array from I"),
        (_einsum_matrix, r"computes an \(N, N\) = \(5, 5\) array from I"),
        (_column(lambda s, d_k: s), "raw scores"),  # forgot the softmax
        (_column(lambda s, d_k: attn.softmax(s / np.sqrt(d_k))), r"sqrt\(d_k\) = sqrt\(2\)"),
        (_transposed, "row i of A"),
        (_shifted, r"That is b\^1, not b\^2: i counts from 0"),
        (lambda I, W_q, W_k, W_v, i: (W_v @ I).mean(axis=1), "plain average"),
        (lambda I, W_q, W_k, W_v, i: 2 * b_i_reference(I, W_q, W_k, W_v, i), r"b\^1 is wrong.*expected"),
        (lambda I, W_q, W_k, W_v, i: I[:, i], "shape"),
        (lambda *args: 1 / 0, "raised ZeroDivisionError"),
        (lambda *args: None, "b_i returned None: end it with `return` and the vector b\\^i"),
        (np.zeros(3), "function itself"),
    ],
)
def test_output_column_wrong_functions_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch03.check_output_column(wrong)


def test_output_column_refuses_the_shortcut_however_imported():
    from attn import self_attention as sa

    def b_i(I, W_q, W_k, W_v, i):
        for _ in range(1):  # a loop, to show the loop alone does not pass
            pass
        return sa(I, W_q, W_k, W_v)[0][:, i]

    with pytest.raises(AssertionError, match="calls attn's self_attention"):
        ch03.check_output_column(b_i)


def _copied_matrix(I, W_q, W_k, W_v, i):  # the matrix form on a plain copy of I, which _Watched does not follow
    X = np.asarray(I)
    for _ in range(1):  # a loop, to show the loop alone does not pass
        pass
    A = (W_k @ X).T @ (W_q @ X)
    E = np.exp(A - A.max(axis=0))                     # a column softmax written out: no attn call to see
    return (W_v @ X @ (E / E.sum(axis=0)))[:, i]


def _copied_scores(I, W_q, W_k, W_v, i):  # every query's scores from a copy, then column i through a loop
    X = np.array(I.tolist())
    A = (W_k @ X).T @ (W_q @ X)
    return (W_v @ X) @ attn.softmax(np.array([A[j, i] for j in range(X.shape[1])]))


def _float32_scores(I, W_q, W_k, W_v, i):  # the same in float32, half the memory of float64
    X = np.asarray(I, dtype=np.float32)
    A = (W_k.astype(np.float32) @ X).T @ (W_q.astype(np.float32) @ X)
    return (W_v @ I) @ attn.softmax(np.array([float(A[j, i]) for j in range(X.shape[1])]))


@pytest.mark.parametrize("wrong", [_copied_matrix, _copied_scores, _float32_scores])
def test_output_column_refuses_the_matrix_form_on_a_copy(wrong):
    I, W_q, W_k, W_v = (np.random.default_rng(0).normal(size=s) for s in ((3, 5), (2, 3), (2, 3), (4, 3)))
    np.testing.assert_allclose(wrong(I, W_q, W_k, W_v, 2), attn.self_attention(I, W_q, W_k, W_v)[0][:, 2])  # right
    with pytest.raises(AssertionError, match=r"^On a sequence of N = 512 vectors, b_i held [0-9.]+ MB at once, more "
                                             r"than the 0.79 MB allowed \(an \(N, N\) array of 262,144 numbers takes "
                                             r"2.1 MB in float64\)"):
        ch03.check_output_column(wrong)


def test_output_column_memory_check_leaves_room_for_lists_per_position():
    def b_i_lists(I, W_q, W_k, W_v, i):  # a list per position for each of a, q, k, v and the weighted terms
        a = [I[:, j] for j in range(I.shape[1])]
        q = [W_q @ a_j for a_j in a]
        k = [W_k @ a_j for a_j in a]
        v = [W_v @ a_j for a_j in a]
        weights = attn.softmax(np.array([q[i] @ k_j for k_j in k]))
        terms = [w_j * v_j for w_j, v_j in zip(weights, v)]
        return sum(terms)

    assert "Right" in ch03.check_output_column(b_i_lists)
    d, d_k, d_v, N = ch03.MEMORY_CASE
    I, W_q, W_k, W_v = (np.random.default_rng(1).normal(size=s) for s in ((d, N), (d_k, d), (d_k, d), (d_v, d)))
    _, peak = ch03._peak_memory(b_i_lists, I, W_q, W_k, W_v, 0)
    _, matrix_peak = ch03._peak_memory(_copied_matrix, I, W_q, W_k, W_v, 0)
    limit = ch03.MEMORY_BYTES_PER_PAIR * N * N
    assert peak < limit / 2 < limit < matrix_peak   # room on both sides of the limit


def test_output_column_leaves_tracemalloc_as_it_found_it():
    import tracemalloc

    assert not tracemalloc.is_tracing()
    ch03.check_output_column(b_i_reference)
    assert not tracemalloc.is_tracing()
    tracemalloc.start()
    try:
        ch03.check_output_column(b_i_reference)
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "wrong, hint",
    [(1 / 256, "variance"), (16, "below 1"), (256, "below 1"), (0.5, "c\\*\\*2"), ("x", "one number"),
     (-1 / 16, "positive root"), (..., "scale should be one number, got Ellipsis")],
)
def test_score_scale_checker(wrong, hint):
    assert "Right" in ch03.check_score_scale(1 / np.sqrt(256))
    with pytest.raises(AssertionError, match=hint):
        ch03.check_score_scale(wrong)


def test_no_checker_shadows_the_library_check_scale():
    import attn._checks
    from attn.exercises import ch01, ch02, ch05, ch06, ch07, ch08, ch09, ch10, ch11

    library = {name for name in dir(attn._checks) if name.startswith("check_")}
    for module in (ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11):
        clash = library & {name for name in dir(module) if name.startswith("check_")
                           and getattr(module, name).__module__ == module.__name__}
        assert not clash, f"{module.__name__} defines {clash}, names of attn._checks"


# --- chapter 4 -----------------------------------------------------------------------------------

def test_matrix_form_reference_passes():
    assert "Right" in ch04.check_matrix_form(matrix_reference)

    def own_softmax(I, W_q, W_k, W_v):  # a column softmax written with numpy: no loop, no attn call
        A = (W_k @ I).T @ (W_q @ I)
        E = np.exp(A - A.max(axis=0))
        A_prime = E / E.sum(axis=0)
        return W_v @ I @ A_prime, A_prime

    assert "Right" in ch04.check_matrix_form(own_softmax)


def _matrix(weights, output=lambda V, A_prime: V @ A_prime):
    """An attention(I, W_q, W_k, W_v) with A_prime = weights(A, d_k) and O = output(V, A_prime)."""
    def attention(I, W_q, W_k, W_v):
        A_prime = weights((W_k @ I).T @ (W_q @ I), W_q.shape[0])
        return output(W_v @ I, A_prime), A_prime
    return attention


def _column_loop(I, W_q, W_k, W_v):  # one softmax call per query
    A = (W_k @ I).T @ (W_q @ I)
    A_prime = np.stack([attn.softmax(A[:, i]) for i in range(A.shape[1])], axis=1)
    return W_v @ I @ A_prime, A_prime


def _python_loop(I, W_q, W_k, W_v):  # one softmax call, but the scores in a Python loop
    N = I.shape[1]
    Q, K = W_q @ I, W_k @ I
    A = np.array([[K[:, j] @ Q[:, i] for i in range(N)] for j in range(N)])
    A_prime = attn.softmax(A, axis=0)
    return W_v @ I @ A_prime, A_prime


def _map_softmax(I, W_q, W_k, W_v):  # one softmax per column through map
    A = (W_k @ I).T @ (W_q @ I)
    A_prime = np.stack(list(map(lambda a: np.exp(a) / np.exp(a).sum(), A.T)), axis=1)
    return W_v @ I @ A_prime, A_prime


def _apply_along_axis(I, W_q, W_k, W_v):  # the same, through np.apply_along_axis
    A = (W_k @ I).T @ (W_q @ I)
    A_prime = np.apply_along_axis(lambda a: np.exp(a) / np.exp(a).sum(), 0, A)
    return W_v @ I @ A_prime, A_prime


def _vectorized(I, W_q, W_k, W_v):  # the scores one pair at a time through np.vectorize
    Q, K = W_q @ I, W_k @ I
    N = I.shape[1]
    score = np.vectorize(lambda j, i: K[:, j] @ Q[:, i])
    A_prime = attn.softmax(score(*np.indices((N, N))), axis=0)
    return W_v @ I @ A_prime, A_prime


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (attn.self_attention, "calls attn's self_attention"),
        (lambda *a: attn.self_attention(*a), "calls attn's self_attention"),
        (lambda I, *w: attn.multi_head_attention(I, *(W[None] for W in w), np.eye(w[2].shape[0])),
         "calls attn's multi_head_attention"),
        (_column_loop, "calls attn.softmax 5 times"),
        (_python_loop, "loops in Python"),
        (_map_softmax, "uses map"),
        (_apply_along_axis, "uses apply_along_axis"),
        (_vectorized, "uses vectorize"),
        (_matrix(lambda A, d_k: attn.softmax(A, axis=1)), "along the rows"),
        (_matrix(lambda A, d_k: attn.softmax(A, axis=0).T), "transposed"),
        (_matrix(lambda A, d_k: A), "raw scores"),
        (_matrix(lambda A, d_k: attn.softmax(A / np.sqrt(d_k), axis=0)), r"sqrt\(d_k\) = sqrt\(2\)"),
        (_matrix(lambda A, d_k: attn.softmax(A, axis=0), lambda V, P: V @ P.T), r"O = V @ A_prime.T"),
        (_matrix(lambda A, d_k: attn.softmax(A, axis=0), lambda V, P: 2 * V @ P), "O is not"),
        (_matrix(lambda A, d_k: attn.softmax(A, axis=0), lambda V, P: (V @ P).T), r"O should be \(d_v, N\)"),
        (_matrix(lambda A, d_k: attn.softmax(A, axis=0)[:, :1]), r"A_prime should be \(N, N\)"),
        (lambda *a: matrix_reference(*a)[0], "pair"),
        (lambda *a: 1 / 0, "raised"),
        (lambda *a: None, "attention returned None: end it with `return`$"),
    ],
)
def test_matrix_form_wrong_functions_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch04.check_matrix_form(wrong)


def _softmax_by_loop(A):  # a helper defined outside the answer: one column at a time
    return np.stack([np.exp(a) / np.exp(a).sum() for a in A.T], axis=1)


def _softmax_by_map(A):  # the same through map
    return np.stack(list(map(lambda a: np.exp(a) / np.exp(a).sum(), A.T)), axis=1)


def _softmax_vectorised(A):  # a helper with no loop: every column at once
    E = np.exp(A - A.max(axis=0))
    return E / E.sum(axis=0)


_along = np.apply_along_axis    # aliases made outside the answer, which the name check cannot see
_vectorize = np.vectorize


def _with_helper(softmax_columns):
    def attention(I, W_q, W_k, W_v):
        A_prime = softmax_columns((W_k @ I).T @ (W_q @ I))
        return W_v @ I @ A_prime, A_prime
    return attention


@pytest.mark.parametrize("helper, hint", [
    (_softmax_by_loop, "attention calls _softmax_by_loop \\(your own function\\), which loops in Python"),
    (_softmax_by_map, "attention calls _softmax_by_map \\(your own function\\), which uses map, a loop in disguise"),
    (lambda A: _along(lambda a: np.exp(a) / np.exp(a).sum(), 0, A), "attention reaches numpy's apply_along_axis"),
    (lambda A: np.exp(A) / _vectorize(lambda j: np.exp(A[:, j]).sum())(np.arange(A.shape[1])),
     "attention reaches numpy's vectorize"),
])
def test_matrix_form_refuses_loops_in_the_functions_it_calls(helper, hint):
    attention = _with_helper(helper)
    I, W_q, W_k, W_v = next(ch04._cases())
    np.testing.assert_allclose(attention(I, W_q, W_k, W_v)[1], attn.self_attention(I, W_q, W_k, W_v)[1])  # right
    assert not ch04.has_loop(attention) and not ch04._loop_helpers(attention)   # the answer's own code is clean
    with pytest.raises(AssertionError, match=f"^Your O and A_prime are right, but {hint}"):
        ch04.check_matrix_form(attention)


def test_matrix_form_accepts_a_helper_without_a_loop():
    assert "Right" in ch04.check_matrix_form(_with_helper(_softmax_vectorised))
    assert "Right" in ch04.check_matrix_form(_with_helper(lambda A: attn.softmax(A, axis=0)))   # attn's own is fine


def test_matrix_form_tells_the_readers_code_from_the_library():
    import json

    assert ch04._is_readers(_softmax_by_loop.__code__)
    assert ch04._is_readers(compile("x = 1", "<ipython-input-1>", "exec"))   # a notebook cell
    for library_code in (np.stack.__wrapped__.__code__ if hasattr(np.stack, "__wrapped__") else np.stack.__code__,
                         json.dumps.__code__, attn.softmax.__code__, ch04.check_matrix_form.__code__):
        assert not ch04._is_readers(library_code), library_code.co_filename


def test_parameter_count_checker():
    assert "Right" in ch04.check_parameter_count(19200, 19200)
    assert "Right" in ch04.check_parameter_count(19200.0, np.int64(19200))


@pytest.mark.parametrize(
    "answer, hint",
    [((19200, 20000), "differ"), ((128 * 128, 128 * 128), "attention matrix"), ((6400, 6400), "one matrix"),
     ((100, 100), "Count"), (("a", 1), "whole numbers"), (("19200", "19200"), "whole numbers"),
     ((19200.9, 19200.9), "19200.9 is not a whole number"), ((19200, 19200.5), "not a whole number"),
     ((True, True), "whole numbers"), ((3 * 80 * 81, 3 * 80 * 81), "bias"), ((25600, 25600), "output projection"),
     ((..., ...), "give two whole numbers, got Ellipsis and Ellipsis")],
)
def test_parameter_count_wrong_answers(answer, hint):
    with pytest.raises(AssertionError, match=hint):
        ch04.check_parameter_count(*answer)


@pytest.mark.parametrize(
    "wrong, hint",
    [
        (lambda X, W_q, W_k, W_v: attn.softmax((X @ W_q.T) @ (X @ W_k.T).T, axis=0) @ (X @ W_v.T), "down the columns"),
        (lambda X, W_q, W_k, W_v: attn.softmax((X @ W_k.T) @ (X @ W_q.T).T, axis=0) @ (X @ W_v.T), "keys in its rows"),
        (lambda X, W_q, W_k, W_v: ((X @ W_q.T) @ (X @ W_k.T).T) @ (X @ W_v.T), "raw scores"),
        (lambda X, W_q, W_k, W_v: attn.softmax((X @ W_q.T) @ (X @ W_k.T).T / np.sqrt(W_q.shape[0]), axis=1)
         @ (X @ W_v.T), r"sqrt\(d_k\)"),
        (lambda X, W_q, W_k, W_v: row_reference(X, W_q, W_k, W_v).T, "column-form shape"),
        (lambda X, W_q, W_k, W_v: 0 * row_reference(X, W_q, W_k, W_v), "Y is wrong"),
        (lambda X, W_q, W_k, W_v: attn.self_attention(X.T, W_q, W_k, W_v)[0].T, "calls attn's self_attention"),
        (lambda X, W_q, W_k, W_v: attn.rows.row_form_attention(X, W_q, W_k, W_v), "calls attn's row_form_attention"),
    ],
)
def test_row_form_wrong_answers(wrong, hint):
    assert "Right" in ch04.check_row_form(row_reference)
    with pytest.raises(AssertionError, match=hint):
        ch04.check_row_form(wrong)


def test_functions_returning_none_get_a_hint():
    with pytest.raises(AssertionError, match="returned None"):
        ch03.check_output_column(lambda *args: None)
    with pytest.raises(AssertionError, match="returned None"):
        ch04.check_matrix_form(lambda *args: None)
    with pytest.raises(AssertionError, match="returned None"):
        ch04.check_row_form(lambda *args: None)
