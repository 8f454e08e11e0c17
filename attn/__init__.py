"""attn: self-attention in the notation of Hung-yi Lee's ML 2021 lecture.

Vectors are columns. A sequence a^1 ... a^N of d-dimensional vectors is the
matrix ``I`` of shape (d, N); Q = W_q I, K = W_k I, V = W_v I; A = K^T Q;
A' (``A_prime``) is the softmax of each column of A; O = V A'.
``A_prime[j, i]`` is how much query i attends to key j.

Importing ``attn`` needs only numpy. Plotting lives in :mod:`attn.plot`, which
imports matplotlib.
"""

from .core import (
    additive_relevance,
    attention_scores,
    band_mask,
    causal_mask,
    dot_product_relevance,
    key_padding_mask,
    multi_head_attention,
    self_attention,
    self_attention_loop,
    softmax,
)
from .efficient import chunked_attention, streaming_attention
from . import applications, compare, positional

__version__ = "0.1.0"

__all__ = [
    "additive_relevance",
    "attention_scores",
    "band_mask",
    "causal_mask",
    "chunked_attention",
    "dot_product_relevance",
    "key_padding_mask",
    "multi_head_attention",
    "self_attention",
    "self_attention_loop",
    "softmax",
    "streaming_attention",
]
