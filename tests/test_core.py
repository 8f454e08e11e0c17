"""Unit tests for attn.core: each public function on small cases worked out by hand."""

import numpy as np
import pytest

import attn

rng = np.random.default_rng(0)


def random_case(d=3, d_k=2, d_v=4, N=5, seed=0):
    r = np.random.default_rng(seed)
    return r.normal(size=(d, N)), r.normal(size=(d_k, d)), r.normal(size=(d_k, d)), r.normal(size=(d_v, d))


# --- softmax -----------------------------------------------------------------------------------

def test_softmax_known_values():
    p = attn.softmax([0.0, np.log(3.0)])
    np.testing.assert_allclose(p, [0.25, 0.75], rtol=1e-15)


def test_softmax_default_axis_is_columns():
    x = np.array([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(attn.softmax(x).sum(axis=0), [1.0, 1.0])
    np.testing.assert_allclose(attn.softmax(x, axis=1).sum(axis=1), [1.0, 1.0])


@pytest.mark.parametrize("big", [1e6, -1e6, 1e300, 710.0])
def test_softmax_finite_for_huge_logits(big):
    p = attn.softmax(np.array([[big, 0.0], [0.0, big], [1.0, 1.0]]), axis=0)
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p.sum(axis=0), [1.0, 1.0])


def test_softmax_of_plus_minus_a_million():
    np.testing.assert_array_equal(attn.softmax([1e6, -1e6]), [1.0, 0.0])


def test_softmax_masked_entries_get_zero():
    p = attn.softmax([1.0, -np.inf, 1.0])
    np.testing.assert_array_equal(p, [0.5, 0.0, 0.5])


def test_softmax_keeps_float32():
    assert attn.softmax(np.ones(3, dtype=np.float32)).dtype == np.float32


@pytest.mark.parametrize(
    "x, axis, message",
    [
        ([1.0, np.nan], 0, "finite"),
        ([1.0, np.inf], 0, "finite"),
        ([-np.inf, -np.inf], 0, "entirely -inf"),
        (np.ones((2, 2)), 2, "out of range"),
        (3.0, 0, "scalar"),
        (["a", "b"], 0, "real numbers"),
        ([1 + 2j], 0, "real numbers"),
    ],
)
def test_softmax_rejects_bad_input(x, axis, message):
    with pytest.raises(ValueError, match=message):
        attn.softmax(x, axis=axis)


@pytest.mark.parametrize("seed", range(5))
def test_wrong_softmax_axis_is_wrong_even_for_symmetric_scores(seed):
    """notation.md: the row softmax of a symmetric A is the transpose of A', not A'."""
    K = np.random.default_rng(seed).normal(size=(3, 5))
    A = K.T @ K                                   # W_q = W_k makes A symmetric
    np.testing.assert_array_equal(A, A.T)
    A_prime = attn.softmax(A, axis=0)             # the right axis: each column
    wrong = attn.softmax(A, axis=1)               # the wrong axis: each row
    np.testing.assert_allclose(wrong, A_prime.T, rtol=1e-14, atol=1e-16)
    assert np.abs(wrong - A_prime).max() > 0.01   # and that is not A'
    assert not np.allclose(wrong.sum(axis=0), 1.0)  # its columns no longer sum to 1


# --- self_attention ----------------------------------------------------------------------------

def test_self_attention_by_hand():
    # Two vectors, identity projections: A = I^T I, so column 1 has scores (1, 0).
    I = np.eye(2)
    O, A_prime = attn.self_attention(I, np.eye(2), np.eye(2), np.eye(2))
    e = np.e
    expected = np.array([[e / (e + 1), 1 / (e + 1)], [1 / (e + 1), e / (e + 1)]])
    np.testing.assert_allclose(A_prime, expected, rtol=1e-15)
    np.testing.assert_allclose(O, expected, rtol=1e-15)  # V = I, so O = A'


def test_self_attention_shapes_and_equations():
    I, W_q, W_k, W_v = random_case()
    O, A_prime = attn.self_attention(I, W_q, W_k, W_v, scale=0.5)
    assert O.shape == (4, 5) and A_prime.shape == (5, 5)
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A = 0.5 * K.T @ Q
    expected = np.exp(A) / np.exp(A).sum(axis=0)
    np.testing.assert_allclose(A_prime, expected, rtol=1e-12)
    np.testing.assert_allclose(O, V @ expected, rtol=1e-12)
    # A_prime[j, i] is query i's weight on key j: b^2 = sum_j A_prime[j, 1] v^j
    np.testing.assert_allclose(O[:, 1], sum(A_prime[j, 1] * V[:, j] for j in range(5)), rtol=1e-12)


def test_attention_scores_orientation():
    Q = np.array([[1.0, 2.0], [0.0, 1.0]])  # q^1 = (1, 0), q^2 = (2, 1)
    K = np.array([[3.0, 0.0], [1.0, 5.0]])  # k^1 = (3, 1), k^2 = (0, 5)
    A = attn.attention_scores(Q, K, scale=2.0)
    # A[j, i] = scale * k^j . q^i: row j is a key, column i a query (the transpose would swap 14 and 0)
    np.testing.assert_array_equal(A, [[6.0, 14.0], [0.0, 10.0]])


def test_self_attention_accepts_integers_and_lists():
    O, A_prime = attn.self_attention([[1, 0], [0, 1]], [[1, 0]], [[0, 1]], [[1, 1]])
    assert O.dtype == np.float64 and O.shape == (1, 2)


def test_self_attention_float32_stays_float32():
    I, W_q, W_k, W_v = (x.astype(np.float32) for x in random_case())
    O, A_prime = attn.self_attention(I, W_q, W_k, W_v)
    assert O.dtype == np.float32 and A_prime.dtype == np.float32


def test_mask_zeroes_weights_and_matches_renormalised_softmax():
    I, W_q, W_k, W_v = random_case(N=6, seed=5)
    mask = attn.band_mask(6, 1)
    O, A_prime = attn.self_attention(I, W_q, W_k, W_v, mask=mask)
    assert np.all(A_prime[~mask] == 0.0)
    np.testing.assert_allclose(A_prime.sum(axis=0), 1.0)
    A = (W_k @ I).T @ (W_q @ I)
    E = np.where(mask, np.exp(A), 0.0)
    np.testing.assert_allclose(A_prime, E / E.sum(axis=0), rtol=1e-12)


def test_band_and_causal_masks():
    np.testing.assert_array_equal(attn.band_mask(3, 0), np.eye(3, dtype=bool))
    assert attn.band_mask(5, 1).sum() == 5 + 2 * 4
    np.testing.assert_array_equal(attn.causal_mask(3), np.triu(np.ones((3, 3), dtype=bool)))
    with pytest.raises(ValueError, match="width"):
        attn.band_mask(3, -1)
    with pytest.raises(ValueError, match="N must be"):
        attn.causal_mask(0)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda I, q, k, v: (I[:, :, None], q, k, v), r"I must have 2 axes, got shape \(3, 5, 1\)"),
        (lambda I, q, k, v: (I[:, :0], q, k, v), r"I has shape \(3, 0\).*N > 0"),
        (lambda I, q, k, v: (I[:2], q, k, v), r"W_q has shape \(2, 3\) but I has shape \(2, 5\)"),
        (lambda I, q, k, v: (I, q, k[:, :2], v), r"W_k has shape \(2, 2\) but I has shape \(3, 5\)"),
        (lambda I, q, k, v: (I, q, np.vstack([k, k]), v), r"W_q has shape \(2, 3\) and W_k has shape \(4, 3\)"),
        (lambda I, q, k, v: (I, q, k, v[:, :1]), r"W_v has shape \(4, 1\)"),
        (lambda I, q, k, v: (np.where(I > 0, np.nan, I), q, k, v), r"I must be finite"),
        (lambda I, q, k, v: (I, np.full_like(q, np.inf), k, v), r"W_q must be finite"),
        (lambda I, q, k, v: (I.astype(str), q, k, v), r"I must hold real numbers"),
        (lambda I, q, k, v: (I, q, k, [[1, 2], [3]]), r"W_v is not a numeric array"),
    ],
)
def test_self_attention_rejects_bad_input(change, message):
    args = change(*random_case())
    with pytest.raises(ValueError, match=message):
        attn.self_attention(*args)
    with pytest.raises(ValueError, match=message):
        attn.self_attention_loop(*args)


