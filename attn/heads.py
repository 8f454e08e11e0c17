"""Multi-head attention as frameworks store it: fused projections split into heads.

Lecture notation, columns (part 下, slides 26-28). Head m has its own W_q[m], W_k[m]
(d_k, d) and W_v[m] (d_v, d); :func:`attn.multi_head_attention` takes them as stacks
of shape (h, d_k, d). A framework keeps the heads of one projection in a single
*fused* matrix of shape (h*d_k, d), head 1's rows first, then head 2's, and so on::

    W_q_fused = [W_q[0]; W_q[1]; ...; W_q[h-1]]        (h*d_k, d)
    Q_all = W_q_fused I                                 (h*d_k, N)
    head m's queries = rows m*d_k ... (m+1)*d_k - 1 of Q_all

so one matrix product projects every head at once and a reshape splits them.
Reading the rows in the other factor order, (d_k, h) instead of (h, d_k), is a
common slip that raises no error: :func:`split_heads_interleaved` makes it on
purpose so the book can show the wrong numbers it gives.

Also here: the parameter count of a multi-head layer, the per-head matrix of the
lecture's two-step projection, and the two-part toy sentence of chapter 5.
"""

import numpy as np

from ._checks import as_array, check_count, check_mask, check_positive_length, check_projection, check_scale
from .core import softmax

SPLITS = ("blocks", "interleaved")


def _check_h(h):
    return check_count("h (the number of heads)", h, 1)


def _check_divisible(name, X, h):
    if X.shape[0] % h != 0:
        raise ValueError(
            f"{name} has shape {X.shape}: its {X.shape[0]} rows cannot be split into h = {h} heads of equal size"
        )
    return X.shape[0] // h


def fuse_heads(W):
    """Stack per-head matrices into one fused matrix, head 1's rows first.

    Parameters
    ----------
    W : (h, d_k, d) ndarray
        W[m] is head m's projection.

    Returns
    -------
    (h*d_k, d) ndarray
        Rows m*d_k ... (m+1)*d_k - 1 are W[m].

    Examples
    --------
    >>> fuse_heads(np.arange(8.0).reshape(2, 2, 2)).shape
    (4, 2)
    """
    W = as_array("W", W, ndim=3)
    h, d_k, d = W.shape
    return W.reshape(h * d_k, d)


def split_heads(X, h):
    """Split a fused matrix into h heads of consecutive rows (the framework layout).

    Parameters
    ----------
    X : (h*d_k, n) ndarray
        A fused projection W (n = d) or its product with I, Q_all = W I (n = N).
    h : int
        The number of heads; it must divide the number of rows.

    Returns
    -------
    (h, d_k, n) ndarray
        Head m is rows m*d_k ... (m+1)*d_k - 1 of X. The inverse of :func:`fuse_heads`.

    Examples
    --------
    >>> split_heads(np.arange(4.0)[:, None], 2)[:, :, 0]
    array([[0., 1.],
           [2., 3.]])
    """
    h = _check_h(h)
    X = as_array("X", X, ndim=2)
    d_k = _check_divisible("X", X, h)
    return X.reshape(h, d_k, X.shape[1])  # rows factor as (head, feature)


def split_heads_interleaved(X, h):
    """The WRONG split, for demonstration: rows read as (feature, head) instead of (head, feature).

    Parameters
    ----------
    X : (h*d_k, n) ndarray
    h : int

    Returns
    -------
    (h, d_k, n) ndarray
        "Head" m is rows m, m + h, m + 2h, ... of X. Same shape as :func:`split_heads`
        and no error, but for h > 1 and d_k > 1 the heads hold other rows.

    Examples
    --------
    >>> split_heads_interleaved(np.arange(4.0)[:, None], 2)[:, :, 0]
    array([[0., 2.],
           [1., 3.]])
    """
    h = _check_h(h)
    X = as_array("X", X, ndim=2)
    d_k = _check_divisible("X", X, h)
    return X.reshape(d_k, h, X.shape[1]).transpose(1, 0, 2)  # rows factor as (feature, head)


def merge_heads(B, *, split="blocks"):
    """Stack head outputs back into one matrix: the inverse of a split.

    Parameters
    ----------
    B : (h, d_v, N) ndarray
        B[m] holds head m's outputs b^{1,m} ... b^{N,m} as columns.
    split : {"blocks", "interleaved"}
        The layout to undo: "blocks" inverts :func:`split_heads`, "interleaved"
        inverts :func:`split_heads_interleaved`.

    Returns
    -------
    (h*d_v, N) ndarray
        Column i is [b^{i,1}; ...; b^{i,h}] (for "blocks"), ready for W^O.
    """
    B = as_array("B", B, ndim=3)
    _check_split(split)
    h, d_v, N = B.shape
    if split == "interleaved":
        return B.transpose(1, 0, 2).reshape(h * d_v, N)
    return B.reshape(h * d_v, N)


def _check_split(split):
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")


