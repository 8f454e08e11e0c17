"""Every chapter's checkers follow one convention.

The reader's code is always called through ``call_student``, so a function that raises, returns
None or is not a function gets a hint, never a bare traceback; no checker uses ``assert`` (which
``python -O`` removes); one checker name has one signature.
"""

import ast
import inspect
from pathlib import Path

import numpy as np
import pytest

from attn.exercises import _common, ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11

MODULES = (ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11)

#: Every checker that takes the reader's function, with the name its hints use.
FUNCTION_CHECKERS = (
    (ch01.check_frame_count, "frame_count"), (ch02.check_window_features, "window_features"),
    (ch03.check_output_column, "b_i"), (ch04.check_matrix_form, "attention"), (ch04.check_row_form, "row_attention"),
    (ch05.check_split_in_proj, "split"), (ch05.check_weight_count, "count"), (ch06.check_distance_profile, "g"),
    (ch07.check_streaming_mask, "streaming_mask"), (ch07.check_image_to_sequence, "to_sequence"),
    (ch07.check_graph_mask, "graph_mask"), (ch08.check_output_projection, "projection"),
    (ch08.check_layers_to_connect, "layers"), (ch08.check_linear_step, "step"), (ch09.check_merge, "merge"),
    (ch09.check_band_count, "count"), (ch10.check_softmax_backward, "backward"),
    (ch10.check_value_gradient, "grad_W_v"), (ch10.check_window_ceiling, "ceiling"),
    (ch11.check_masked_mean, "masked_mean"), (ch11.check_attention_pool, "pool"),
    (ch11.check_mean_frame, "mean_frame"),
)


def test_every_function_checker_is_listed():
    listed = {checker for checker, _ in FUNCTION_CHECKERS}
    for module in MODULES:
        for name, func in inspect.getmembers(module, inspect.isfunction):
            if not name.startswith("check_") or func.__module__ != module.__name__:
                continue
            source = inspect.getsource(func)
            if any(f"{helper}(" in source for helper in ("call_student", "call_logged", "call_without")):
                assert func in listed, f"{module.__name__}.{name} calls the reader's code but is not listed here"


@pytest.mark.parametrize("checker, name", FUNCTION_CHECKERS, ids=[n for _, n in FUNCTION_CHECKERS])
def test_a_raising_function_gets_a_hint_not_a_traceback(checker, name):
    def broken(*args):
        raise KeyError("oops")

    with pytest.raises(AssertionError, match=f"^{name} raised KeyError on arguments of shapes"):
        checker(broken)


@pytest.mark.parametrize("checker, name", FUNCTION_CHECKERS, ids=[n for _, n in FUNCTION_CHECKERS])
def test_a_value_instead_of_a_function_gets_a_hint(checker, name):
    with pytest.raises(AssertionError, match="pass your function itself"):
        checker(np.zeros(3))


def test_no_bare_assert_in_the_checkers():
    folder = Path(_common.__file__).parent
    for path in sorted(folder.glob("*.py")):
        asserts = [node.lineno for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Assert)]
        assert not asserts, f"{path.name} uses assert on lines {asserts}: raise AssertionError explicitly"


def test_call_student_hints():
    with pytest.raises(AssertionError, match="^f returned None: end it with `return`$"):
        _common.call_student(lambda: None, "f")
    with pytest.raises(AssertionError, match="^my own hint$"):
        _common.call_student(lambda: None, "f", none_hint="my own hint")
    with pytest.raises(AssertionError, match=r"f raised ZeroDivisionError on arguments of shapes \(2,\), list of 2"):
        _common.call_student(lambda a, b: 1 / 0, "f", np.zeros(2), [[1], [2, 3]])  # a ragged list has no shape
    assert _common.call_student(lambda a: a + 1, "f", 1) == 2


@pytest.mark.parametrize("value, hint", [
    (2.5, "not a whole number"), (float("inf"), "not a whole number"), ("3", "whole number, got '3'"),
    (True, "whole number, got True"), (None, "whole number, got None"),
])
def test_whole_number_refuses(value, hint):
    with pytest.raises(AssertionError, match=hint):
        _common.whole_number("n", value)


def test_whole_number_accepts_integral_values():
    assert [_common.whole_number("n", v) for v in (3, 3.0, np.int64(3), np.float32(3))] == [3, 3, 3, 3]


def test_has_loop_sees_for_while_and_comprehensions():
    def plain(x):
        return x @ x

    def with_for(x):
        for _ in range(2):
            x = x + 1
        return x

    def with_while(x):
        while x < 3:
            x += 1
        return x

    def with_comprehension(x):
        return sum(v for v in x)

    assert not _common.has_loop(plain)
    assert all(_common.has_loop(f) for f in (with_for, with_while, with_comprehension))


def test_call_log_sees_attn_functions_however_imported():
    import attn
    from attn.core import softmax as renamed

    def reader(x):
        return attn.softmax(x) + renamed(x)

    _, log = _common.call_logged(reader, "reader", np.zeros(3))
    assert log.names() == ["softmax", "softmax"]  # the calls softmax makes inside attn are not logged


def test_call_without_refuses_however_the_function_is_reached():
    import attn
    from attn import core
    from attn.core import softmax as imported_before

    forbidden = dict(forbidden=("attn.core.softmax",), hint="write it with np.exp")
    hint = "^f calls attn.core.softmax, which this exercise asks you to do without: write it with np.exp$"

    def swallowing(x):
        try:
            return core.softmax(x)
        except AssertionError:
            return np.exp(x) / np.exp(x).sum()

    readers = (lambda x: attn.softmax(x), lambda x: core.softmax(x), lambda x: imported_before(x), imported_before,
               swallowing, lambda x: attn.self_attention(x[None, :], np.eye(1), np.eye(1), np.eye(1))[0][0])
    for reader in readers:
        with pytest.raises(_common.Refused, match=hint):
            _common.call_without(reader, "f", np.zeros(3), **forbidden)
    assert attn.softmax is imported_before and core.softmax is imported_before  # every binding restored
    np.testing.assert_allclose(_common.call_without(lambda x: np.exp(x) / np.exp(x).sum(), "f", np.zeros(2),
                                                    **forbidden), [0.5, 0.5])


def test_call_without_skips_absent_names_and_keeps_the_other_hints():
    absent = dict(forbidden=("attn.no_such_module.f", "attn.core.no_such_function"), hint="h")
    assert _common.call_without(lambda x: x + 1, "f", 1, **absent) == 2
    with pytest.raises(AssertionError, match="^f returned None"):
        _common.call_without(lambda x: None, "f", 1, **absent)
    with pytest.raises(AssertionError, match="^f raised ZeroDivisionError"):
        _common.call_without(lambda x: 1 / 0, "f", 1, forbidden=("attn.core.softmax",), hint="h")
