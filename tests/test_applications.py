"""Tests for attn.applications: truncated attention for speech, pixels as vectors, graph attention."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attn import applications as ap
from attn import core, efficient


def random_head(rng, d, N, d_k=3, d_v=2):
    return rng.normal(size=(d, N)), rng.normal(size=(d_k, d)), rng.normal(size=(d_k, d)), rng.normal(size=(d_v, d))


# --- speech -------------------------------------------------------------------------------------

@given(st.integers(0, 2**32 - 1), st.integers(1, 5), st.integers(1, 30), st.integers(0, 35))
def test_truncated_loop_equals_masked_matrix_form(seed, d, L, width):
    I, W_q, W_k, W_v = random_head(np.random.default_rng(seed), d, L)
    O, A_prime, n_scores = ap.truncated_self_attention_loop(I, W_q, W_k, W_v, width, scale=0.7)
    O_ref, A_ref = core.self_attention(I, W_q, W_k, W_v, scale=0.7, mask=core.band_mask(L, width))
    np.testing.assert_allclose(O, O_ref, atol=1e-12)
    np.testing.assert_allclose(A_prime, A_ref, atol=1e-12)
    band = core.band_mask(L, width)
    assert np.all(A_prime[~band] == 0)
    np.testing.assert_allclose(A_prime.sum(axis=0), 1)
    assert n_scores == band.sum() == efficient.band_pairs(L, width)


def test_truncated_cost_is_linear_in_length():
    rng = np.random.default_rng(3)
    counts = {}
    for L in (50, 100, 200):
        counts[L] = ap.truncated_self_attention_loop(*random_head(rng, 4, L), 5)[2]
    assert counts[L] == L * 11 - 5 * 6
    assert counts[200] - counts[100] == counts[100] - counts[50] + 50 * 11  # constant cost per extra frame
    assert counts[200] < 200 * 11 < 200**2


def test_truncated_width_zero_returns_the_own_values():
    I, W_q, W_k, W_v = random_head(np.random.default_rng(1), 3, 7)
    O, A_prime, n = ap.truncated_self_attention_loop(I, W_q, W_k, W_v, 0)
    np.testing.assert_array_equal(A_prime, np.eye(7))
    np.testing.assert_allclose(O, W_v @ I)
    assert n == 7


@pytest.mark.parametrize("kwargs, message", [
    ({"width": -1}, "width must be an integer >= 0"),
    ({"width": 2.5}, "width must be an integer"),
    ({"width": 2, "scale": np.nan}, "scale must be finite"),
])
def test_truncated_bad_arguments(kwargs, message):
    I, W_q, W_k, W_v = random_head(np.random.default_rng(0), 3, 6)
    with pytest.raises(ValueError, match=message):
        ap.truncated_self_attention_loop(I, W_q, W_k, W_v, **kwargs)


def test_truncated_bad_shapes_name_them():
    I, W_q, W_k, W_v = random_head(np.random.default_rng(0), 3, 6)
    with pytest.raises(ValueError, match=r"W_k has shape \(3, 4\)"):
        ap.truncated_self_attention_loop(I, W_q, np.ones((3, 4)), W_v, 1)
    with pytest.raises(ValueError, match="I must have 2 axes"):
        ap.truncated_self_attention_loop(I[:, 0], W_q, W_k, W_v, 1)


# --- images -------------------------------------------------------------------------------------

def test_image_to_sequence_is_reading_order():
    image = np.random.default_rng(0).random((5, 10, 3))
    I = ap.image_to_sequence(image)
    assert I.shape == (3, 50)  # the slide's 5 x 10 x 3 image: 50 vectors of dimension 3
    for r in range(5):
        for c in range(10):
            np.testing.assert_array_equal(I[:, r * 10 + c], image[r, c])


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_sequence_to_image_inverts(H, W, C, seed):
    rng = np.random.default_rng(seed)
    image = rng.random((H, W, C))
    np.testing.assert_array_equal(ap.sequence_to_image(ap.image_to_sequence(image), H, W), image)
    weights = rng.random(H * W)
    back = ap.sequence_to_image(weights, H, W)
    assert back.shape == (H, W) and back[H - 1, W - 1] == weights[-1] and back[0, W - 1] == weights[W - 1]


def test_downsample_averages_blocks():
    image = np.arange(4 * 6 * 2, dtype=float).reshape(4, 6, 2)
    small = ap.downsample(image, 2)
    assert small.shape == (2, 3, 2)
    np.testing.assert_allclose(small[1, 2], image[2:4, 4:6].mean(axis=(0, 1)))
    np.testing.assert_allclose(ap.downsample(image, 1), image)
    np.testing.assert_allclose(small.mean(axis=(0, 1)), image.mean(axis=(0, 1)))  # averaging keeps the mean colour


@pytest.mark.parametrize("call, message", [
    (lambda: ap.image_to_sequence(np.ones((4, 4))), r"\(H, W, C\)"),
    (lambda: ap.image_to_sequence(np.ones((0, 4, 3))), "at least one pixel"),
    (lambda: ap.downsample(np.ones((5, 6, 3)), 2), r"multiples of factor = 2 \(crop it to \(4, 6, 3\)"),
    (lambda: ap.downsample(np.ones((4, 6, 3)), 0), "factor must be an integer >= 1"),
    (lambda: ap.sequence_to_image(np.ones((3, 12)), 3, 5), r"needs shape \(C, 15\)"),
    (lambda: ap.sequence_to_image(np.ones(15), 0, 5), "H must be an integer >= 1"),
    (lambda: ap.image_to_sequence(np.full((2, 2, 3), np.nan)), "must be finite"),
])
def test_image_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- graphs -------------------------------------------------------------------------------------

def test_lecture_graph_has_the_slide_edges():
    M = ap.lecture_graph()
    np.testing.assert_array_equal(M, M.T)
    assert M.sum() == 2 * 8 and np.all(np.diag(M) == 0)
    for u, v in ap.LECTURE_GRAPH_EDGES:
        assert M[u - 1, v - 1] == 1
    np.testing.assert_array_equal(M.sum(axis=0), [3, 1, 3, 1, 3, 2, 2, 1])


@pytest.mark.parametrize("self_loops", [True, False])
def test_graph_attention_is_zero_off_the_edges(self_loops):
    M = ap.lecture_graph()
    I, W_q, W_k, W_v = random_head(np.random.default_rng(5), 4, 8)
    O, A_prime = ap.graph_attention(I, W_q, W_k, W_v, M, self_loops=self_loops)
    allowed = (M != 0) | (np.eye(8, dtype=bool) if self_loops else False)
    assert np.all(A_prime[~allowed] == 0) and np.all(A_prime[allowed] > 0)
    np.testing.assert_allclose(A_prime.sum(axis=0), 1)
    O_ref, _ = core.self_attention(I, W_q, W_k, W_v, mask=allowed)
    np.testing.assert_allclose(O, O_ref)
    if not self_loops:  # a node with one neighbour copies that neighbour's value
        for i in np.flatnonzero(M.sum(axis=0) == 1):
            np.testing.assert_allclose(O[:, i], W_v @ I[:, np.flatnonzero(M[:, i])[0]])


def test_graph_attention_sees_only_neighbours():
    M = ap.lecture_graph()
    rng = np.random.default_rng(9)
    I, W_q, W_k, W_v = random_head(rng, 4, 8)
    O, _ = ap.graph_attention(I, W_q, W_k, W_v, M, scale=0.2)  # small scores: no weight rounds to 0
    for node in range(8):
        J = I.copy()
        J[:, node] += rng.normal(size=4)
        O_J, _ = ap.graph_attention(J, W_q, W_k, W_v, M, scale=0.2)
        near = ap.reachable_within(M, 1)[node]
        np.testing.assert_array_equal(O_J[:, ~near], O[:, ~near])  # untouched, bit for bit
        assert np.all(np.abs(O_J[:, near] - O[:, near]).max(axis=0) > 1e-6)


def test_reachable_within():
    M = ap.lecture_graph()
    np.testing.assert_array_equal(ap.reachable_within(M, 0), np.eye(8, dtype=bool))
    np.testing.assert_array_equal(ap.reachable_within(M, 1), (M != 0) | np.eye(8, dtype=bool))
    assert not ap.reachable_within(M, 2)[1, 7]  # node 2 and node 8 are further apart
    assert ap.reachable_within(M, 5).all()  # the graph is connected
    path = np.zeros((4, 4))
    path[[0, 1, 2], [1, 2, 3]] = 1  # directed path 1 -> 2 -> 3 -> 4
    assert ap.reachable_within(path, 3)[0, 3] and not ap.reachable_within(path, 3)[3, 0]
    assert not ap.reachable_within(path, 2)[0, 3]


def test_graph_mask():
    M = ap.lecture_graph()
    np.testing.assert_array_equal(ap.graph_mask(M, self_loops=False), M != 0)
    assert ap.graph_mask(M).dtype == bool and ap.graph_mask(M).trace() == 8


@pytest.mark.parametrize("call, message", [
    (lambda: ap.graph_mask(np.zeros((3, 3)), self_loops=False), "node index 0 .* no edge"),
    (lambda: ap.graph_mask(np.ones((3, 4))), "square"),
    (lambda: ap.graph_mask(-np.eye(3)), "non-negative"),
    (lambda: ap.graph_attention(np.ones((2, 5)), np.eye(2), np.eye(2), np.eye(2), np.ones((4, 4))),
     r"adjacency has shape \(4, 4\) but I has shape \(2, 5\)"),
    (lambda: ap.reachable_within(np.eye(3), -1), "hops must be an integer >= 0"),
])
def test_graph_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
