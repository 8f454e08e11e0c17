"""Self-attention on speech, images and graphs (lecture part 下, slides 31-35 and 40-41).

Each kind of input becomes a sequence ``I`` of shape (d, N), one column per frame, pixel
or node, and self-attention runs on it unchanged; only the mask of who may attend to whom
differs:

* speech: truncated self-attention keeps the band |i - j| <= width (``attn.core.band_mask``);
* images: every pixel is a vector of its channel values, columns in reading order;
* graphs: a node attends only along its edges (and, if chosen, to itself).

As everywhere in :mod:`attn`, ``A_prime[j, i]`` is how much query i attends to key j.
"""

import numpy as np

from . import core
from ._checks import as_array, check_count, check_scale, check_sequence, check_single_head
from .inputs import adjacency_from_edges

# --- speech -------------------------------------------------------------------------------------


def truncated_self_attention_loop(I, W_q, W_k, W_v, width, *, scale=1.0):
    """Truncated self-attention one query at a time, computing only the scores it keeps.

    Parameters
    ----------
    I : (d, L) ndarray
        The sequence, e.g. L speech frames as columns.
    W_q, W_k : (d_k, d) ndarray
    W_v : (d_v, d) ndarray
    width : int
        Query i looks at the keys j with |i - j| <= width (0 = only itself).
    scale : float
        Multiplies every score, as in :func:`attn.core.self_attention`.

    Returns
    -------
    O : (d_v, L) ndarray
        Column i is b^i = sum over the kept j of alpha'_{i,j} v^j.
    A_prime : (L, L) ndarray
        A_prime[j, i] = alpha'_{i,j}; exactly 0 outside the band. Each column sums to 1.
    n_scores : int
        How many dot products q^i . k^j were computed: L (2w + 1) - w (w + 1) with
        w = min(width, L - 1), linear in L for a fixed width (a full layer computes L^2).

    Notes
    -----
    Equal to ``self_attention(I, W_q, W_k, W_v, mask=band_mask(L, width))``, which
    computes all L^2 scores and then discards those outside the band; this loop never
    computes them, which is where the saving of truncated self-attention comes from.
    """
    I, W_q, W_k, W_v = check_single_head(I, W_q, W_k, W_v)
    width = check_count("width", width, 0)
    scale = check_scale(scale)
    L = I.shape[1]
    Q, K, V = W_q @ I, W_k @ I, W_v @ I  # (d_k, L), (d_k, L), (d_v, L)
    dtype = np.result_type(I, W_q, W_k, W_v)  # float32 in, float32 out, as self_attention
    O = np.zeros((V.shape[0], L), dtype=dtype)
    A_prime = np.zeros((L, L), dtype=dtype)
    n_scores = 0
    for i in range(L):
        lo, hi = max(0, i - width), min(L, i + width + 1)  # the keys j = lo ... hi - 1
        alpha = scale * (K[:, lo:hi].T @ Q[:, i])  # (hi - lo, d_k) x (d_k,) -> (hi - lo,)
        n_scores += hi - lo
        A_prime[lo:hi, i] = core.softmax(alpha)
        O[:, i] = V[:, lo:hi] @ A_prime[lo:hi, i]  # (d_v, hi - lo) x (hi - lo,) -> (d_v,)
    return O, A_prime, n_scores


# --- images -------------------------------------------------------------------------------------


def _check_image(image):
    image = as_array("image", image)
    if image.ndim != 3:
        raise ValueError(f"image must have shape (H, W, C): rows, columns, channels; got shape {image.shape}")
    if 0 in image.shape:
        raise ValueError(f"image has shape {image.shape}: it needs at least one pixel and one channel")
    return image


def image_to_sequence(image):
    """An image as a set of pixel vectors: one column per pixel, its channels as entries.

    Parameters
    ----------
    image : (H, W, C) ndarray
        Rows, columns and channels (C = 3 for red, green, blue), as ``plt.imread`` returns it.

    Returns
    -------
    I : (C, H * W) ndarray
        Column ``r * W + c`` is the pixel in row r and column c (reading order, from 0):
        a 5 x 10 image with 3 channels gives 50 vectors of dimension 3.

    Examples
    --------
    >>> image_to_sequence(np.arange(12.0).reshape(2, 2, 3))
    array([[ 0.,  3.,  6.,  9.],
           [ 1.,  4.,  7., 10.],
           [ 2.,  5.,  8., 11.]])
    """
    image = _check_image(image)
    H, W, C = image.shape
    return image.reshape(H * W, C).T  # (H*W, C) -> (C, H*W)


def sequence_to_image(I, H, W):
    """Put pixel columns back in their place: the inverse of :func:`image_to_sequence`.

    Parameters
    ----------
    I : (C, H * W) ndarray or (H * W,) ndarray
        Pixel vectors as columns, or one number per pixel (such as one query's row of
        attention weights, ``A_prime[:, i]``).
    H, W : int
        The image's rows and columns.

    Returns
    -------
    (H, W, C) ndarray or (H, W) ndarray
        Entry [r, c] is column (or entry) ``r * W + c`` of ``I``.
    """
    H, W = check_count("H", H, 1), check_count("W", W, 1)
    I = as_array("I", I)
    if I.ndim not in (1, 2) or I.shape[-1] != H * W:
        raise ValueError(
            f"I has shape {I.shape} but a {H} x {W} image needs shape (C, {H * W}) "
            f"or ({H * W},): one column per pixel"
        )
    if I.ndim == 1:
        return I.reshape(H, W)
    return I.T.reshape(H, W, I.shape[0])  # (H*W, C) -> (H, W, C)


