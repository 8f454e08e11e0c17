"""The checkers of chapter 9 (the cost of attention): a reference solution passes, typical wrong answers fail with a hint."""

import numpy as np
import pytest

from attn.exercises import ch09

# --- reference solutions (the same ones the chapter folds away) ------------------------------------


def merge_reference(m1, l1, m2, l2):
    m = max(m1, m2)
    return m, l1 * np.exp(m1 - m) + l2 * np.exp(m2 - m)


def count_reference(N, width):
    w = min(width, N - 1)
    return N * (2 * w + 1) - w * (w + 1)


def count_by_loop(N, width):
    return sum(min(N - 1, i + width) - max(0, i - width) + 1 for i in range(N))


# --- longest speech --------------------------------------------------------------------------------

def test_longest_speech_right():
    assert "16384" in ch09.check_longest_speech(163.84)


@pytest.mark.parametrize("answer, hint", [
    (115.85, "float64"),
    (np.sqrt(2**30) / 100, "4 bytes"),
    (2**30 / 4 / 100, "square root"),
    (60.0, "Solve N"),
    ("long", "number of seconds"),
])
def test_longest_speech_wrong(answer, hint):
    with pytest.raises(AssertionError, match=hint):
        ch09.check_longest_speech(answer)


# --- merge of two softmax summaries ----------------------------------------------------------------

def test_merge_right():
    assert "Right" in ch09.check_merge(merge_reference)


def test_merge_without_rescaling_fails():
    with pytest.raises(AssertionError, match="rescale"):
        ch09.check_merge(lambda m1, l1, m2, l2: (max(m1, m2), l1 + l2))


def test_merge_that_overflows_fails():
    def naive(m1, l1, m2, l2):
        m = max(m1, m2)
        return m, (l1 * np.exp(m1) + l2 * np.exp(m2)) / np.exp(m)

    with pytest.raises(AssertionError, match="never exponentiate a maximum"):
        ch09.check_merge(naive)


def test_merge_with_a_wrong_maximum_fails():
    with pytest.raises(AssertionError, match="larger of m1 and m2"):
        ch09.check_merge(lambda m1, l1, m2, l2: (min(m1, m2), l1 + l2))


def test_merge_must_return_a_pair():
    with pytest.raises(AssertionError, match="pair"):
        ch09.check_merge(lambda m1, l1, m2, l2: l1 + l2)
    with pytest.raises(AssertionError, match="returned None"):
        ch09.check_merge(lambda m1, l1, m2, l2: None)


# --- band count ------------------------------------------------------------------------------------

def test_band_count_right():
    assert "linearly" in ch09.check_band_count(count_reference)


def test_band_count_by_a_loop_over_the_queries_passes():
    assert "linearly" in ch09.check_band_count(count_by_loop)


def test_band_count_reference_matches_the_mask():
    import attn

    for N in range(1, 30):
        for width in range(0, 35):
            assert count_reference(N, width) == int(attn.band_mask(N, width).sum()) == count_by_loop(N, width)


def test_band_count_that_builds_band_mask_is_refused():
    import attn

    with pytest.raises(AssertionError, match="without building the N x N mask"):
        ch09.check_band_count(lambda N, width: int(attn.band_mask(N, width).sum()))


def test_band_count_that_builds_band_mask_for_one_small_case_is_refused():
    import attn

    def mask_at_seven(N, width):
        if (N, width) == (7, 3):
            return int(attn.band_mask(N, width).sum())
        return count_reference(N, width)

    with pytest.raises(AssertionError, match="without building the N x N mask"):
        ch09.check_band_count(mask_at_seven)


def test_band_count_that_builds_its_own_mask_fails():
    def outer_mask(N, width):
        i = np.arange(N)
        return int((np.abs(np.subtract.outer(i, i)) <= width).sum())

    with pytest.raises(AssertionError, match="ran out of memory"):
        ch09.check_band_count(outer_mask)


def test_band_count_wrong_only_at_large_N_fails():
    def small_only(N, width):
        return count_reference(N, width) if N <= 40 else count_reference(N, width) + 1

    with pytest.raises(AssertionError, match=r"count\(1000000, 0\) should be 1000000"):
        ch09.check_band_count(small_only)


def test_band_count_ignoring_the_edges_fails():
    with pytest.raises(AssertionError, match="near the ends"):
        ch09.check_band_count(lambda N, width: N * (2 * width + 1))


def test_band_count_full_matrix_fails():
    with pytest.raises(AssertionError, match="should be"):
        ch09.check_band_count(lambda N, width: N * N)


def test_band_count_not_a_function():
    with pytest.raises(AssertionError, match="pass your function itself"):
        ch09.check_band_count(42)


@pytest.mark.parametrize("answer, hint", [
    (16384, "number of vectors N: the question asks for seconds"),
    (163.84 / 60, "in minutes"),
    (..., "answer with a number of seconds, got Ellipsis"),  # the stub
])
def test_longest_speech_more_hints(answer, hint):
    with pytest.raises(AssertionError, match=hint):
        ch09.check_longest_speech(answer)


def test_merge_rescaled_upside_down_fails():
    def upside_down(m1, l1, m2, l2):
        m = max(m1, m2)
        return m, l1 * np.exp(m - m1) + l2 * np.exp(m - m2)

    with pytest.raises(AssertionError, match="upside down"):
        ch09.check_merge(upside_down)


@pytest.mark.parametrize("wrong, hint", [
    (lambda N, width: N * (2 * width + 1) - width * (width + 1), r"with width >= N every query sees all N keys"),
    (lambda N, width: N * 2 * width - width * (width + 1), "each query also keeps its own key"),
    (lambda N, width: None, "count returned None: end it with `return`"),
])
def test_band_count_more_hints(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch09.check_band_count(wrong)
