"""attn: self-attention in the notation of Hung-yi Lee's ML 2021 lecture.

Vectors are columns. A sequence a^1 ... a^N of d-dimensional vectors is the
matrix ``I`` of shape (d, N); Q = W_q I, K = W_k I, V = W_v I; A = K^T Q;
A' (``A_prime``) is the softmax of each column of A; O = V A'.
``A_prime[j, i]`` is how much query i attends to key j.

The public surface is what ``__all__`` lists: the functions of :mod:`attn.core` and the four
ways of computing attention of :mod:`attn.efficient`, and every submodule that needs only
numpy, one per chapter's subject (``attn.positional.sinusoidal`` works after ``import attn``).
Importing ``attn`` needs only numpy. Plotting lives in :mod:`attn.plot` and the chapters'
schematics in :mod:`attn.diagrams`, which import matplotlib and are imported by name.
"""

from . import (
    applications,
    backprop,
    classifiers,
    compare,
    core,
    cost,
    dependencies,
    efficient,
    heads,
    inputs,
    linear_attention,
    loop,
    pooling,
    positional,
    rows,
    scaling,
    speakers,
    speech,
    taggers,
    tagging_data,
    train,
    window,
)
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
from .efficient import chunked_attention, matrix_attention, streaming_attention, truncated_attention

__version__ = "0.1.0"

__all__ = [
    # attn.core
    "additive_relevance",
    "attention_scores",
    "band_mask",
    "causal_mask",
    "dot_product_relevance",
    "key_padding_mask",
    "multi_head_attention",
    "self_attention",
    "self_attention_loop",
    "softmax",
    # attn.efficient: one result, four costs
    "chunked_attention",
    "matrix_attention",
    "streaming_attention",
    "truncated_attention",
    # the submodules, by subject
    "applications",
    "backprop",
    "classifiers",
    "compare",
    "core",
    "cost",
    "dependencies",
    "efficient",
    "heads",
    "inputs",
    "linear_attention",
    "loop",
    "pooling",
    "positional",
    "rows",
    "scaling",
    "speakers",
    "speech",
    "taggers",
    "tagging_data",
    "train",
    "window",
]