@pytest.mark.parametrize("scale", [np.nan, np.inf, "big", None])
def test_self_attention_rejects_bad_scale(scale):
    with pytest.raises(ValueError, match="scale"):
        attn.self_attention(*random_case(), scale=scale)


@pytest.mark.parametrize(
    "mask, message",
    [
        (np.ones((4, 4), dtype=bool), r"mask has shape \(4, 4\) but the sequence has N = 5"),
        (np.ones((5, 5)), "boolean"),
        (np.eye(5, dtype=bool) & (np.arange(5) < 4), "column 4 is all False"),
    ],
)
def test_self_attention_rejects_bad_mask(mask, message):
    with pytest.raises(ValueError, match=message):
        attn.self_attention(*random_case(), mask=mask)


def test_key_padding_mask_hides_pad_keys():
    mask = attn.core.key_padding_mask(np.array([True, True, False, False]))
    assert mask.shape == (4, 4)
    np.testing.assert_array_equal(mask[:2], True)
    np.testing.assert_array_equal(mask[2:], False)


@pytest.mark.parametrize("n_pad", [0, 1, 5, 50])
def test_key_padding_mask_makes_real_outputs_independent_of_filler(n_pad):
    I, W_q, W_k, W_v = random_case(N=4, seed=2)
    filler = np.random.default_rng(n_pad).normal(scale=10.0, size=(I.shape[0], n_pad))
    padded = np.hstack([I, filler])
    real = np.arange(padded.shape[1]) < 4
    O, A_prime = attn.self_attention(padded, W_q, W_k, W_v, mask=attn.core.key_padding_mask(real))
    O_alone, A_alone = attn.self_attention(I, W_q, W_k, W_v)
    np.testing.assert_allclose(O[:, :4], O_alone, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A_prime[:4, :4], A_alone, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(A_prime[4:], 0.0)   # no query gives a pad key any weight
    if n_pad:
        O_unmasked, _ = attn.self_attention(padded, W_q, W_k, W_v)
        assert np.abs(O_unmasked[:, :4] - O_alone).max() > 1e-3   # without the mask the filler leaks in


@pytest.mark.parametrize("real, message", [
    ([1, 0, 1], "boolean"),
    (np.ones((2, 2), dtype=bool), "1-d"),
    (np.zeros(0, dtype=bool), "non-empty"),
    (np.zeros(3, dtype=bool), "no True entry"),
])
def test_key_padding_mask_rejects_bad_input(real, message):
    with pytest.raises(ValueError, match=message):
        attn.core.key_padding_mask(real)


# --- multi_head_attention ----------------------------------------------------------------------

def heads_case(h=3, d=4, d_k=2, d_v=3, d_out=5, N=6, seed=1):
    r = np.random.default_rng(seed)
    return (r.normal(size=(d, N)), r.normal(size=(h, d_k, d)), r.normal(size=(h, d_k, d)),
            r.normal(size=(h, d_v, d)), r.normal(size=(d_out, h * d_v)))


def test_multi_head_stacks_heads_in_order_then_w_o():
    I, W_q, W_k, W_v, W_o = heads_case()
    O, A_primes = attn.multi_head_attention(I, W_q, W_k, W_v, W_o, scale=0.3)
    assert O.shape == (5, 6) and A_primes.shape == (3, 6, 6)
    B = []
    for m in range(3):
        O_m, A_m = attn.self_attention(I, W_q[m], W_k[m], W_v[m], scale=0.3)
        np.testing.assert_allclose(A_primes[m], A_m, rtol=1e-12)
        B.append(O_m)
    np.testing.assert_allclose(O, W_o @ np.vstack(B), rtol=1e-12)
    # head order matters: W_o's first d_v columns read head 1
    np.testing.assert_allclose(O, W_o[:, :3] @ B[0] + W_o[:, 3:6] @ B[1] + W_o[:, 6:] @ B[2], rtol=1e-12)


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda I, q, k, v, o: (I, q[0], k, v, o), r"W_q must have 3 axes, got shape \(2, 4\)"),
        (lambda I, q, k, v, o: (I, q, k[:2], v, o), r"head stacks differ in size: W_q has 3 heads"),
        (lambda I, q, k, v, o: (I, q, k, v[:1], o), r"W_v has 1"),
        (lambda I, q, k, v, o: (I, q, k, v, o[:, :8]), r"W_o has shape \(5, 8\).*h\*d_v = 3\*3 = 9"),
        (lambda I, q, k, v, o: (I, q[:0], k[:0], v[:0], o[:, :0]), r"at least one head"),
        (lambda I, q, k, v, o: (I[:3], q, k, v, o), r"W_q has shape \(2, 4\) but I has shape \(3, 6\)"),
        (lambda I, q, k, v, o: (I, q, k[:, :1], v, o), r"W_q has shape \(2, 4\) and W_k has shape \(1, 4\)"),
        (lambda I, q, k, v, o: (I, q, k, v, o * np.nan), r"W_o must be finite"),
    ],
)
def test_multi_head_rejects_bad_input(change, message):
    with pytest.raises(ValueError, match=message):
        attn.multi_head_attention(*change(*heads_case()))