def fused_multi_head_attention(I, W_q, W_k, W_v, W_o, h, *, scale=1.0, mask=None, split="blocks"):
    """Multi-head self-attention from fused projections, all heads in one product each.

    Parameters
    ----------
    I : (d, N) ndarray
        The input sequence; column i is a^i.
    W_q, W_k : (h*d_k, d) ndarray
        Fused query and key projections (head m's rows form one block).
    W_v : (h*d_v, d) ndarray
        Fused value projection.
    W_o : (d_out, h*d_v) ndarray
        The output projection W^O.
    h : int
        The number of heads.
    scale : float
        Multiplies every score (1 in the lecture, 1/sqrt(d_k) in the Transformer).
    mask : (N, N) bool ndarray, optional
        mask[j, i] is True where query i may attend to key j (every head).
    split : {"blocks", "interleaved"}
        "blocks" is the correct framework layout. "interleaved" reads the rows in
        the wrong factor order (and merges the outputs back the same wrong way).

    Returns
    -------
    O : (d_out, N) ndarray
        Column i is b^i.
    A_primes : (h, N, N) ndarray
        A_primes[m, j, i] is how much query i attends to key j in head m.

    Notes
    -----
    With split="blocks" this equals :func:`attn.multi_head_attention` called with
    ``split_heads(W_q, h)``, ``split_heads(W_k, h)``, ``split_heads(W_v, h)``.
    """
    h = _check_h(h)
    _check_split(split)
    I, W_q, W_k, W_v, W_o = _check_fused(I, W_q, W_k, W_v, W_o, h)
    scale = check_scale(scale)
    cut = split_heads if split == "blocks" else split_heads_interleaved
    Q = cut(W_q @ I, h)  # (h*d_k, d) x (d, N) -> (h*d_k, N) -> (h, d_k, N)
    K = cut(W_k @ I, h)
    V = cut(W_v @ I, h)  # (h, d_v, N)
    A = scale * (K.transpose(0, 2, 1) @ Q)  # (h, N, d_k) x (h, d_k, N) -> (h, N, N)
    if mask is not None:
        A = np.where(check_mask(mask, I.shape[1]), A, -np.inf)
    A_primes = softmax(A, axis=1)  # each head's columns (the keys axis) sum to 1
    B = merge_heads(V @ A_primes, split=split)  # (h, d_v, N) x (h, N, N) -> (h, d_v, N) -> (h*d_v, N)
    return W_o @ B, A_primes  # (d_out, h*d_v) x (h*d_v, N) -> (d_out, N)


def _check_fused(I, W_q, W_k, W_v, W_o, h):
    I = as_array("I", I, ndim=2)
    check_positive_length("I", I, axis=1)
    if I.shape[0] == 0:
        raise ValueError(f"I has shape {I.shape}: each vector needs at least one entry (d > 0)")
    W_q, W_k, W_v = (as_array(n, W, ndim=2) for n, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)))
    W_o = as_array("W_o", W_o, ndim=2)
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        check_projection(name, W, I.shape[0], I.shape)
        _check_divisible(name, W, h)
    if W_q.shape[0] != W_k.shape[0]:
        raise ValueError(
            f"W_q has shape {W_q.shape} and W_k has shape {W_k.shape}: every head's queries and keys "
            f"need the same size d_k, so the fused matrices need the same number of rows"
        )
    if W_o.shape[1] != W_v.shape[0]:
        raise ValueError(
            f"W_o has shape {W_o.shape} but W_v has shape {W_v.shape}: W_o needs h*d_v = {W_v.shape[0]} columns, "
            f"one per stacked value entry"
        )
    return I, W_q, W_k, W_v, W_o


def split_in_proj(W_in):
    """Cut PyTorch's ``in_proj_weight`` into the fused W_q, W_k, W_v.

    Parameters
    ----------
    W_in : (3*h*d_k, d) ndarray
        ``torch.nn.MultiheadAttention.in_proj_weight``: the fused W_q rows, then
        W_k's, then W_v's (torch ties d_k = d_v = d/h).

    Returns
    -------
    W_q, W_k, W_v : (h*d_k, d) ndarray
        Each still fused over heads; split each with :func:`split_heads`.
    """
    W_in = as_array("W_in", W_in, ndim=2)
    if W_in.shape[0] == 0 or W_in.shape[0] % 3 != 0:
        raise ValueError(f"W_in has shape {W_in.shape}: it needs 3 equal blocks of rows (W_q, W_k, W_v)")
    return tuple(np.split(W_in, 3, axis=0))


def head_projection(W_head, W):
    """The lecture's two-step projection W^{q,m} (W^q a) as one matrix per head.

    Parameters
    ----------
    W_head : (h, d_k, d_q) ndarray
        W_head[m] is W^{q,m}, which turns q^i into q^{i,m}.
    W : (d_q, d) ndarray
        W^q, which turns a^i into q^i.

    Returns
    -------
    (h, d_k, d) ndarray
        Entry m is W^{q,m} W^q, so q^{i,m} = (W^{q,m} W^q) a^i.
    """
    W_head = as_array("W_head", W_head, ndim=3)
    W = as_array("W", W, ndim=2)
    if W_head.shape[2] != W.shape[0]:
        raise ValueError(
            f"W_head has shape {W_head.shape} and W has shape {W.shape}: W_head[m] @ W needs "
            f"W_head.shape[2] == W.shape[0] ({W_head.shape[2]} != {W.shape[0]})"
        )
    return W_head @ W  # (h, d_k, d_q) x (d_q, d) -> (h, d_k, d)


