"""Input checks shared by the public functions of :mod:`attn`.

Every public function validates its arguments here, at the boundary, so that a
wrong shape or value is reported as a :class:`ValueError` that names the
argument and its shape, never as a numpy broadcasting traceback deep inside a
matrix product.
"""

import numpy as np


def as_array(name, x, ndim=None, allow_neg_inf=False):
    """Return ``x`` as a float ndarray after checking it.

    Parameters
    ----------
    name : str
        The argument's name, used in error messages (e.g. ``"W_q"``).
    x : array_like
        The value to check. Integers and booleans become float64; float32
        and float64 keep their precision.
    ndim : int or None
        The number of axes ``x`` must have, or None for any.
    allow_neg_inf : bool
        Whether ``-inf`` entries are allowed (softmax logits that are masked).

    Returns
    -------
    ndarray
        A floating-point view or copy of ``x``.

    Raises
    ------
    ValueError
        If ``x`` is not numeric, is complex, has the wrong number of axes,
        or holds NaN or infinite entries.
    """
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged nested lists and the like
        raise ValueError(f"{name} is not a numeric array: {exc}") from None
    if arr.dtype.kind in "biu":
        arr = arr.astype(np.float64)
    elif arr.dtype.kind != "f":
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} axes, got shape {arr.shape}")
    # min and max carry NaN and infinities through: the entry-wise search (two masks the size of x) runs only then
    low, high = (arr.min(), arr.max()) if arr.size else (0.0, 0.0)
    if np.isnan(low) or np.isnan(high) or high == np.inf or (low == -np.inf and not allow_neg_inf):
        bad = np.isnan(arr) | (np.isinf(arr) if not allow_neg_inf else np.isposinf(arr))
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name} must be finite, but {name}[{where}] = {arr[where]}")
    return arr


def check_positive_length(name, arr, axis=-1):
    """Raise ValueError if ``arr`` has no entries along ``axis`` (e.g. N = 0)."""
    if arr.shape[axis] == 0:
        raise ValueError(f"{name} has shape {arr.shape}: the sequence must hold at least one vector (N > 0)")


def check_scale(scale):
    """Return ``scale`` as a float, or raise ValueError if it is not a finite real number."""
    try:
        value = float(scale)
    except (TypeError, ValueError):
        raise ValueError(f"scale must be a real number, got {scale!r}") from None
    if not np.isfinite(value):
        raise ValueError(f"scale must be finite, got {scale!r}")
    return value


def check_projection(name, W, d, I_shape):
    """Check that the projection ``W`` (rows, d) can multiply a sequence with d rows."""
    if W.shape[-1] != d:
        raise ValueError(
            f"{name} has shape {W.shape} but I has shape {I_shape}: "
            f"{name} needs {d} columns, one per row of I (W @ I needs W.shape[-1] == I.shape[0])"
        )


def check_mask(mask, N_k, N_q=None):
    """Return ``mask`` as a bool (N_k, N_q) array in which every query keeps a key.

    ``mask[j, i]`` says whether query i may attend to key j, as ``A_prime[j, i]`` is indexed. Without
    ``N_q`` the mask is square: self-attention, N_k = N_q = N.
    """
    mask = np.asarray(mask)
    if mask.dtype != bool:
        raise ValueError(f"mask must be a boolean array, got dtype {mask.dtype}")
    if N_q is None and mask.shape != (N_k, N_k):
        raise ValueError(f"mask has shape {mask.shape} but the sequence has N = {N_k}: it must be ({N_k}, {N_k})")
    if N_q is not None and mask.shape != (N_k, N_q):
        raise ValueError(f"mask has shape {mask.shape} but there are {N_k} keys and {N_q} queries: "
                         f"it must be ({N_k}, {N_q})")
    empty = ~mask.any(axis=0)
    if empty.any():
        i = int(np.argmax(empty))
        raise ValueError(f"mask column {i} is all False: query {i} would attend to no key")
    return mask


def check_sequence(I):
    """Return the sequence ``I`` as a float (d, N) array with d > 0 and N > 0."""
    I = as_array("I", I, ndim=2)
    check_positive_length("I", I, axis=1)
    if I.shape[0] == 0:
        raise ValueError(f"I has shape {I.shape}: each vector needs at least one entry (d > 0)")
    return I


def check_single_head(I, W_q, W_k, W_v):
    """Check one head's arguments: I (d, N), W_q and W_k (d_k, d), W_v (d_v, d); return them as float arrays."""
    I = check_sequence(I)
    W_q = as_array("W_q", W_q, ndim=2)
    W_k = as_array("W_k", W_k, ndim=2)
    W_v = as_array("W_v", W_v, ndim=2)
    d = I.shape[0]
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        check_projection(name, W, d, I.shape)
    if W_q.shape[0] != W_k.shape[0]:
        raise ValueError(
            f"W_q has shape {W_q.shape} and W_k has shape {W_k.shape}: queries and keys "
            f"must have the same size d_k to take their dot product ({W_q.shape[0]} != {W_k.shape[0]})"
        )
    return I, W_q, W_k, W_v


def check_count(name, value, minimum):
    """Return ``value`` as an int, or raise ValueError if it is not an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_qkv(Q, K, V):
    """Check queries, keys and values in column form, ``(..., d_k, N_q)``, ``(..., d_k, N_k)``, ``(..., d_v, N_k)``.

    Leading axes (heads, say) must agree. Returns Q, K and V as float arrays; their common dtype is
    ``np.result_type(Q, K, V)``.
    """
    Q, K, V = as_array("Q", Q), as_array("K", K), as_array("V", V)
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        if x.ndim < 2:
            raise ValueError(f"{name} must have at least 2 axes (d, N) in column form, got shape {x.shape}")
        if 0 in x.shape:
            raise ValueError(f"{name} has shape {x.shape}: every axis needs at least one entry (N > 0)")
    if not Q.shape[:-2] == K.shape[:-2] == V.shape[:-2]:
        raise ValueError(
            f"Q, K, V must share their leading (head) axes, got shapes Q {Q.shape}, K {K.shape}, V {V.shape}"
        )
    if Q.shape[-2] != K.shape[-2]:
        raise ValueError(
            f"Q has shape {Q.shape} and K has shape {K.shape}: queries and keys need the same size d_k "
            f"({Q.shape[-2]} != {K.shape[-2]})"
        )
    if K.shape[-1] != V.shape[-1]:
        raise ValueError(
            f"K has shape {K.shape} and V has shape {V.shape}: every key needs a value, so both need "
            f"the same number of columns N_k ({K.shape[-1]} != {V.shape[-1]})"
        )
    return Q, K, V


def check_positive_number(name, value):
    """Return ``value`` as a float, or raise ValueError if it is not a finite number > 0."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return value


def check_kernel_size(kernel_size):
    """Return ``kernel_size`` as an int, or raise ValueError if it is not an odd integer >= 1."""
    k = check_count("kernel_size", kernel_size, 1)
    if k % 2 == 0:
        raise ValueError(f"kernel_size must be odd (a centre pixel and r pixels on each side), got {k}")
    return k


def check_choice(name, value, options):
    """Return ``value``, or raise ValueError if it is not one of ``options``."""
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(repr(o) for o in options)}; got {value!r}")
    return value
