"""What the exercise checkers share."""

import numpy as np


def call_student(func, name, *args):
    """Call the student's function ``func`` on ``args`` and return its result.

    Raises
    ------
    AssertionError
        With a hint when ``func`` is not callable, raises, or returns None.
    """
    if not callable(func):
        raise AssertionError(f"pass your function itself, got {type(func).__name__}")
    try:
        result = func(*args)
    except Exception as exc:
        shapes = ", ".join(str(np.shape(a)) for a in args)
        raise AssertionError(f"{name} raised {type(exc).__name__} on arguments of shapes {shapes}: {exc}") from exc
    if result is None:
        raise AssertionError(f"{name} returned None: end it with `return`")
    return result