# --- relevance functions -----------------------------------------------------------------------

def test_dot_product_relevance():
    a1, a2 = np.array([1.0, 2.0]), np.array([0.0, 1.0])
    W_q, W_k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]), np.array([[2.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    # q = (1, 2, 3), k = (0, 1, 0)
    assert attn.dot_product_relevance(a1, a2, W_q, W_k) == 2.0


def test_additive_relevance():
    a1, a2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    W_q, W_k, w = np.eye(2), np.eye(2), np.array([1.0, -2.0])
    assert attn.additive_relevance(a1, a2, W_q, W_k, w) == pytest.approx(np.tanh(1.0) - 2 * np.tanh(1.0))


def test_relevance_rejects_mismatched_sizes():
    with pytest.raises(ValueError, match=r"a_query has shape \(2,\) and a_key has shape \(3,\)"):
        attn.dot_product_relevance(np.ones(2), np.ones(3), np.eye(2), np.eye(2))
    with pytest.raises(ValueError, match=r"W_k has shape \(2, 3\)"):
        attn.dot_product_relevance(np.ones(2), np.ones(2), np.eye(2), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"w has shape \(3,\)"):
        attn.additive_relevance(np.ones(2), np.ones(2), np.eye(2), np.eye(2), np.ones(3))


def test_import_attn_needs_only_numpy():
    import subprocess
    import sys

    code = "import sys, attn; bad = {'matplotlib', 'torch', 'scipy'} & set(sys.modules); print(sorted(bad))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_import_attn_binds_exactly_its_public_surface():
    """Every name of __all__ exists; the public submodules bound are the ones __all__ lists, no others (in a fresh
    interpreter: a test that imported attn.plot earlier would have bound it here)."""
    import subprocess
    import sys

    code = ("import types, attn; print(all(hasattr(attn, n) for n in attn.__all__)); "
            "print(sorted(n for n, v in vars(attn).items() if isinstance(v, types.ModuleType) and n[0] != '_')); "
            "print(sorted(n for n in attn.__all__ if isinstance(getattr(attn, n), types.ModuleType)))")
    every, bound, listed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                          check=True).stdout.splitlines()
    assert every == "True" and bound == listed and "'plot'" not in bound and "'diagrams'" not in bound, (bound, listed)
