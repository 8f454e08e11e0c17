"""Positional encoding: giving self-attention a sense of order.

Self-attention as ``attn.core`` computes it treats its input as a set: permute
the columns of ``I`` and the outputs are permuted the same way. A positional
encoding (位置編碼) gives each position i a vector e^i that is added to a^i
before attention (lecture part 下, slide 29)::

    I_with_positions = I + E      E[:, i] = e^(i+1), the vector of position i + 1

Column p of every (d, N) array here (p = 0 .. N-1 in code) belongs to position
p + 1 in the text.
"""

import numpy as np

from ._checks import (as_array, check_count, check_positive_length, check_positive_number, check_scale,
                      check_sequence, check_single_head)
from .core import softmax


def _check_even_dimension(d):
    """Return ``d`` as an int, or raise ValueError if it is not an even integer > 0."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0 or d % 2:
        raise ValueError(f"d must be an even integer > 0 (sine and cosine come in pairs), got {d!r}")
    return int(d)


def frequencies(d):
    """The angular frequency of each sine/cosine pair of the sinusoidal encoding.

    Parameters
    ----------
    d : int
        The size of each encoding vector; even and positive.

    Returns
    -------
    omega : (d // 2,) ndarray
        ``omega[m] = 1 / 10000^(2m/d)``, from 1 (m = 0) down towards 1/10000.
    """
    d = _check_even_dimension(d)
    return 1.0 / 10000.0 ** (np.arange(0, d, 2) / d)


def sinusoidal(d, N):
    """The sinusoidal positional encodings of Vaswani et al. (2017), one column per position.

    Parameters
    ----------
    d : int
        The size of each encoding vector (the size of the a^i it is added to);
        even and positive.
    N : int
        The number of positions, at least 1.

    Returns
    -------
    E : (d, N) ndarray
        Column p (p = 0 .. N-1) is e^(p+1), the encoding of position p + 1 in
        the text: ``E[2m, p] = sin(p / 10000^(2m/d))`` and
        ``E[2m+1, p] = cos(p / 10000^(2m/d))`` for m = 0 .. d/2 - 1.

    Raises
    ------
    ValueError
        If ``d`` is not an even integer > 0 or ``N`` is not an integer >= 1.

    Notes
    -----
    Every pair of rows (2m, 2m+1) is a point going round the unit circle at
    angular speed omega_m = 1 / 10000^(2m/d), so each column has norm sqrt(d/2),
    e^i . e^j depends only on i - j, and a fixed rotation (:func:`shift_matrix`)
    moves every column k positions on.

    Examples
    --------
    >>> sinusoidal(4, 2)
    array([[0.        , 0.84147098],
           [1.        , 0.54030231],
           [0.        , 0.00999983],
           [1.        , 0.99995   ]])
    """
    d = _check_even_dimension(d)
    N = check_count("N", N, 1)
    angles = np.outer(frequencies(d), np.arange(N))  # (d/2, 1) x (1, N) -> (d/2, N)
    E = np.empty((d, N))
    E[0::2] = np.sin(angles)
    E[1::2] = np.cos(angles)
    return E


def shift_matrix(d, k):
    """The rotation R_k that moves every sinusoidal encoding k positions on.

    Parameters
    ----------
    d : int
        The size of the encoding vectors; even and positive.
    k : int
        The shift, in positions; negative values shift back.

    Returns
    -------
    R_k : (d, d) ndarray
        Block diagonal with one 2 x 2 rotation per sine/cosine pair,
        ``[[cos(k w_m), sin(k w_m)], [-sin(k w_m), cos(k w_m)]]`` with
        ``w_m = frequencies(d)[m]``, so that ``R_k @ E[:, p] == E[:, p + k]`` for
        ``E = sinusoidal(d, N)`` and every p. It does not depend on p.

    Notes
    -----
    The angle-sum formulas give sin((p + k) w) = sin(p w) cos(k w) + cos(p w) sin(k w)
    and cos((p + k) w) = cos(p w) cos(k w) - sin(p w) sin(k w): a rotation of the
    point (sin(p w), cos(p w)) by the angle k w, whatever p is. R_k is orthogonal,
    R_{-k} = R_k^T and R_j R_k = R_{j+k}.

    Examples
    --------
    >>> E = sinusoidal(6, 5)
    >>> bool(np.allclose(shift_matrix(6, 3) @ E[:, 1], E[:, 4]))
    True
    """
    d = _check_even_dimension(d)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"k must be an integer number of positions, got {k!r}")
    angle = k * frequencies(d)
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros((d, d))
    even, odd = np.arange(0, d, 2), np.arange(1, d, 2)
    R[even, even], R[even, odd] = c, s
    R[odd, even], R[odd, odd] = -s, c
    return R


def learned_table(d, n_positions, *, seed=0, std=0.02):
    """The starting point of a learned positional encoding: one free vector per position.

    Parameters
    ----------
    d : int
        The size of each encoding vector, at least 1.
    n_positions : int
        The number of positions the table holds, at least 1: the longest
        sequence it can ever encode.
    seed : int
        Seed of ``np.random.default_rng``.
    std : float
        Standard deviation of the normal initialisation (BERT's initialiser uses 0.02).

    Returns
    -------
    E : (d, n_positions) ndarray
        Column p is the (still untrained) e^(p+1); training adjusts every entry
        like any other weight. There is no column for position n_positions + 1.

    Examples
    --------
    >>> learned_table(4, 3).shape
    (4, 3)
    """
    d = check_count("d", d, 1)
    n_positions = check_count("n_positions", n_positions, 1)
    std = check_positive_number("std", std)
    return std * np.random.default_rng(seed).normal(size=(d, n_positions))


def add_positions(I, E):
    """Add the positional encodings to a sequence: a^i + e^i for every position i.

    Parameters
    ----------
    I : (d, N) ndarray
        The sequence; column i is a^(i+1).
    E : (d, n_positions) ndarray
        A table of encodings with n_positions >= N (from :func:`sinusoidal`,
        :func:`learned_table`, or trained). Only its first N columns are used.

    Returns
    -------
    (d, N) ndarray
        ``I + E[:, :N]``.

    Raises
    ------
    ValueError
        If the sizes d differ, or if the table is shorter than the sequence: a
        table of n_positions columns has no encoding for position n_positions + 1.
    """
    I = check_sequence(I)
    E = as_array("E", E, ndim=2)
    d, N = I.shape
    if E.shape[0] != d:
        raise ValueError(f"E has shape {E.shape} but I has shape {I.shape}: e^i and a^i must both have size d = {d}")
    if E.shape[1] < N:
        raise ValueError(
            f"E has shape {E.shape}: it encodes positions 1 to {E.shape[1]} only, "
            f"but I has shape {I.shape} and needs positions up to {N}"
        )
    return I + E[:, :N]


def word_and_position(I_words, d_pos):
    """Words and sinusoidal positions in separate rows: a^i + e^i with a^i and e^i in different slots.

    Parameters
    ----------
    I_words : (n, N) ndarray
        The words, e.g. one-hot vectors; column i is word i + 1.
    d_pos : int
        The size of the sinusoidal encodings; even and positive.

    Returns
    -------
    (n + d_pos, N) ndarray
        The first n rows are ``I_words``, the last d_pos rows are
        ``sinusoidal(d_pos, N)``. It equals a^i + e^i with a^i = [word i; 0] and
        e^i = [0; sinusoidal encoding of position i]: adding vectors that live
        in different rows stacks them, so neither hides the other.

    Examples
    --------
    >>> word_and_position(np.array([[1.0, 0.0], [0.0, 1.0]]), 2)
    array([[1.        , 0.        ],
           [0.        , 1.        ],
           [0.        , 0.84147098],
           [1.        , 0.54030231]])
    """
    I_words = as_array("I_words", I_words, ndim=2)
    check_positive_length("I_words", I_words, axis=1)
    return np.vstack([I_words, sinusoidal(d_pos, I_words.shape[1])])


def relative_bias(beta, N):
    """Score bias of relative positions: one learned number per offset j - i.

    Parameters
    ----------
    beta : (2r + 1,) ndarray
        ``beta[r + o]`` is the bias for key j = i + o of query i, for offsets
        o = -r .. r. Offsets farther than r share the value of offset -r or r
        (clipping, as in Shaw et al. 2018).
    N : int
        Sequence length, at least 1. Any N works: the table is indexed by
        offsets, not positions.

    Returns
    -------
    B : (N, N) ndarray
        ``B[j, i] = beta[r + clip(j - i, -r, r)]`` (key rows, query columns, like A).
        B is Toeplitz: it depends on j - i only.

    Examples
    --------
    >>> relative_bias([1.0, 0.0, 0.0], 3)   # r = 1: every earlier key gets 1 (offset -2 is clipped to -1)
    array([[0., 1., 1.],
           [0., 0., 1.],
           [0., 0., 0.]])
    """
    beta = as_array("beta", beta, ndim=1)
    if beta.shape[0] % 2 == 0:
        raise ValueError(f"beta has shape {beta.shape}: it needs an odd length 2r + 1, one entry per offset -r .. r")
    N = check_count("N", N, 1)
    r = beta.shape[0] // 2
    j, i = np.indices((N, N))
    return beta[r + np.clip(j - i, -r, r)]


def relative_self_attention(I, W_q, W_k, W_v, beta, *, scale=1.0):
    """Self-attention whose scores get a learned bias for each offset j - i.

    Parameters
    ----------
    I : (d, N) ndarray
        The input sequence; column i is a^(i+1). No positional encoding is added.
    W_q, W_k : (d_k, d) ndarray
        Query and key projections.
    W_v : (d_v, d) ndarray
        Value projection.
    beta : (2r + 1,) ndarray
        One bias per offset -r .. r (see :func:`relative_bias`).
    scale : float
        Multiplies K^T Q before the bias is added (1.0: the lecture's dot product).

    Returns
    -------
    O : (d_v, N) ndarray
        The outputs b^1 ... b^N.
    A_prime : (N, N) ndarray
        ``A_prime[j, i]`` is how much query i attends to key j; columns sum to 1.

    Notes
    -----
    A = scale K^T Q + B with ``B = relative_bias(beta, N)``, A' = softmax of each column,
    O = V A'. Shaw et al. (2018) learn a vector per clipped offset and add its dot
    product with the query to the score; one number per offset (per head, with
    logarithmic buckets) is the form of T5 (Raffel et al. 2020).
    """
    I, W_q, W_k, W_v = check_single_head(I, W_q, W_k, W_v)
    scale = check_scale(scale)
    B = relative_bias(beta, I.shape[1])
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A = scale * (K.T @ Q) + B  # (N, d_k) x (d_k, N) -> (N, N)
    A_prime = softmax(A, axis=0)
    return V @ A_prime, A_prime  # (d_v, N) x (N, N) -> (d_v, N)
