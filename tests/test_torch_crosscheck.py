"""attn against PyTorch, an implementation nobody here wrote (float64, within 1e-10).

PyTorch is a test-only extra pinned at torch==2.13.0. Without it these tests skip with a
reason; in CI (`.ci/run`) a skip is a failure.
"""

import numpy as np
import pytest

import attn


def rows(x, torch):
    """Lecture columns (d, N) -> PyTorch rows (1, N, d), float64."""
    return torch.from_numpy(np.ascontiguousarray(x.T))[None]


@pytest.mark.parametrize("d, d_k, d_v, N", [(4, 4, 4, 1), (6, 3, 5, 7), (8, 2, 2, 16), (3, 5, 1, 4)])
def test_self_attention_equals_scaled_dot_product_attention(torch, d, d_k, d_v, N):
    r = np.random.default_rng(d * 100 + N)
    I, W_q, W_k, W_v = r.normal(size=(d, N)), r.normal(size=(d_k, d)), r.normal(size=(d_k, d)), r.normal(size=(d_v, d))
    O, A_prime = attn.self_attention(I, W_q, W_k, W_v, scale=1 / np.sqrt(d_k))
    Q_r, K_r, V_r = (rows(W @ I, torch) for W in (W_q, W_k, W_v))  # (1, N, d_*): X @ W.T
    out = torch.nn.functional.scaled_dot_product_attention(Q_r, K_r, V_r)
    np.testing.assert_allclose(out[0].numpy().T, O, rtol=0, atol=1e-10)
    # the lecture's scale=1 is torch's scale=1.0
    O1, _ = attn.self_attention(I, W_q, W_k, W_v)
    out1 = torch.nn.functional.scaled_dot_product_attention(Q_r, K_r, V_r, scale=1.0)
    np.testing.assert_allclose(out1[0].numpy().T, O1, rtol=0, atol=1e-10)


def test_masked_self_attention_equals_sdpa_with_mask(torch):
    r = np.random.default_rng(7)
    d, N = 5, 9
    I, W_q, W_k, W_v = r.normal(size=(d, N)), r.normal(size=(d, d)), r.normal(size=(d, d)), r.normal(size=(d, d))
    mask = attn.band_mask(N, 2)
    O, _ = attn.self_attention(I, W_q, W_k, W_v, scale=0.5, mask=mask)
    Q_r, K_r, V_r = (rows(W @ I, torch) for W in (W_q, W_k, W_v))
    # torch's boolean attn_mask is (query, key): True where the query may attend: our mask transposed
    out = torch.nn.functional.scaled_dot_product_attention(
        Q_r, K_r, V_r, attn_mask=torch.from_numpy(mask.T.copy()), scale=0.5)
    np.testing.assert_allclose(out[0].numpy().T, O, rtol=0, atol=1e-10)


@pytest.mark.parametrize("d, h, N", [(4, 1, 5), (8, 2, 6), (12, 3, 10), (16, 4, 1), (6, 6, 8)])
def test_multi_head_equals_torch_multihead_attention(torch, d, h, N):
    mha = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True, dtype=torch.float64)
    d_k = d // h
    W_in = mha.in_proj_weight.detach().numpy()  # (3d, d): W_q, W_k, W_v of all heads, stacked
    W_q, W_k, W_v = (W_in[s * d:(s + 1) * d].reshape(h, d_k, d) for s in range(3))
    W_o = mha.out_proj.weight.detach().numpy()  # (d, h*d_k)
    I = np.random.default_rng(N).normal(size=(d, N))
    O, A_primes = attn.multi_head_attention(I, W_q, W_k, W_v, W_o, scale=1 / np.sqrt(d_k))
    X = rows(I, torch)
    out, weights = mha(X, X, X, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(out[0].detach().numpy().T, O, rtol=0, atol=1e-10)
    # torch's weights are (batch, head, query, key): ours are (head, key, query)
    np.testing.assert_allclose(weights[0].detach().numpy().transpose(0, 2, 1), A_primes, rtol=0, atol=1e-10)


@pytest.mark.parametrize("d, h, d_k, d_v, N", [(6, 2, 3, 4, 5), (5, 1, 2, 7, 3)])
def test_multi_head_with_d_k_not_d_v_equals_torch(torch, d, h, d_k, d_v, N):
    """torch.nn.MultiheadAttention ties d_k = d_v = d/h, so d_k != d_v is checked head by head with SDPA."""
    r = np.random.default_rng(11)
    I = r.normal(size=(d, N))
    W_q, W_k, W_v = r.normal(size=(h, d_k, d)), r.normal(size=(h, d_k, d)), r.normal(size=(h, d_v, d))
    W_o = r.normal(size=(d, h * d_v))
    O, _ = attn.multi_head_attention(I, W_q, W_k, W_v, W_o, scale=1 / np.sqrt(d_k))
    X = torch.from_numpy(I.T.copy())  # (N, d)
    split = lambda W: torch.einsum("nd,hkd->hnk", X, torch.from_numpy(W))  # (h, N, d_*)
    heads = torch.nn.functional.scaled_dot_product_attention(split(W_q), split(W_k), split(W_v))  # (h, N, d_v)
    stacked = heads.permute(1, 0, 2).reshape(N, h * d_v)  # head order along features
    out = stacked @ torch.from_numpy(W_o).T
    np.testing.assert_allclose(out.numpy().T, O, rtol=0, atol=1e-10)


def test_softmax_equals_torch_softmax(torch):
    x = np.random.default_rng(3).normal(scale=50.0, size=(7, 5))
    for axis in (0, 1):
        np.testing.assert_allclose(attn.softmax(x, axis=axis), torch.softmax(torch.from_numpy(x), dim=axis).numpy(),
                                   rtol=0, atol=1e-15)


def test_linear_stores_out_in_and_computes_x_at_W_T(torch):
    """Chapter 4 and notation.md: nn.Linear(d, d_k) holds a (d_k, d) weight and computes x @ W.T, plus a bias
    unless it is built with bias=False."""
    d, d_k, N = 5, 3, 4
    x = torch.from_numpy(np.random.default_rng(4).normal(size=(N, d)))
    with_bias = torch.nn.Linear(d, d_k, dtype=torch.float64)
    no_bias = torch.nn.Linear(d, d_k, bias=False, dtype=torch.float64)
    for layer in (with_bias, no_bias):
        assert tuple(layer.weight.shape) == (d_k, d)
    W, b = with_bias.weight.detach().numpy(), with_bias.bias.detach().numpy()
    assert np.abs(b).max() > 0  # the default bias is there and is not zero
    with torch.no_grad():
        np.testing.assert_allclose(with_bias(x).numpy(), x.numpy() @ W.T + b, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(no_bias(x).numpy(), x.numpy() @ no_bias.weight.numpy().T, rtol=1e-12, atol=1e-12)
