"""attn.positional: the sinusoidal table, its shift rotation, learned tables, relative biases."""

import numpy as np
import pytest
from conftest import attention_case
from hypothesis import given
from hypothesis import strategies as st

import attn
from attn import positional


# --- sinusoidal ---------------------------------------------------------------------------------

def test_sinusoidal_small_table_by_hand():
    E = positional.sinusoidal(4, 3)
    p = np.arange(3)
    expected = np.array([np.sin(p), np.cos(p), np.sin(p / 100.0), np.cos(p / 100.0)])
    np.testing.assert_allclose(E, expected, rtol=0, atol=1e-15)


def test_sinusoidal_formula_entry_by_entry():
    d, N = 8, 6
    E = positional.sinusoidal(d, N)
    assert E.shape == (d, N)
    for p in range(N):
        for m in range(d // 2):
            angle = p / 10000 ** (2 * m / d)
            assert E[2 * m, p] == pytest.approx(np.sin(angle), abs=1e-15)
            assert E[2 * m + 1, p] == pytest.approx(np.cos(angle), abs=1e-15)


def test_first_position_is_zeros_and_ones():
    E = positional.sinusoidal(6, 1)
    np.testing.assert_array_equal(E[:, 0], [0.0, 1.0, 0.0, 1.0, 0.0, 1.0])


def test_sinusoidal_prefix_does_not_depend_on_N():
    np.testing.assert_array_equal(positional.sinusoidal(10, 5), positional.sinusoidal(10, 50)[:, :5])


def test_every_column_has_norm_sqrt_d_over_2():
    E = positional.sinusoidal(16, 40)
    np.testing.assert_allclose(np.linalg.norm(E, axis=0), np.sqrt(8.0), rtol=1e-14)


def test_columns_are_distinct():
    E = positional.sinusoidal(8, 200)
    G = E.T @ E
    off_diagonal = G[~np.eye(200, dtype=bool)]
    assert off_diagonal.max() < 4.0 - 1e-6  # e^i . e^j < |e|^2 = d/2 whenever i != j


def test_frequencies_run_from_one_down():
    omega = positional.frequencies(8)
    np.testing.assert_allclose(omega, [1.0, 10000 ** -0.25, 10000 ** -0.5, 10000 ** -0.75], rtol=1e-15)


@pytest.mark.parametrize("d", [0, -2, 3, 7, 2.0, "4", True, None])
def test_sinusoidal_rejects_bad_d(d):
    with pytest.raises(ValueError, match=r"d must be an even integer > 0.*got " + repr(d).replace("(", r"\(")):
        positional.sinusoidal(d, 3)


@pytest.mark.parametrize("N", [0, -1, 1.5, "3", None])
def test_sinusoidal_rejects_bad_N(N):
    with pytest.raises(ValueError, match=r"N must be an integer >= 1, got " + repr(N)):
        positional.sinusoidal(4, N)


def test_sinusoidal_accepts_numpy_integers():
    np.testing.assert_array_equal(positional.sinusoidal(np.int64(4), np.int32(3)), positional.sinusoidal(4, 3))


# --- shift_matrix -------------------------------------------------------------------------------

def test_shift_matrix_moves_every_column_k_positions():
    d, N = 10, 30
    E = positional.sinusoidal(d, N)
    for k in (1, 2, 7):
        np.testing.assert_allclose(positional.shift_matrix(d, k) @ E[:, : N - k], E[:, k:], atol=1e-12)
    np.testing.assert_allclose(positional.shift_matrix(d, -3) @ E[:, 3:], E[:, :-3], atol=1e-12)


def test_shift_matrix_small_case_by_hand():
    c, s = np.cos(1.0), np.sin(1.0)
    c2, s2 = np.cos(0.01), np.sin(0.01)  # d = 4: w = (1, 1/100)
    expected = np.array([[c, s, 0, 0], [-s, c, 0, 0], [0, 0, c2, s2], [0, 0, -s2, c2]])
    np.testing.assert_allclose(positional.shift_matrix(4, 1), expected, rtol=0, atol=1e-15)


def test_shift_zero_is_identity_and_shifts_compose():
    np.testing.assert_allclose(positional.shift_matrix(8, 0), np.eye(8), atol=0)
    R2, R3, R5 = (positional.shift_matrix(8, k) for k in (2, 3, 5))
    np.testing.assert_allclose(R2 @ R3, R5, atol=1e-12)
    np.testing.assert_allclose(R3.T, positional.shift_matrix(8, -3), atol=1e-15)
    np.testing.assert_allclose(R3.T @ R3, np.eye(8), atol=1e-12)


@pytest.mark.parametrize("k", [1.0, 0.5, "1", None, True])
def test_shift_matrix_rejects_non_integer_k(k):
    with pytest.raises(ValueError, match=r"k must be an integer number of positions, got " + repr(k)):
        positional.shift_matrix(4, k)


def test_shift_matrix_rejects_odd_d():
    with pytest.raises(ValueError, match="d must be an even integer > 0.*got 5"):
        positional.shift_matrix(5, 1)


# --- learned_table and add_positions ------------------------------------------------------------

def test_learned_table_shape_scale_and_seed():
    E = positional.learned_table(16, 500, seed=3)
    assert E.shape == (16, 500)
    assert 0.018 < E.std() < 0.022
    np.testing.assert_array_equal(E, positional.learned_table(16, 500, seed=3))
    assert not np.array_equal(E, positional.learned_table(16, 500, seed=4))
    assert positional.learned_table(2, 3, std=1.0).std() > 0.1


@pytest.mark.parametrize("kwargs, message", [
    ({"d": 0, "n_positions": 3}, "d must be an integer >= 1, got 0"),
    ({"d": 4, "n_positions": 0}, "n_positions must be an integer >= 1, got 0"),
    ({"d": 4, "n_positions": 3, "std": 0.0}, "std must be a positive number, got 0.0"),
    ({"d": 4, "n_positions": 3, "std": "big"}, "std must be a positive number, got 'big'"),
    ({"d": 4, "n_positions": 3, "std": np.inf}, "std must be a positive number, got inf"),
])
def test_learned_table_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        positional.learned_table(**kwargs)


def test_add_positions_adds_the_first_N_columns():
    I = np.arange(6.0).reshape(2, 3)
    E = np.array([[10.0, 20.0, 30.0, 40.0], [1.0, 2.0, 3.0, 4.0]])
    np.testing.assert_array_equal(positional.add_positions(I, E), [[10.0, 21.0, 32.0], [4.0, 6.0, 8.0]])


def test_add_positions_refuses_positions_past_the_table():
    E = positional.learned_table(4, 8)
    positional.add_positions(np.zeros((4, 8)), E)  # 8 positions: fine
    with pytest.raises(ValueError, match=r"E has shape \(4, 8\): it encodes positions 1 to 8 only.*needs positions up to 9"):
        positional.add_positions(np.zeros((4, 9)), E)


def test_add_positions_rejects_mismatched_sizes():
    with pytest.raises(ValueError, match=r"E has shape \(6, 5\) but I has shape \(4, 3\)"):
        positional.add_positions(np.zeros((4, 3)), positional.sinusoidal(6, 5))
    with pytest.raises(ValueError, match="I must have 2 axes"):
        positional.add_positions(np.zeros(4), positional.sinusoidal(4, 5))
    with pytest.raises(ValueError, match="E must be finite"):
        positional.add_positions(np.zeros((2, 1)), [[np.nan], [0.0]])


# --- relative positions -------------------------------------------------------------------------

def test_relative_bias_by_hand():
    w = [-2.0, -1.0, 0.0, 1.0, 2.0]  # K = 2: offsets -2 .. 2
    B = positional.relative_bias(w, 4)
    expected = np.array([[0.0, -1.0, -2.0, -2.0],
                         [1.0, 0.0, -1.0, -2.0],
                         [2.0, 1.0, 0.0, -1.0],
                         [2.0, 2.0, 1.0, 0.0]])  # B[j, i] = clip(j - i, -2, 2)
    np.testing.assert_array_equal(B, expected)


def test_relative_bias_works_for_any_length():
    w = np.array([0.5, 3.0, 0.0])
    for N in (1, 2, 50, 300):
        B = positional.relative_bias(w, N)
        assert B.shape == (N, N)
        assert np.all(np.diag(B) == 3.0)
        np.testing.assert_array_equal(B[np.triu_indices(N, 1)], 0.5)  # j < i: earlier keys
        np.testing.assert_array_equal(B[np.tril_indices(N, -1)], 0.0)


def test_relative_bias_rejects_even_length_and_bad_N():
    with pytest.raises(ValueError, match=r"beta has shape \(4,\): it needs an odd length 2r \+ 1"):
        positional.relative_bias(np.zeros(4), 3)
    with pytest.raises(ValueError, match="N must be an integer >= 1, got 0"):
        positional.relative_bias(np.zeros(3), 0)
    with pytest.raises(ValueError, match="beta must have 1 axes"):
        positional.relative_bias(np.zeros((3, 1)), 3)


def test_relative_attention_with_zero_bias_is_self_attention():
    r = np.random.default_rng(5)
    I, W_q, W_k, W_v = r.normal(size=(3, 6)), r.normal(size=(2, 3)), r.normal(size=(2, 3)), r.normal(size=(4, 3))
    O, A_prime = positional.relative_self_attention(I, W_q, W_k, W_v, np.zeros(5), scale=0.5)
    O_ref, A_ref = attn.self_attention(I, W_q, W_k, W_v, scale=0.5)
    np.testing.assert_allclose(O, O_ref, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(A_prime, A_ref, rtol=1e-13, atol=1e-13)


def test_relative_attention_adds_the_bias_to_the_scores():
    r = np.random.default_rng(6)
    I, W_q, W_k, W_v = r.normal(size=(3, 5)), r.normal(size=(2, 3)), r.normal(size=(2, 3)), r.normal(size=(2, 3))
    w = r.normal(size=7)
    O, A_prime = positional.relative_self_attention(I, W_q, W_k, W_v, w)
    A = (W_k @ I).T @ (W_q @ I) + positional.relative_bias(w, 5)
    np.testing.assert_allclose(A_prime, attn.softmax(A, axis=0), rtol=1e-13)
    np.testing.assert_allclose(O, W_v @ I @ attn.softmax(A, axis=0), rtol=1e-12)


def test_relative_attention_can_look_at_the_previous_word_at_any_length():
    w = np.array([0.0, 20.0, 0.0, 0.0, 0.0])  # offset -1 gets a large bonus
    for N in (2, 9, 200):
        I = np.random.default_rng(N).normal(size=(3, N))
        zeros = np.zeros((2, 3))
        _, A_prime = positional.relative_self_attention(I, zeros, zeros, np.eye(3), w)
        assert np.all(A_prime[np.arange(N - 1), np.arange(1, N)] > 0.99)


def test_relative_attention_rejects_bad_shapes():
    with pytest.raises(ValueError, match="W_k has shape"):
        positional.relative_self_attention(np.zeros((3, 4)), np.zeros((2, 3)), np.zeros((2, 4)), np.eye(3), [0.0])
    with pytest.raises(ValueError, match="beta has shape"):
        positional.relative_self_attention(np.zeros((3, 4)), np.zeros((2, 3)), np.zeros((2, 3)), np.eye(3), [0.0, 1.0])


# --- laws, on hypothesis-chosen cases -----------------------------------------------------------

def permutation(random, N):
    """A permutation of range(N) other than the identity (N >= 2)."""
    perm = np.arange(N)
    random.shuffle(perm)
    return perm if np.any(perm != np.arange(N)) else np.roll(perm, 1)


@given(attention_case(even_d=True), st.randoms(use_true_random=False))
def test_without_positions_self_attention_is_permutation_equivariant(case, random):
    I, W_q, W_k, W_v, scale = case
    perm = permutation(random, I.shape[1])
    O, A_prime = attn.self_attention(I, W_q, W_k, W_v, scale=scale)
    O_perm, A_perm = attn.self_attention(I[:, perm], W_q, W_k, W_v, scale=scale)
    np.testing.assert_allclose(O_perm, O[:, perm], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(A_perm, A_prime[perm][:, perm], rtol=1e-10, atol=1e-10)


@given(attention_case(even_d=True), st.randoms(use_true_random=False))
def test_with_positions_added_it_is_not(case, random):
    """Scores are kept moderate (scaled weights, 1/sqrt(d_k)): a saturated softmax that sends every
    query to one key the permutation leaves in place would hide the positions (random unscaled
    weights do that now and then)."""
    I, W_q, W_k, W_v, _ = case
    d, N = I.shape
    d_k = W_q.shape[0]
    W_q, W_k = W_q / np.sqrt(d), W_k / np.sqrt(d)
    perm = permutation(random, N)
    E = positional.sinusoidal(d, N)
    O, _ = attn.self_attention(positional.add_positions(I, E), W_q, W_k, W_v, scale=1 / np.sqrt(d_k))
    O_perm, _ = attn.self_attention(positional.add_positions(I[:, perm], E), W_q, W_k, W_v, scale=1 / np.sqrt(d_k))
    assert np.abs(O_perm - O[:, perm]).max() > 1e-6


@given(st.integers(1, 32), st.integers(1, 120))
def test_sinusoidal_gram_matrix_is_toeplitz(half_d, N):
    E = positional.sinusoidal(2 * half_d, N)
    G = E.T @ E  # G[i, j] = e^i . e^j
    i, j = np.indices((N, N))
    np.testing.assert_allclose(G, G[0, np.abs(i - j)], rtol=0, atol=1e-10)
    omega = positional.frequencies(2 * half_d)
    np.testing.assert_allclose(G[0], np.cos(np.outer(np.arange(N), omega)).sum(axis=1), rtol=0, atol=1e-10)


@given(st.integers(1, 32), st.integers(0, 3000), st.integers(-500, 500))
def test_shift_matrix_does_not_depend_on_the_position(half_d, p, k):
    d = 2 * half_d
    if p + k < 0:
        p, k = p - k, -k  # keep both positions in the table
    E = positional.sinusoidal(d, max(p, p + k) + 1)
    np.testing.assert_allclose(positional.shift_matrix(d, k) @ E[:, p], E[:, p + k], rtol=0, atol=1e-9)


# --- word_and_position ---------------------------------------------------------------------------

def test_word_and_position_stacks_words_over_positions():
    words = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
    X = positional.word_and_position(words, 4)
    np.testing.assert_array_equal(X[:2], words)
    np.testing.assert_array_equal(X[2:], positional.sinusoidal(4, 3))
    padded_words = np.vstack([words, np.zeros((4, 3))])  # a^i = [word; 0]
    padded_positions = np.vstack([np.zeros((2, 3)), positional.sinusoidal(4, 3)])  # e^i = [0; position]
    np.testing.assert_array_equal(X, positional.add_positions(padded_words, padded_positions))


def test_word_and_position_rejects_bad_input():
    with pytest.raises(ValueError, match="d must be an even integer > 0.*got 3"):
        positional.word_and_position(np.eye(2), 3)
    with pytest.raises(ValueError, match="I_words must have 2 axes"):
        positional.word_and_position(np.ones(3), 4)
    with pytest.raises(ValueError, match=r"I_words has shape \(3, 0\)"):
        positional.word_and_position(np.ones((3, 0)), 4)
