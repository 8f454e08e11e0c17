"""What attention costs, counted rather than timed: the bytes of its N x N matrices, the operations of its two
matrix products, and how many (query, key) pairs truncated self-attention keeps.

Chapter 9 reads these through :mod:`attn.efficient`, which re-exports them beside the methods they put a price on.
"""

import numpy as np

from ._checks import check_count


def attention_matrix_bytes(N, *, N_k=None, heads=1, dtype=np.float64):
    """Bytes that the attention matrices of the plain matrix form occupy.

    Parameters
    ----------
    N : int
        Number of queries N_q (and of keys, unless ``N_k`` is given).
    N_k : int, optional
        Number of keys, when it differs from the number of queries.
    heads : int
        How many heads (one N_k x N matrix each).
    dtype : numpy dtype
        The element type: 8 bytes for float64, 4 for float32.

    Returns
    -------
    int
        ``heads * N_k * N * itemsize``.

    Examples
    --------
    >>> attention_matrix_bytes(500)  # five seconds of speech, float64
    2000000
    """
    N = check_count("N", N, 1)
    N_k = N if N_k is None else check_count("N_k", N_k, 1)
    heads = check_count("heads", heads, 1)
    return heads * N_k * N * np.dtype(dtype).itemsize


def attention_flops(N, *, d_k, d_v, N_k=None, heads=1):
    """Floating-point operations of the two matrix products of attention.

    Parameters
    ----------
    N : int
        Number of queries (and of keys, unless ``N_k`` is given).
    d_k, d_v : int
        Sizes of a query/key vector and of a value vector.
    N_k : int, optional
        Number of keys.
    heads : int

    Returns
    -------
    int
        ``2 * heads * N * N_k * (d_k + d_v)``: K^T Q costs 2 d_k per score, V A' costs 2 d_v
        per score (one multiply and one add each). The softmax's exponentials are not counted.
    """
    N = check_count("N", N, 1)
    N_k = N if N_k is None else check_count("N_k", N_k, 1)
    d_k, d_v, heads = check_count("d_k", d_k, 1), check_count("d_v", d_v, 1), check_count("heads", heads, 1)
    return 2 * heads * N * N_k * (d_k + d_v)


def band_pairs(N, width):
    """How many (query, key) pairs truncated self-attention keeps.

    Parameters
    ----------
    N : int
        Sequence length.
    width : int
        Each query i sees the keys j with |i - j| <= width.

    Returns
    -------
    int
        The number of True entries of ``band_mask(N, width)``: N (2w + 1) - w (w + 1) with
        w = min(width, N - 1). For a fixed width it grows linearly with N, not as N^2.
    """
    N, width = check_count("N", N, 1), check_count("width", width, 0)
    w = min(width, N - 1)
    return N * (2 * w + 1) - w * (w + 1)