def downsample(image, factor):
    """Shrink an image by averaging each ``factor`` x ``factor`` block of pixels into one.

    Parameters
    ----------
    image : (H, W, C) ndarray
        H and W must be multiples of ``factor`` (crop the image first).
    factor : int

    Returns
    -------
    (H // factor, W // factor, C) ndarray
        Entry [r, c] is the mean of the block of rows r*factor ... (r+1)*factor - 1 and
        columns c*factor ... (c+1)*factor - 1.
    """
    image = _check_image(image)
    factor = check_count("factor", factor, 1)
    H, W, C = image.shape
    if H % factor or W % factor:
        raise ValueError(
            f"image has shape {image.shape}: its height and width must be multiples of factor = {factor} "
            f"(crop it to ({H - H % factor}, {W - W % factor}, {C}) first)"
        )
    blocks = image.reshape(H // factor, factor, W // factor, factor, C)
    return blocks.mean(axis=(1, 3))


# --- graphs -------------------------------------------------------------------------------------

#: The graph of the lecture's slide 41, nodes counted from 1 as on the slide (undirected).
LECTURE_GRAPH_EDGES = ((1, 5), (1, 6), (1, 8), (2, 3), (3, 5), (3, 7), (4, 5), (6, 7))


def lecture_graph():
    """The adjacency matrix of the slide's 8-node graph (:data:`LECTURE_GRAPH_EDGES`).

    Returns
    -------
    (8, 8) ndarray
        Symmetric 0/1 matrix; entry [j, i] (from 0) is 1 when nodes j + 1 and i + 1 share an edge.
    """
    return adjacency_from_edges(8, [(u - 1, v - 1) for u, v in LECTURE_GRAPH_EDGES])


def _check_adjacency(adjacency):
    adjacency = as_array("adjacency", adjacency, ndim=2)
    if adjacency.shape[0] != adjacency.shape[1] or adjacency.shape[0] == 0:
        raise ValueError(f"adjacency must be a square (N, N) matrix with N > 0, got shape {adjacency.shape}")
    if np.any(adjacency < 0):
        raise ValueError("adjacency must be non-negative: nonzero entries mark edges")
    return adjacency


def graph_mask(adjacency, *, self_loops=True):
    """Who may attend to whom in graph attention: along the edges, and optionally to itself.

    Parameters
    ----------
    adjacency : (N, N) ndarray
        adjacency[j, i] != 0 when there is an edge from node j to node i (symmetric for an
        undirected graph).
    self_loops : bool
        Whether each node also attends to itself.

    Returns
    -------
    mask : (N, N) bool ndarray
        mask[j, i] is True when query node i may attend to key node j.

    Raises
    ------
    ValueError
        If a node would attend to nobody (no edge and no self-loop): its softmax is undefined.
    """
    adjacency = _check_adjacency(adjacency)
    mask = adjacency != 0
    if self_loops:
        mask = mask | np.eye(adjacency.shape[0], dtype=bool)
    lonely = np.flatnonzero(~mask.any(axis=0))
    if lonely.size:
        raise ValueError(
            f"node index {int(lonely[0])} (from 0) has no edge and self_loops=False: it would attend "
            f"to no node; add a self-loop or an edge"
        )
    return mask


def graph_attention(I, W_q, W_k, W_v, adjacency, *, self_loops=True, scale=1.0):
    """Self-attention restricted to the edges of a graph: one kind of graph neural network.

    Parameters
    ----------
    I : (d, N) ndarray
        Node vectors as columns; column i is node i's a^i.
    W_q, W_k : (d_k, d) ndarray
    W_v : (d_v, d) ndarray
    adjacency : (N, N) ndarray
        Nonzero where two nodes share an edge.
    self_loops : bool
        Whether each node attends to itself as well as to its neighbours.
    scale : float

    Returns
    -------
    O : (d_v, N) ndarray
        Column i is b^i, a weighted sum of the values of i's neighbours (and of i).
    A_prime : (N, N) ndarray
        A_prime[j, i] = alpha'_{i,j}; exactly 0 wherever j is not a neighbour of i
        (nor i itself when ``self_loops``).

    Notes
    -----
    ``self_attention(I, W_q, W_k, W_v, mask=graph_mask(adjacency, self_loops=...))``:
    scores are computed only for pairs joined by an edge (lecture part 下, slides 40-41).
    """
    I = check_sequence(I)
    adjacency = _check_adjacency(adjacency)
    if adjacency.shape[0] != I.shape[1]:
        raise ValueError(
            f"adjacency has shape {adjacency.shape} but I has shape {I.shape}: it needs one row and column per "
            f"node, ({I.shape[1]}, {I.shape[1]})"
        )
    return core.self_attention(I, W_q, W_k, W_v, scale=scale, mask=graph_mask(adjacency, self_loops=self_loops))


def reachable_within(adjacency, hops):
    """Which nodes are at most ``hops`` edges apart.

    Parameters
    ----------
    adjacency : (N, N) ndarray
        Nonzero where two nodes share an edge.
    hops : int
        0 gives the identity (every node reaches itself).

    Returns
    -------
    (N, N) bool ndarray
        Entry [j, i] is True when a path of at most ``hops`` edges leads from j to i. After
        ``hops`` layers of graph attention with self-loops, b^i depends on exactly these a^j.
    """
    adjacency = _check_adjacency(adjacency)
    hops = check_count("hops", hops, 0)
    step = (adjacency != 0) | np.eye(adjacency.shape[0], dtype=bool)
    reach = np.eye(adjacency.shape[0], dtype=bool)
    for _ in range(hops):
        reach = (reach.astype(int) @ step.astype(int)) > 0  # one more edge: (N, N) x (N, N) -> (N, N)
    return reach
