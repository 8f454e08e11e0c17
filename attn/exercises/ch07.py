"""Checkers for chapter 7 (self-attention for speech, images and graphs).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns
a short message starting with "Right:" when it is right.
"""

import numpy as np

from .. import applications, core, inputs
from ._common import call_student, call_without

_STREAM_CASES = ((6, 2), (10, 3), (5, 0), (4, 9), (1, 1), (98, 8))
_IMAGE_SHAPES = ((5, 10, 3), (2, 3, 3), (4, 1, 2), (1, 6, 1), (3, 3, 4))
_GRAPHS = (
    (8, applications.LECTURE_GRAPH_EDGES),
    (3, ((1, 2),)),
    (5, ((1, 2), (2, 3), (3, 4), (4, 5), (5, 1))),
    (4, ((4, 1), (2, 4))),
)


def _as_bool_square(got, n, what):
    got = np.asarray(got)
    if got.shape != (n, n):
        raise AssertionError(f"{what}: the mask must have shape ({n}, {n}), key rows and query columns, got {got.shape}")
    if got.dtype != bool:
        raise AssertionError(f"{what}: return a boolean mask (True = may attend), got dtype {got.dtype}")
    return got


def check_streaming_mask(streaming_mask):
    """Check ``streaming_mask(L, w)``: query i may attend to keys j with i - w <= j <= i.

    Parameters
    ----------
    streaming_mask : callable
        ``streaming_mask(L, w)`` must return an (L, L) bool array, ``mask[j, i]`` True when
        query i may attend to key j (keys as rows, queries as columns).

    Returns
    -------
    str
        A short confirmation.
    """
    for L, w in _STREAM_CASES:
        got = _as_bool_square(call_student(streaming_mask, "streaming_mask", L, w), L, f"L = {L}, w = {w}")
        expected = core.band_mask(L, w) & core.causal_mask(L)
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, core.band_mask(L, w)):
            raise AssertionError(f"L = {L}, w = {w}: this is the whole band; a streaming model cannot wait for "
                                 f"future frames, so drop the keys j > i")
        if np.array_equal(got, expected.T):
            raise AssertionError(f"L = {L}, w = {w}: rows are keys j and columns are queries i; your mask lets "
                                 f"query i see the keys after it instead of before it")
        for other in (w - 1, w + 1):
            if other >= 0 and np.array_equal(got, core.band_mask(L, other) & core.causal_mask(L)):
                raise AssertionError(f"L = {L}, w = {w}: query i must see w = {w} past frames plus itself, "
                                     f"w + 1 keys in all (fewer near the start); count again")
        raise AssertionError(f"L = {L}, w = {w}: mask[j, i] must be True exactly when i - w <= j <= i")
    return (f"Right: all {len(_STREAM_CASES)} cases. Each frame now waits for no future frame, and its cost is at "
            f"most w + 1 scores however long the utterance.")


def check_image_to_sequence(to_sequence):
    """Check ``to_sequence(image)``: an (H, W, C) image as C-dimensional pixel columns in reading order.

    Parameters
    ----------
    to_sequence : callable
        ``to_sequence(image)`` must return the (C, H * W) array whose column r * W + c is
        the pixel in row r, column c (as :func:`attn.applications.image_to_sequence` does).

    Returns
    -------
    str
        A short confirmation.
    """
    rng = np.random.default_rng(7)
    for H, W, C in _IMAGE_SHAPES:
        image = rng.random((H, W, C))
        expected = applications.image_to_sequence(image)
        got = np.asarray(call_without(
            to_sequence, "to_sequence", image,
            forbidden=("attn.applications.image_to_sequence",),
            hint="reshape the image to (H*W, C), one row per pixel in reading order, and transpose it",
        ))
        if got.shape == (H * W, C) and (H * W, C) != (C, H * W):
            raise AssertionError(f"image {(H, W, C)}: you returned pixels as rows, shape {got.shape}; vectors are "
                                 f"columns in this book, so the sequence has shape ({C}, {H * W}) (transpose it)")
        if got.shape != (C, H * W):
            raise AssertionError(
                f"image {(H, W, C)}: the sequence needs one column per pixel, shape ({C}, {H * W}), got {got.shape}"
            )
        if np.allclose(got, expected):
            continue
        if np.allclose(got, image.reshape(C, H * W)):
            raise AssertionError(f"image {(H, W, C)}: reshaping to (C, H*W) directly mixes the channels of "
                                 f"neighbouring pixels, because the channel axis comes last; put the channel "
                                 f"axis first (or reshape to (H*W, C) and transpose)")
        if np.allclose(got, image.transpose(2, 1, 0).reshape(C, H * W)):
            raise AssertionError(f"image {(H, W, C)}: your pixels go down the columns of the image first; "
                                 f"count them row by row, so that pixel (r, c) is column r * W + c")
        raise AssertionError(f"image {(H, W, C)}: column r * W + c must equal image[r, c, :]")
    return (f"Right: {len(_IMAGE_SHAPES)} images, each a set of H * W vectors of dimension C; a 5 x 10 x 3 image "
            f"is 50 vectors of dimension 3.")


def check_graph_mask(graph_mask):
    """Check ``graph_mask(n_nodes, edges)``: the attention mask of an undirected graph, with self-loops.

    Parameters
    ----------
    graph_mask : callable
        ``graph_mask(n_nodes, edges)`` gets the edges as pairs of nodes counted from 1, as
        on the slide, and must return an (n_nodes, n_nodes) bool array, ``mask[j, i]`` True
        when node i may attend to node j: along an edge (either direction) or to itself.

    Returns
    -------
    str
        A short confirmation.
    """
    for n, edges in _GRAPHS:
        edges = tuple(tuple(e) for e in edges)
        try:
            got = call_student(graph_mask, "graph_mask", n, edges)
        except AssertionError as exc:
            if "IndexError" in str(exc):
                raise AssertionError(f"{exc}. The edges count nodes from 1 as on the slide: node u is row and "
                                     f"column u - 1 of the mask") from None
            raise
        got = _as_bool_square(got, n, f"{n} nodes")
        adjacency = inputs.adjacency_from_edges(n, [(u - 1, v - 1) for u, v in edges])
        expected = applications.graph_mask(adjacency, self_loops=True)
        if np.array_equal(got, expected):
            continue
        if np.array_equal(got, adjacency != 0):
            raise AssertionError(f"{n} nodes: no node may attend to itself in your mask; add the diagonal "
                                 f"(self-loops), so that b^i keeps something of a^i")
        if not np.array_equal(got, got.T):
            raise AssertionError(f"{n} nodes: the edges are undirected, so the mask must be symmetric; an edge "
                                 f"u-v lets u attend to v and v attend to u")
        raise AssertionError(f"{n} nodes, edges {edges}: mask[j, i] must be True exactly when j = i or "
                             f"nodes i + 1 and j + 1 share an edge")
    return (f"Right: {len(_GRAPHS)} graphs. Attention through this mask is zero off the edges: one layer of a "
            f"graph neural network.")