def parameter_breakdown(d, h, d_k=None, d_v=None, d_out=None, *, bias=False):
    """How many numbers each matrix of a multi-head self-attention layer holds.

    Parameters
    ----------
    d : int
        Size of each input vector a^i.
    h : int
        Number of heads.
    d_k, d_v : int, optional
        Per-head query/key and value sizes; default d // h (h must divide d then).
    d_out : int, optional
        Size of each output b^i; default d.
    bias : bool
        Count the biases PyTorch adds by default (one per row of W_q, W_k, W_v, W_o).

    Returns
    -------
    dict
        One int per matrix, under "W_q", "W_k", "W_v" and "W_o" (its bias included when asked).
        :func:`parameter_count` is their sum.

    Notes
    -----
    W_q, W_k: h*d_k*d each; W_v: h*d_v*d; W_o: d_out*h*d_v. With d_k = d_v = d/h and
    d_out = d each is d^2 whatever h is.

    Examples
    --------
    >>> parameter_breakdown(80, 2)
    {'W_q': 6400, 'W_k': 6400, 'W_v': 6400, 'W_o': 6400}
    """
    d, h = check_count("d", d, 1), _check_h(h)
    if (d_k is None or d_v is None) and d % h != 0:
        raise ValueError(f"h = {h} does not divide d = {d}: give d_k and d_v explicitly")
    d_k = d // h if d_k is None else check_count("d_k", d_k, 1)
    d_v = d // h if d_v is None else check_count("d_v", d_v, 1)
    d_out = d if d_out is None else check_count("d_out", d_out, 1)
    extra = 1 if bias else 0
    return {
        "W_q": h * d_k * (d + extra),
        "W_k": h * d_k * (d + extra),
        "W_v": h * d_v * (d + extra),
        "W_o": d_out * (h * d_v + extra),
    }


def parameter_count(d, h, d_k=None, d_v=None, d_out=None, *, bias=False):
    """How many numbers a multi-head self-attention layer learns, in all.

    Parameters
    ----------
    d, h, d_k, d_v, d_out, bias
        As in :func:`parameter_breakdown`.

    Returns
    -------
    int
        The sum of :func:`parameter_breakdown` over W_q, W_k, W_v and W_o. With d_k = d_v = d/h
        and d_out = d it is 4 d^2 whatever h is (4 d^2 + 4 d with biases).

    Examples
    --------
    >>> parameter_count(80, 2), parameter_count(80, 8)
    (25600, 25600)
    """
    return sum(parameter_breakdown(d, h, d_k, d_v, d_out, bias=bias).values())


TOY_WORDS = ("cat", "purrs", "sun", "shines", "rain", "falls")


def two_part_inputs():
    """The toy sentence of chapter 5: each vector has a "meaning" part and a "grammar" part.

    Returns
    -------
    I : (5, 6) ndarray
        Columns are the words "cat purrs sun shines rain falls". Rows 0-2 are the
        meaning part (one-hot topic: animal, sky, weather), rows 3-4 the grammar
        part (one-hot role: noun, verb).
    words : tuple of str
        The six words, in column order.
    """
    topic = np.repeat(np.eye(3), 2, axis=1)  # (3, 6): two words per topic
    role = np.tile(np.eye(2), 3)  # (2, 6): noun, verb, noun, verb, ...
    return np.vstack([topic, role]), TOY_WORDS


def toy_heads(strength=2.5):
    """Two hand-made heads for :func:`two_part_inputs`, each reading one part.

    Parameters
    ----------
    strength : float
        Entries of the projections; a score is strength**2 where a head finds a
        match, 0 elsewhere, so larger means sharper attention.

    Returns
    -------
    W_q, W_k : (2, 3, 5) ndarray
        Head 0 ("meaning") reads only the topic rows, with W_q[0] = W_k[0]: a query
        matches keys of its own topic. Head 1 ("grammar") reads only the role rows;
        its W_q swaps noun and verb, so a noun's query matches verb keys and a verb's
        query matches noun keys. (Head 1 uses 2 of its 3 rows; the last is zero.)
    """
    s = check_scale(strength)
    W_q = np.zeros((2, 3, 5))
    W_k = np.zeros((2, 3, 5))
    W_q[0, :, 0:3] = s * np.eye(3)  # meaning head: topic -> topic
    W_k[0, :, 0:3] = s * np.eye(3)
    W_q[1, 0:2, 3:5] = s * np.array([[0.0, 1.0], [1.0, 0.0]])  # grammar head: noun <-> verb
    W_k[1, 0:2, 3:5] = s * np.eye(2)
    return W_q, W_k
