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

from ._checks import check_count


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
