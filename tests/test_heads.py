"""attn.heads: fused projections split into heads, against the per-head loop and against PyTorch."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attn
from attn import heads


def random_heads(d=6, h=2, d_k=3, d_v=4, d_out=5, N=7, seed=0):
    r = np.random.default_rng(seed)
    return (r.normal(size=(d, N)), r.normal(size=(h, d_k, d)), r.normal(size=(h, d_k, d)),
            r.normal(size=(h, d_v, d)), r.normal(size=(d_out, h * d_v)))


# --- fuse / split ---------------------------------------------------------------------------------

def test_split_heads_takes_consecutive_blocks_of_rows():
    X = np.arange(12.0).reshape(6, 2)
    parts = heads.split_heads(X, 3)
    assert parts.shape == (3, 2, 2)
    for m in range(3):
        np.testing.assert_array_equal(parts[m], X[2 * m:2 * m + 2])


def test_interleaved_split_takes_every_h_th_row():
    X = np.arange(12.0).reshape(6, 2)
    parts = heads.split_heads_interleaved(X, 3)
    for m in range(3):
        np.testing.assert_array_equal(parts[m], X[m::3])


@pytest.mark.parametrize("h, d_k", [(1, 4), (2, 3), (4, 1), (3, 2)])
def test_fuse_and_split_are_inverses(h, d_k):
    W = np.random.default_rng(h).normal(size=(h, d_k, 5))
    np.testing.assert_array_equal(heads.split_heads(heads.fuse_heads(W), h), W)
    B = np.random.default_rng(d_k).normal(size=(h, d_k, 3))
    for split, cut in (("blocks", heads.split_heads), ("interleaved", heads.split_heads_interleaved)):
        np.testing.assert_array_equal(cut(heads.merge_heads(B, split=split), h), B)


def test_interleaved_split_agrees_only_when_h_or_d_k_is_one():
    X = np.arange(12.0).reshape(12, 1)
    for h in (1, 12):
        np.testing.assert_array_equal(heads.split_heads_interleaved(X, h), heads.split_heads(X, h))
    assert not np.array_equal(heads.split_heads_interleaved(X, 3), heads.split_heads(X, 3))


# --- fused forward == per-head loop ---------------------------------------------------------------

@pytest.mark.parametrize("d, h, d_k, d_v, d_out, N", [(6, 2, 3, 4, 5, 7), (4, 1, 4, 4, 4, 1), (8, 4, 2, 2, 8, 9),
                                                       (3, 3, 5, 1, 2, 4)])
def test_fused_equals_multi_head_attention(d, h, d_k, d_v, d_out, N):
    I, W_q, W_k, W_v, W_o = random_heads(d, h, d_k, d_v, d_out, N, seed=d + N)
    O, A = attn.multi_head_attention(I, W_q, W_k, W_v, W_o, scale=0.7)
    O_f, A_f = heads.fused_multi_head_attention(I, heads.fuse_heads(W_q), heads.fuse_heads(W_k),
                                                heads.fuse_heads(W_v), W_o, h, scale=0.7)
    np.testing.assert_allclose(O_f, O, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A_f, A, rtol=1e-12, atol=1e-12)


def test_fused_with_mask_equals_multi_head_attention():
    I, W_q, W_k, W_v, W_o = random_heads(seed=3)
    mask = attn.causal_mask(I.shape[1])
    O, A = attn.multi_head_attention(I, W_q, W_k, W_v, W_o, mask=mask)
    O_f, A_f = heads.fused_multi_head_attention(I, *(heads.fuse_heads(W) for W in (W_q, W_k, W_v)), W_o, 2, mask=mask)
    np.testing.assert_allclose(O_f, O, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(A_f, A, rtol=1e-12, atol=1e-12)
    assert np.all(A_f[:, ~mask] == 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 3), st.integers(1, 3), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_fused_equals_loop_property(h, d_k, d_v, N, seed):
    I, W_q, W_k, W_v, W_o = random_heads(4, h, d_k, d_v, 3, N, seed=seed)
    O, A = attn.multi_head_attention(I, W_q, W_k, W_v, W_o)
    O_f, A_f = heads.fused_multi_head_attention(I, *(heads.fuse_heads(W) for W in (W_q, W_k, W_v)), W_o, h)
    np.testing.assert_allclose(O_f, O, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(A_f.sum(axis=1), 1.0, rtol=1e-12)


def test_wrong_split_differs_but_equals_the_loop_on_permuted_rows():
    d, h, d_k, d_v = 6, 2, 3, 3
    I, W_q, W_k, W_v, W_o = random_heads(d, h, d_k, d_v, d, seed=5)
    fused = [heads.fuse_heads(W) for W in (W_q, W_k, W_v)]
    O, _ = heads.fused_multi_head_attention(I, *fused, W_o, h)
    O_wrong, _ = heads.fused_multi_head_attention(I, *fused, W_o, h, split="interleaved")
    assert np.abs(O_wrong - O).max() > 1e-3
    # the wrong split is the right one applied to the rows (and W_o's columns) in another order
    perm = np.arange(h * d_k).reshape(d_k, h).T.ravel()
    O_perm, _ = attn.multi_head_attention(I, *(heads.split_heads(W[perm], h) for W in fused), W_o[:, perm])
    np.testing.assert_allclose(O_wrong, O_perm, rtol=1e-12, atol=1e-12)


def test_one_head_with_identity_W_o_is_self_attention():
    I, W_q, W_k, W_v, _ = random_heads(h=1, seed=9)
    O, A = heads.fused_multi_head_attention(I, W_q[0], W_k[0], W_v[0], np.eye(W_v.shape[1]), 1)
    O1, A1 = attn.self_attention(I, W_q[0], W_k[0], W_v[0])
    np.testing.assert_allclose(O, O1, rtol=1e-12)
    np.testing.assert_allclose(A[0], A1, rtol=1e-12)


# --- other helpers --------------------------------------------------------------------------------

def test_head_projection_is_the_two_step_projection():
    r = np.random.default_rng(2)
    W_head, W, a = r.normal(size=(3, 2, 4)), r.normal(size=(4, 5)), r.normal(size=5)
    P = heads.head_projection(W_head, W)
    for m in range(3):
        np.testing.assert_allclose(P[m] @ a, W_head[m] @ (W @ a), rtol=1e-12)


def test_split_in_proj_cuts_three_blocks():
    W_in = np.arange(18.0).reshape(6, 3)
    W_q, W_k, W_v = heads.split_in_proj(W_in)
    np.testing.assert_array_equal(np.vstack([W_q, W_k, W_v]), W_in)
    assert W_q.shape == (2, 3)


@pytest.mark.parametrize("d, h", [(80, 1), (80, 2), (80, 4), (80, 16), (512, 8)])
def test_parameter_count_is_4_d_squared_when_d_k_is_d_over_h(d, h):
    assert heads.parameter_count(d, h) == 4 * d * d
    assert heads.parameter_breakdown(d, h) == {"W_q": d * d, "W_k": d * d, "W_v": d * d, "W_o": d * d}
    assert heads.parameter_count(d, h, bias=True) == 4 * d * d + 4 * d


def test_parameter_count_general_shapes():
    c = heads.parameter_breakdown(6, 3, d_k=2, d_v=5, d_out=4)
    assert c == {"W_q": 36, "W_k": 36, "W_v": 90, "W_o": 60}
    assert heads.parameter_count(6, 3, d_k=2, d_v=5, d_out=4) == 222
    assert heads.parameter_breakdown(6, 3, d_k=2, d_v=5, d_out=4, bias=True) == {"W_q": 42, "W_k": 42, "W_v": 105,
                                                                                 "W_o": 64}
    assert isinstance(heads.parameter_count(6, 3, d_k=2, d_v=5, d_out=4), int)


def test_toy_heads_attend_by_topic_and_by_role():
    I, words = heads.two_part_inputs()
    W_q, W_k = heads.toy_heads()
    _, A = attn.multi_head_attention(I, W_q, W_k, np.stack([np.eye(5)] * 2), np.eye(10))
    topic, role = np.arange(6) // 2, np.arange(6) % 2
    same_topic = topic[:, None] == topic[None, :]  # [j, i]
    other_role = role[:, None] != role[None, :]
    assert np.all(A[0][same_topic].reshape(6, 2) > 0.49)
    assert np.all(A[1][other_role].reshape(6, 3) > 0.33)
    assert np.all(same_topic[A[0].argmax(axis=0), np.arange(6)])
    assert np.all(other_role[A[1].argmax(axis=0), np.arange(6)])


# --- validation -----------------------------------------------------------------------------------

@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: heads.split_heads(np.ones((5, 2)), 2), r"shape \(5, 2\).*h = 2"),
        (lambda: heads.split_heads(np.ones((4, 2)), 0), "h .*>= 1"),
        (lambda: heads.split_heads(np.ones((4, 2)), True), "h .*>= 1"),
        (lambda: heads.split_heads_interleaved(np.ones(4), 2), "X must have 2 axes"),
        (lambda: heads.fuse_heads(np.ones((4, 2))), "W must have 3 axes"),
        (lambda: heads.merge_heads(np.ones((2, 2, 2)), split="rows"), "split must be one of"),
        (lambda: heads.split_in_proj(np.ones((4, 2))), r"W_in has shape \(4, 2\)"),
        (lambda: heads.head_projection(np.ones((2, 3, 4)), np.ones((5, 6))), r"\(2, 3, 4\).*\(5, 6\)"),
        (lambda: heads.parameter_count(10, 3), "h = 3 does not divide d = 10"),
        (lambda: heads.parameter_count(0, 1), "d must be"),
        (lambda: heads.parameter_count(4, 2, d_k=0, d_v=2), "d_k must be"),
    ],
)
def test_helpers_reject_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"W_q": np.ones((6, 5))}, r"W_q has shape \(6, 5\).*6 columns"),
        ({"W_k": np.ones((4, 6))}, r"W_q has shape \(6, 6\) and W_k has shape \(4, 6\)"),
        ({"W_v": np.ones((5, 6))}, r"W_v has shape \(5, 6\).*h = 2"),
        ({"W_o": np.ones((6, 7))}, r"W_o has shape \(6, 7\).*W_v has shape \(8, 6\)"),
        ({"h": 4}, r"W_q has shape \(6, 6\).*h = 4"),
        ({"I": np.ones((6, 0))}, "N > 0"),
        ({"scale": np.nan}, "scale"),
        ({"mask": np.ones((3, 3), dtype=bool)}, r"mask has shape \(3, 3\)"),
        ({"split": "columns"}, "split must be one of"),
    ],
)
def test_fused_rejects_bad_input(change, message):
    r = np.random.default_rng(0)
    args = {"I": r.normal(size=(6, 4)), "W_q": r.normal(size=(6, 6)), "W_k": r.normal(size=(6, 6)),
            "W_v": r.normal(size=(8, 6)), "W_o": r.normal(size=(6, 8)), "h": 2}
    args.update(change)
    kwargs = {k: args.pop(k) for k in ("scale", "mask", "split") if k in args}
    with pytest.raises(ValueError, match=message):
        heads.fused_multi_head_attention(args["I"], args["W_q"], args["W_k"], args["W_v"], args["W_o"], args["h"],
                                         **kwargs)


# --- against PyTorch ------------------------------------------------------------------------------


@pytest.mark.parametrize("d, h, N", [(4, 1, 5), (8, 2, 6), (12, 3, 10), (80, 2, 7), (6, 6, 3)])
def test_fused_equals_torch_multihead_attention(torch, d, h, N):
    mha = torch.nn.MultiheadAttention(d, h, bias=False, batch_first=True, dtype=torch.float64)
    W_q, W_k, W_v = heads.split_in_proj(mha.in_proj_weight.detach().numpy())  # each (d, d), fused over heads
    W_o = mha.out_proj.weight.detach().numpy()  # (d, h*d_k)
    I = np.random.default_rng(N).normal(size=(d, N))
    O, A_primes = heads.fused_multi_head_attention(I, W_q, W_k, W_v, W_o, h, scale=1 / np.sqrt(d // h))
    X = torch.from_numpy(I.T.copy())[None]  # (1, N, d): torch keeps vectors as rows
    out, weights = mha(X, X, X, need_weights=True, average_attn_weights=False)
    np.testing.assert_allclose(out[0].detach().numpy().T, O, rtol=0, atol=1e-10)
    np.testing.assert_allclose(weights[0].detach().numpy().transpose(0, 2, 1), A_primes, rtol=0, atol=1e-10)
    if 1 < h < d:  # the interleaved reading of torch's weights is wrong
        O_wrong, _ = heads.fused_multi_head_attention(I, W_q, W_k, W_v, W_o, h, scale=1 / np.sqrt(d // h),
                                                      split="interleaved")
        assert np.abs(O_wrong - O).max() > 1e-6


@pytest.mark.parametrize("d, h, bias", [(80, 2, True), (80, 2, False), (12, 3, True), (512, 8, True)])
def test_parameter_count_equals_torch(torch, d, h, bias):
    mha = torch.nn.MultiheadAttention(d, h, bias=bias)
    assert sum(p.numel() for p in mha.parameters()) == heads.parameter_count(d, h, bias=bias)
