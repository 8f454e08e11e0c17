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
    (lambda W_in, h: tuple(np.split(W_in, 3)), "now cut each into h heads"),
    (lambda W_in, h: tuple(W[:, :-1] for W in split_reference(W_in, h)), "should have shape"),
    (lambda W_in, h: (lambda q, k, v: (k, q, v))(*split_reference(W_in, h)), "your W_q is the other projection"),
    (lambda W_in, h: W_in, "three stacks"),
    (lambda W_in, h: 1 / 0, "split raised ZeroDivisionError"),
])
def test_split_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch05.check_split_in_proj(wrong)


@pytest.mark.parametrize("reader", [
    lambda W_in, h: tuple(heads.split_heads(W, h) for W in heads.split_in_proj(W_in)),
    lambda W_in, h: tuple(heads.split_heads(W, h) for W in np.split(W_in, 3)),
    lambda W_in, h: tuple(W.reshape(h, -1, W.shape[1]) for W in heads.split_in_proj(W_in)),
    lambda W_in, h: tuple(heads.split_heads_interleaved(W, h) for W in np.split(W_in, 3)),
])
def test_split_refuses_the_library_splitters(reader):
    with pytest.raises(AssertionError, match=r"^split calls attn\.heads\.split_(in_proj|heads|heads_interleaved), "
                                             r"which this exercise asks you to do without: cut W_in"):
        ch05.check_split_in_proj(reader)
    assert ch05.check_split_in_proj(split_reference).startswith("Right:")  # and the library is back afterwards


def test_unfinished_answers_get_a_hint():
    """The exercise cells' starting points (a function that returns None, zero matrices) fail with a hint."""
    with pytest.raises(AssertionError, match="split returned None"):
        ch05.check_split_in_proj(lambda W_in, h: None)
    with pytest.raises(AssertionError, match="count returned None"):
        ch05.check_weight_count(lambda d, h, d_k, d_v, d_out: None)
    with pytest.raises(AssertionError, match="count raised ZeroDivisionError"):
        ch05.check_weight_count(lambda d, h, d_k, d_v, d_out: 1 // 0)
    with pytest.raises(AssertionError, match="needs >= 0.9"):
        ch05.check_partner_head(np.zeros((3, 5)), np.zeros((3, 5)))


# --- exercise 2: parameter count ---------------------------------------------------------------------

def count_reference(d, h, d_k, d_v, d_out):
    return 2 * h * d_k * d + h * d_v * d + d_out * h * d_v


def test_count_reference_passes():
    assert ch05.check_weight_count(count_reference).startswith("Right:")


@pytest.mark.parametrize("wrong, hint", [
    (lambda d, h, d_k, d_v, d_out: 4 * d * d, "Count each matrix"),
    (lambda d, h, d_k, d_v, d_out: 2 * h * d_k * d + h * d_v * d + d_out * d_v, r"\(d_out, h\*d_v\), not \(d_out, d_v\)"),
    (lambda d, h, d_k, d_v, d_out: 3 * h * d_k * d + d_out * h * d_v, r"W_v maps to the value size"),
    (lambda d, h, d_k, d_v, d_out: 2 * h * d_k * d + h * d_v * d, "W_o is missing"),
    (lambda d, h, d_k, d_v, d_out: 2 * d_k * d + d_v * d + d_out * d_v, "You counted one head"),
    (lambda d, h, d_k, d_v, d_out: None, "count returned None: end it with `return`"),
])
def test_count_wrong_answers_fail(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch05.check_weight_count(wrong)


def test_one_signature_per_checker_name():
    """A checker name means one call signature in every chapter."""
    import inspect

    from attn.exercises import ch01, ch02, ch03, ch04, ch06, ch07, ch08, ch09, ch10, ch11

    seen = {}
    for module in (ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11):
        for name, func in inspect.getmembers(module, inspect.isfunction):
            if name.startswith("check_") and func.__module__ == module.__name__:
                signature = str(inspect.signature(func))
                assert seen.setdefault(name, (signature, module.__name__))[0] == signature, (
                    f"{name}{signature} in {module.__name__} differs from {seen[name]}"
                )


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
    with pytest.raises(AssertionError, match="already gives its partner 'purrs' the largest weight.*multiply W_q"):
        ch05.check_partner_head(W_q.reshape(6, 5), W_k.reshape(6, 5))


def test_partner_head_self_attending_fails():
    W = 5 * np.eye(5)  # q^i . k^j largest for j = i
    with pytest.raises(AssertionError, match="every word attends most to itself.*OTHER role"):
        ch05.check_partner_head(W, W)


def test_partner_head_zero_start_gets_the_stored_hint():
    """Zero matrices give every key the same score: the hint says that all keys tie."""
    with pytest.raises(AssertionError, match=r"^query 'cat' gives its partner 'purrs' weight 0.167 \(needs >= 0.9\); "
                                             r"all 6 keys tie at 1/6 \(the scores are all equal\)\. A head that "
                                             r"reads only one part"):
        ch05.check_partner_head(np.zeros((3, 5)), np.zeros((3, 5)))


@pytest.mark.parametrize("which, shared", [(0, "0.498, is shared by \\['cat', 'purrs'\\]"),
                                           (1, "0.333, is shared by \\['purrs', 'shines', 'falls'\\]")])
def test_partner_head_names_a_tie_as_shared(which, shared):
    """A head that reads one part only ties some keys (not all): the hint names them as sharing the largest weight."""
    W_q, W_k = heads.toy_heads()
    with pytest.raises(AssertionError, match=f"its largest weight, {shared}\\. A head that reads only one part"):
        ch05.check_partner_head(W_q[which], W_k[which])


def test_partner_head_single_wrong_winner_is_named():
    # the query of a noun reads "noun"; a key scores 5 for topic 2 (sun, shines) plus 2 for a noun: 'sun' wins alone
    W_q, W_k = np.array([[0.0, 0, 0, 1, 0]]), np.array([[0.0, 5, 0, 2, 0]])
    with pytest.raises(AssertionError, match=r"^query 'cat' gives its partner 'purrs' weight 0\.\d{3} \(needs >= 0\.9\); "
                                             r"its largest weight, 0\.\d{3}, goes to 'sun'\. "):
        ch05.check_partner_head(W_q, W_k)


def test_partner_head_wrong_shape_fails():
    with pytest.raises(AssertionError, match="shape"):
        ch05.check_partner_head(np.ones((3, 4)), np.ones((3, 4)))
    with pytest.raises(AssertionError, match="W_k must have the shape of W_q"):
        ch05.check_partner_head(np.ones((3, 5)), np.ones((2, 5)))
