"""Chapter 5's exercise checkers: the reference solutions pass, typical wrong answers fail with a hint."""

import numpy as np
import pytest

from attn import heads
from attn.exercises import ch05


# --- exercise 1: split in_proj_weight ---------------------------------------------------------------

def split_reference(W_in, h):
    d = W_in.shape[1]
    return tuple(W_in[s * d:(s + 1) * d].reshape(h, d // h, d) for s in range(3))


def split_interleaved(W_in, h):
    d = W_in.shape[1]
    return tuple(W_in[s * d:(s + 1) * d].reshape(d // h, h, d).transpose(1, 0, 2) for s in range(3))


def split_heads_first(W_in, h):
    """Assumes the layout [head 1: q, k, v; head 2: q, k, v; ...], which torch does not use."""
    d = W_in.shape[1]
    per_head = W_in.reshape(h, 3, d // h, d)
    return per_head[:, 0], per_head[:, 1], per_head[:, 2]


def test_split_reference_passes():
    assert ch05.check_split_in_proj(split_reference).startswith("Right:")


@pytest.mark.parametrize("wrong, hint", [
    (split_interleaved, "rows m, m\\+h"),
    (split_heads_first, "all of W_q's rows, then W_k's"),
    (lambda W_in, h: tuple(np.split(W_in, 3)), "should have shape"),
    (lambda W_in, h: W_in, "three stacks"),
])
def test_split_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch05.check_split_in_proj(wrong)


def test_unfinished_answers_get_a_hint():
    """The exercise cells' starting points (a function that returns None, zero matrices) fail with a hint."""
    with pytest.raises(AssertionError, match="split returned None"):
        ch05.check_split_in_proj(lambda W_in, h: None)
    with pytest.raises(AssertionError, match="count returned None"):
        ch05.check_parameter_count(lambda d, h, d_k, d_v, d_out: None)
    with pytest.raises(AssertionError, match="count raised ZeroDivisionError"):
        ch05.check_parameter_count(lambda d, h, d_k, d_v, d_out: 1 // 0)
    with pytest.raises(AssertionError, match="needs >= 0.9"):
        ch05.check_partner_head(np.zeros((3, 5)), np.zeros((3, 5)))


# --- exercise 2: parameter count ---------------------------------------------------------------------

def count_reference(d, h, d_k, d_v, d_out):
    return 2 * h * d_k * d + h * d_v * d + d_out * h * d_v


def test_count_reference_passes():
    assert ch05.check_parameter_count(count_reference).startswith("Right:")


@pytest.mark.parametrize("wrong", [
    lambda d, h, d_k, d_v, d_out: 4 * d * d,
    lambda d, h, d_k, d_v, d_out: 2 * h * d_k * d + h * d_v * d + d_out * d_v,  # W_o without the h
    lambda d, h, d_k, d_v, d_out: 3 * h * d_k * d + d_out * h * d_v,  # d_v taken as d_k
])
def test_count_wrong_answers_fail(wrong):
    with pytest.raises(AssertionError, match="Count each matrix"):
        ch05.check_parameter_count(wrong)


# --- exercise 3: one head that finds the partner -----------------------------------------------------

def test_partner_head_reference_passes():
    W_q, W_k = heads.toy_heads()
    assert ch05.check_partner_head(W_q.reshape(6, 5), W_k.reshape(6, 5)).startswith("Right:")


@pytest.mark.parametrize("which", [0, 1])
def test_partner_head_one_part_only_fails(which):
    W_q, W_k = heads.toy_heads()
    with pytest.raises(AssertionError, match="reads only one part"):
        ch05.check_partner_head(W_q[which], W_k[which])


def test_partner_head_too_weak_fails():
    W_q, W_k = heads.toy_heads(strength=0.5)
    with pytest.raises(AssertionError, match="needs >= 0.9"):
        ch05.check_partner_head(W_q.reshape(6, 5), W_k.reshape(6, 5))


def test_partner_head_wrong_shape_fails():
    with pytest.raises(AssertionError, match="shape"):
        ch05.check_partner_head(np.ones((3, 4)), np.ones((3, 4)))
