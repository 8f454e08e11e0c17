"""One dtype rule for every public numerical function of attn: float32 in, float32 out; float64 in, float64 out.

The result's dtype is ``np.result_type`` of the float inputs, as numpy's own matrix product gives it, so a float32
sibling and its float64 twin never disagree by dtype while their docstrings say "equal to".
"""

import numpy as np
import pytest

import attn
from attn import applications, compare, efficient, heads, positional, rows, window

d, d_k, d_v, N, h = 4, 2, 3, 6, 2


def arrays(dtype, seed=0):
    r = np.random.default_rng(seed)
    I = r.normal(size=(d, N)).astype(dtype)
    W_q, W_k, W_v = (r.normal(size=s).astype(dtype) for s in ((d_k, d), (d_k, d), (d_v, d)))
    Q, K, V = (r.normal(size=s).astype(dtype) for s in ((d_k, N), (d_k, N), (d_v, N)))
    return I, W_q, W_k, W_v, Q, K, V


# name -> function(I, W_q, W_k, W_v, Q, K, V, dtype) returning the outputs whose dtype is checked
CALLS = {
    "softmax": lambda I, q, k, v, Q, K, V, t: [attn.softmax(I)],
    "attention_scores": lambda I, q, k, v, Q, K, V, t: [attn.attention_scores(Q, K)],
    "self_attention": lambda I, q, k, v, Q, K, V, t: attn.self_attention(I, q, k, v),
    "self_attention_loop": lambda I, q, k, v, Q, K, V, t: attn.self_attention_loop(I, q, k, v),
    "multi_head_attention": lambda I, q, k, v, Q, K, V, t: attn.multi_head_attention(
        I, np.stack([q, q]), np.stack([k, k]), np.stack([v, v]), np.ones((2, 2 * d_v), t)),
    "fused_multi_head_attention": lambda I, q, k, v, Q, K, V, t: heads.fused_multi_head_attention(
        I, np.vstack([q, q]), np.vstack([k, k]), np.vstack([v, v]), np.ones((2, 2 * d_v), t), h),
    "row_form_attention": lambda I, q, k, v, Q, K, V, t: rows.row_form_attention(I.T, q, k, v),
    "relative_self_attention": lambda I, q, k, v, Q, K, V, t: positional.relative_self_attention(
        I, q, k, v, np.zeros(3, t)),
    "add_positions": lambda I, q, k, v, Q, K, V, t: [positional.add_positions(I, I)],
    "truncated_self_attention_loop": lambda I, q, k, v, Q, K, V, t: applications.truncated_self_attention_loop(
        I, q, k, v, 1)[:2],
    "graph_attention": lambda I, q, k, v, Q, K, V, t: applications.graph_attention(I, q, k, v, np.eye(N, dtype=bool)),
    "conv2d": lambda I, q, k, v, Q, K, V, t: [compare.conv2d(I.reshape(2, 3, 4), np.ones((2, 2, 3, 3), t))],
    "conv_as_attention": lambda I, q, k, v, Q, K, V, t: compare.conv_as_attention(
        I.reshape(2, 3, 4), np.ones((2, 2, 3, 3), t)),
    "rnn": lambda I, q, k, v, Q, K, V, t: [compare.rnn(I, np.eye(3, dtype=t), np.ones((3, d), t))],
    "linear_attention": lambda I, q, k, v, Q, K, V, t: compare.linear_attention(Q, K, V, causal=True),
    "linear_attention_recurrent": lambda I, q, k, v, Q, K, V, t: compare.linear_attention_recurrent(Q, K, V),
    "matrix_attention": lambda I, q, k, v, Q, K, V, t: [efficient.matrix_attention(Q, K, V)],
    "chunked_attention": lambda I, q, k, v, Q, K, V, t: [efficient.chunked_attention(Q, K, V, block=4)],
    "streaming_attention": lambda I, q, k, v, Q, K, V, t: [efficient.streaming_attention(Q, K, V, block=4,
                                                                                       key_block=4)],
    "truncated_attention": lambda I, q, k, v, Q, K, V, t: [efficient.truncated_attention(Q, K, V, width=1)],
    "per_vector_fc": lambda I, q, k, v, Q, K, V, t: [window.per_vector_fc(I, q)],
    "window_fc": lambda I, q, k, v, Q, K, V, t: [window.window_fc(I, np.ones((2, 3 * d), t), half_width=1)],
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_float_inputs_keep_their_precision(name, dtype):
    outputs = CALLS[name](*arrays(dtype), dtype)
    kinds = [np.asarray(x).dtype for x in outputs if isinstance(x, np.ndarray)]
    assert kinds and all(k == dtype for k in kinds), f"{name}: {dtype.__name__} inputs gave {kinds}"


@pytest.mark.parametrize("name", ["self_attention", "truncated_self_attention_loop", "rnn",
                                  "linear_attention_recurrent", "conv_as_attention"])
def test_mixed_precision_gives_the_wider_type(name):
    I, W_q, W_k, W_v, Q, K, V = arrays(np.float32)
    outputs = CALLS[name](I, W_q.astype(np.float64), W_k, W_v, Q, K, V.astype(np.float64), np.float64)
    assert all(np.asarray(x).dtype == np.float64 for x in outputs if isinstance(x, np.ndarray)), name
