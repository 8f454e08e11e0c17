"""attn.compare: a convolution is multi-head self-attention with hard offset heads; RNN steps and paths;
linear attention in parallel equals its recurrence. Cross-checked against PyTorch's conv2d and RNN."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attn import compare as cp
from attn import self_attention

FAST = settings(max_examples=30, deadline=None)


# --- CNN as self-attention ---------------------------------------------------------------------

def conv_by_definition(image, kernel):
    """out[o, y, x] = sum over c, u, v of kernel[o, c, u, v] image[c, y+u-p, x+v-p], zero outside: six loops."""
    C_out, C_in, k, _ = kernel.shape
    _, H, W = image.shape
    p = k // 2
    out = np.zeros((C_out, H, W))
    for o in range(C_out):
        for y in range(H):
            for x in range(W):
                for c in range(C_in):
                    for u in range(k):
                        for v in range(k):
                            yy, xx = y + u - p, x + v - p
                            if 0 <= yy < H and 0 <= xx < W:
                                out[o, y, x] += kernel[o, c, u, v] * image[c, yy, xx]
    return out


@pytest.mark.parametrize("C_in, C_out, H, W, k", [(1, 1, 3, 3, 3), (3, 4, 5, 6, 3), (2, 1, 1, 7, 3),
                                                   (2, 3, 6, 4, 5), (3, 2, 4, 4, 1), (1, 2, 2, 2, 5)])
def test_conv2d_matches_the_definition_and_attention(C_in, C_out, H, W, k):
    rng = np.random.default_rng(C_in * 100 + H * 10 + k)
    image, kernel = rng.normal(size=(C_in, H, W)), rng.normal(size=(C_out, C_in, k, k))
    expected = conv_by_definition(image, kernel)
    np.testing.assert_allclose(cp.conv2d(image, kernel), expected, atol=1e-12)
    O, A_primes = cp.conv_as_attention(image, kernel)
    assert O.shape == (C_out, H, W)
    assert A_primes.shape == (k * k, H * W + 1, H * W + 1)
    np.testing.assert_allclose(O, expected, atol=1e-12)


@FAST
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 6), st.integers(1, 6), st.sampled_from([1, 3, 5]),
       st.integers(0, 2**32 - 1))
def test_conv_equals_attention_property(C_in, C_out, H, W, k, seed):
    rng = np.random.default_rng(seed)
    image, kernel = rng.normal(size=(C_in, H, W)), rng.normal(size=(C_out, C_in, k, k))
    np.testing.assert_allclose(cp.conv_as_attention(image, kernel)[0], cp.conv2d(image, kernel), atol=1e-12)


def test_conv2d_equals_torch(torch):
    rng = np.random.default_rng(3)
    image, kernel = rng.normal(size=(3, 7, 5)), rng.normal(size=(4, 3, 3, 3))
    out = torch.nn.functional.conv2d(torch.from_numpy(image)[None], torch.from_numpy(kernel), padding=1)[0]
    np.testing.assert_allclose(cp.conv2d(image, kernel), out.numpy(), atol=1e-12)
    np.testing.assert_allclose(cp.conv_as_attention(image, kernel)[0], out.numpy(), atol=1e-12)


def test_hard_heads_are_exactly_one_hot_on_their_offset():
    H, W = 4, 5
    _, A_primes = cp.conv_as_attention(np.ones((1, H, W)), np.ones((1, 1, 3, 3)))
    assert set(np.unique(A_primes)) == {0.0, 1.0}  # exactly, not approximately
    assert (A_primes.sum(axis=1) == 1).all()
    for m, (dr, dc) in enumerate(cp.neighbourhood_offsets(3)):
        for i in range(H * W):
            r, c = divmod(i, W)
            j = np.flatnonzero(A_primes[m, :, i])[0]
            if 0 <= r + dr < H and 0 <= c + dc < W:
                assert j == (r + dr) * W + (c + dc)
            else:
                assert j == H * W  # the padding vector
        assert A_primes[m, H * W, H * W] == 1


def test_offset_mask_and_offsets():
    assert cp.neighbourhood_offsets(1) == [(0, 0)]
    assert len(cp.neighbourhood_offsets(5)) == 25 and cp.neighbourhood_offsets(5)[0] == (-2, -2)
    mask = cp.offset_mask(3, 3, (0, 1))
    assert (mask.sum(axis=0) == 1).all()
    assert mask[1, 0] and mask[9, 2]  # pixel 1 -> its right neighbour; pixel 3 (end of row 1) -> padding
    centre = cp.offset_mask(2, 3, (0, 0))
    np.testing.assert_array_equal(centre, np.eye(7, dtype=bool))


def test_output_projection_blocks_are_the_kernel_slices():
    kernel = np.random.default_rng(1).normal(size=(2, 3, 3, 3))
    W_o = cp.conv_output_projection(kernel)
    assert W_o.shape == (2, 27)
    for m, (dr, dc) in enumerate(cp.neighbourhood_offsets(3)):
        np.testing.assert_array_equal(W_o[:, 3 * m:3 * m + 3], kernel[:, :, dr + 1, dc + 1])


@pytest.mark.parametrize("call, message", [
    (lambda: cp.conv2d(np.ones((2, 3, 3)), np.ones((1, 3, 3, 3))), "C_in must be 2"),
    (lambda: cp.conv2d(np.ones((2, 3, 3)), np.ones((1, 2, 2, 2))), "odd side"),
    (lambda: cp.conv2d(np.ones((3, 3)), np.ones((1, 1, 3, 3))), "image must have 3 axes"),
    (lambda: cp.conv_as_attention(np.ones((1, 0, 3)), np.ones((1, 1, 3, 3))), "at least one channel and one pixel"),
    (lambda: cp.neighbourhood_offsets(4), "kernel_size must be odd"),
    (lambda: cp.offset_mask(3, 3, 1), "pair of integers"),
    (lambda: cp.conv_output_projection(np.ones((1, 1, 3, 2))), "odd side"),
])
def test_bad_cnn_input_raises(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- RNN: sequential steps and path length -------------------------------------------------------

@pytest.mark.parametrize("N", [1, 2, 3, 8, 50, 300])
def test_steps_and_paths(N):
    rnn_deps, att_deps = cp.rnn_dependencies(N), cp.attention_dependencies(N)
    assert cp.sequential_steps(rnn_deps) == N
    assert cp.path_length(rnn_deps, ("a", 0), ("h", N - 1)) == N
    assert cp.path_length(rnn_deps, ("a", N - 1), ("h", N - 1)) == 1
    assert cp.sequential_steps(att_deps) == 1
    assert cp.path_length(att_deps, ("a", 0), ("b", N - 1)) == 1
    if N > 1:  # an RNN never passes information backwards
        assert cp.path_length(rnn_deps, ("a", N - 1), ("h", 0)) is None
        assert cp.path_length(att_deps, ("a", N - 1), ("b", 0)) == 1


@pytest.mark.parametrize("N", [2, 3, 7, 20])
@pytest.mark.parametrize("k", [3, 5, 7])
def test_conv_stack_needs_layers_to_connect_the_ends(N, k):
    r = k // 2
    layers = cp.conv_layers_to_connect(N, k)
    assert layers == math.ceil((N - 1) / r)
    deps = cp.conv_dependencies(N, k, layers)
    assert cp.sequential_steps(deps) == layers
    assert cp.path_length(deps, ("a", 0), ("conv", layers, N - 1)) == layers


def test_sequential_steps_of_a_diamond_and_a_cycle():
    deps = {"x": ("in",), "y": ("in",), "z": ("x", "y"), "w": ("z", "in")}
    assert cp.sequential_steps(deps) == 3
    assert cp.path_length(deps, "in", "w") == 1
    with pytest.raises(ValueError, match="cycle"):
        cp.sequential_steps({"x": ("y",), "y": ("x",)})


def test_rnn_equals_its_definition_and_torch(torch):
    rng = np.random.default_rng(5)
    I, W_h, W_x, h0 = rng.normal(size=(3, 9)), rng.normal(size=(4, 4)), rng.normal(size=(4, 3)), rng.normal(size=4)
    H = cp.rnn(I, W_h, W_x, h0)
    h = h0
    for t in range(9):
        h = np.tanh(W_h @ h + W_x @ I[:, t])
        np.testing.assert_allclose(H[:, t], h, atol=1e-12)
    layer = torch.nn.RNN(3, 4, bias=False, dtype=torch.float64)
    with torch.no_grad():
        layer.weight_ih_l0.copy_(torch.from_numpy(W_x))
        layer.weight_hh_l0.copy_(torch.from_numpy(W_h))
        out, _ = layer(torch.from_numpy(I.T.copy()), torch.from_numpy(h0)[None])
    np.testing.assert_allclose(H, out.numpy().T, atol=1e-12)


@pytest.mark.parametrize("N", [1, 2, 5, 12])
def test_rnn_needs_n_parallel_rounds(N):
    rng = np.random.default_rng(N)
    I, W_h, W_x = rng.normal(size=(3, N)), rng.normal(size=(4, 4)), rng.normal(size=(4, 3))
    rounds, wrong = cp.rnn_parallel_rounds(I, W_h, W_x)
    assert rounds == N
    assert wrong == list(range(N - 1, -1, -1))
    # without memory (W_h = 0) every position is independent: one round is enough
    assert cp.rnn_parallel_rounds(I, np.zeros((4, 4)), W_x) == (1, [0])


@pytest.mark.parametrize("call, message", [
    (lambda: cp.rnn(np.ones((3, 4)), np.ones((4, 3)), np.ones((4, 3))), "W_h has shape"),
    (lambda: cp.rnn(np.ones((3, 4)), np.ones((4, 4)), np.ones((4, 2))), r"W_x must be \(4, 3\)"),
    (lambda: cp.rnn(np.ones((3, 4)), np.ones((4, 4)), np.ones((4, 3)), np.ones(3)), r"h0 must be \(4,\)"),
    (lambda: cp.rnn_step(np.ones(4), np.ones(3), np.ones((4, 4)), np.ones((4, 4))), r"W_x \(4, 3\)"),
    (lambda: cp.rnn_dependencies(0), "N must be an integer >= 1"),
    (lambda: cp.conv_dependencies(5, 3, 0), "layers must be"),
    (lambda: cp.conv_layers_to_connect(5, 1), "at least 3"),
    (lambda: cp.conv_layers_to_connect(1, 3), "N must be an integer >= 2"),
    (lambda: cp.path_length(cp.rnn_dependencies(3), ("a", 7), ("h", 2)), "source"),
    (lambda: cp.path_length(cp.rnn_dependencies(3), ("a", 0), ("h", 9)), "target"),
    (lambda: cp.sequential_steps({}), "non-empty dict"),
])
def test_bad_rnn_input_raises(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- linear attention -----------------------------------------------------------------------------

def test_elu_feature_map():
    x = np.array([-50.0, -1.0, 0.0, 0.5, 3.0])
    np.testing.assert_allclose(cp.elu_feature_map(x), [np.exp(-50.0), np.exp(-1.0), 1.0, 1.5, 4.0])
    assert (cp.elu_feature_map(np.linspace(-700, 700, 101)) > 0).all()


@FAST
@given(st.integers(1, 5), st.integers(1, 4), st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_parallel_equals_recurrent(d_k, d_v, N, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(d_k, N)), rng.normal(size=(d_k, N)), rng.normal(size=(d_v, N))
    O_par, A_prime = cp.linear_attention(Q, K, V, causal=True)
    O_rec, S, z = cp.linear_attention_recurrent(Q, K, V)
    np.testing.assert_allclose(O_rec, O_par, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A_prime.sum(axis=0), 1)
    assert np.all(np.triu(A_prime) == A_prime)  # no weight on future keys
    assert S.shape == (d_v, d_k) and z.shape == (d_k,)
    phi_K = cp.elu_feature_map(K)
    np.testing.assert_allclose(S, V @ phi_K.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(z, phi_K.sum(axis=1), rtol=1e-12)


def test_linear_attention_by_definition():
    rng = np.random.default_rng(2)
    Q, K, V = rng.normal(size=(3, 6)), rng.normal(size=(3, 6)), rng.normal(size=(2, 6))
    O, A_prime = cp.linear_attention(Q, K, V)
    phi = cp.elu_feature_map
    for i in range(6):
        w = np.array([phi(K[:, j]) @ phi(Q[:, i]) for j in range(6)])
        np.testing.assert_allclose(A_prime[:, i], w / w.sum(), rtol=1e-12)
        np.testing.assert_allclose(O[:, i], V @ (w / w.sum()), rtol=1e-12)
    # the regrouped product (V phi(K)^T) phi(Q) never forms an N x N matrix and gives the same outputs
    O_linear = (V @ phi(K).T) @ phi(Q) / (phi(K).sum(axis=1) @ phi(Q))
    np.testing.assert_allclose(O_linear, O, rtol=1e-12)
    # exp(k . q) weights are softmax attention, which linear attention only resembles
    O_soft, _ = self_attention(np.vstack([Q, K, V]), np.eye(3, 8), np.eye(3, 8, 3), np.eye(2, 8, 6))
    assert not np.allclose(O_soft, O)


def test_linear_attention_step_matches_recurrence():
    rng = np.random.default_rng(4)
    Q, K, V = rng.normal(size=(3, 5)), rng.normal(size=(3, 5)), rng.normal(size=(2, 5))
    O, _, _ = cp.linear_attention_recurrent(Q, K, V)
    S, z = np.zeros((2, 3)), np.zeros(3)
    for i in range(5):
        S, z, b = cp.linear_attention_step(S, z, Q[:, i], K[:, i], V[:, i])
        np.testing.assert_allclose(b, O[:, i], rtol=1e-12)


@pytest.mark.parametrize("call, message", [
    (lambda: cp.linear_attention(np.ones((3, 4)), np.ones((2, 4)), np.ones((2, 4))), "the same size d_k"),
    (lambda: cp.linear_attention(np.ones((3, 4)), np.ones((3, 5)), np.ones((2, 5))), "both \\(d_k, N\\)"),
    (lambda: cp.linear_attention(np.ones((3, 4)), np.ones((3, 4)), np.ones((2, 5))), "every key needs a value"),
    (lambda: cp.linear_attention_recurrent(np.ones((3, 0)), np.ones((3, 0)), np.ones((2, 0))), "N > 0"),
    (lambda: cp.linear_attention_step(np.ones((2, 3)), np.ones(3), np.ones(3), np.ones(2), np.ones(2)),
     "z, q and k must be \\(3,\\)"),
    (lambda: cp.elu_feature_map([np.nan]), "must be finite"),
])
def test_bad_linear_input_raises(call, message):
    with pytest.raises(ValueError, match=message):
        call()
