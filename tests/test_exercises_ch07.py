"""Chapter 7's exercise checkers: the reference solutions pass, typical wrong answers fail with a hint."""

import numpy as np
import pytest

from attn import applications, core
from attn.exercises import ch07

# --- exercise 1: the streaming (causal, truncated) mask ----------------------------------------------


def streaming_reference(L, w):
    return core.band_mask(L, w) & core.causal_mask(L)


def streaming_by_hand(L, w):
    j, i = np.indices((L, L))
    return (i - w <= j) & (j <= i)


@pytest.mark.parametrize("answer", [streaming_reference, streaming_by_hand])
def test_streaming_right_answers_pass(answer):
    assert ch07.check_streaming_mask(answer).startswith("Right:")


@pytest.mark.parametrize("wrong, hint", [
    (lambda L, w: core.band_mask(L, w), "drop the keys j > i"),
    (lambda L, w: streaming_reference(L, w).T, "after it instead of before"),
    (lambda L, w: streaming_reference(L, w + 1), "count again"),
    (lambda L, w: streaming_reference(L, max(w - 1, 0)), "count again"),
    (lambda L, w: streaming_reference(L, w).astype(int), "boolean"),
    (lambda L, w: streaming_reference(L, w)[:-1], "shape"),
    (lambda L, w: core.causal_mask(L), "exactly when i - w <= j <= i"),
    (lambda L, w: None, "returned None"),
])
def test_streaming_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch07.check_streaming_mask(wrong)


# --- exercise 2: an image as a sequence of pixel vectors -----------------------------------------------


def to_sequence_by_hand(image):
    H, W, C = image.shape
    return np.stack([image[r, c] for r in range(H) for c in range(W)], axis=1)


@pytest.mark.parametrize("answer", [applications.image_to_sequence, to_sequence_by_hand,
                                    lambda im: im.transpose(2, 0, 1).reshape(im.shape[2], -1)])
def test_image_right_answers_pass(answer):
    assert ch07.check_image_to_sequence(answer).startswith("Right:")


@pytest.mark.parametrize("wrong, hint", [
    (lambda im: im.reshape(-1, im.shape[2]), "pixels as rows"),
    (lambda im: im.reshape(im.shape[2], -1), "mixes the channels"),
    (lambda im: im.transpose(2, 1, 0).reshape(im.shape[2], -1), "row by row"),
    (lambda im: im.reshape(-1, 1), "one column per pixel"),
    (lambda im: 2 * applications.image_to_sequence(im), "must equal image"),
    (lambda im: None, "to_sequence returned None: end it with `return`"),
    (lambda im: im.reshape(7, -1), "to_sequence raised ValueError"),
])
def test_image_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch07.check_image_to_sequence(wrong)


# --- exercise 3: the graph's attention mask -------------------------------------------------------------


def graph_mask_reference(n, edges):
    mask = np.eye(n, dtype=bool)
    for u, v in edges:
        mask[u - 1, v - 1] = mask[v - 1, u - 1] = True
    return mask


def test_graph_right_answer_passes():
    assert ch07.check_graph_mask(graph_mask_reference).startswith("Right:")


def no_self_loops(n, edges):
    return graph_mask_reference(n, edges) & ~np.eye(n, dtype=bool)


def one_direction(n, edges):
    mask = np.eye(n, dtype=bool)
    for u, v in edges:
        mask[u - 1, v - 1] = True
    return mask


def counted_from_zero(n, edges):
    mask = np.eye(n, dtype=bool)
    for u, v in edges:
        mask[u, v] = mask[v, u] = True
    return mask


def extra_edge(n, edges):
    mask = graph_mask_reference(n, edges)
    mask[0, :] = mask[:, 0] = True
    return mask


@pytest.mark.parametrize("wrong, hint", [
    (no_self_loops, "self-loops"),
    (one_direction, "symmetric"),
    (counted_from_zero, "count nodes from 1"),
    (extra_edge, "share an edge"),
    (lambda n, edges: graph_mask_reference(n, edges).astype(float), "boolean"),
    (lambda n, edges: None, "graph_mask returned None: end it with `return`"),
])
def test_graph_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch07.check_graph_mask(wrong)
