"""What the exercise checkers share.

Every checker calls the reader's code through :func:`call_student`, so a reader always gets a
hint, never a bare traceback, and raises ``AssertionError`` explicitly (never with ``assert``,
which ``python -O`` removes).
"""

import dis
import numbers
import os
import sys
import types

import numpy as np

_ATTN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_EXERCISES_DIR = os.path.dirname(os.path.abspath(__file__))


def call_student(func, name, *args, none_hint=None):
    """Call the student's function ``func`` on ``args`` and return its result.

    Parameters
    ----------
    func : callable
        The reader's function.
    name : str
        Its name in the exercise, used in the hints.
    *args
        The arguments it is called with.
    none_hint : str, optional
        The hint when ``func`` returns None (by default: end it with ``return``).

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
        raise AssertionError(
            f"{name} raised {type(exc).__name__} on arguments of shapes {', '.join(map(_describe, args))}: {exc}"
        ) from exc
    if result is None:
        raise AssertionError(none_hint or f"{name} returned None: end it with `return`")
    return result


def _describe(arg):
    """The shape of an argument for a hint, or its type when it has none (a ragged list ...)."""
    try:
        return str(np.shape(arg))
    except ValueError:
        return f"{type(arg).__name__} of {len(arg)}" if hasattr(arg, "__len__") else type(arg).__name__


def whole_number(name, value):
    """``value`` as an int when it is a whole number (an int, or a float with no fractional part).

    Raises
    ------
    AssertionError
        When ``value`` is not a number (a string, a bool, None ...) or has a fractional part.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, np.number)):
        raise AssertionError(f"{name} should be a whole number, got {value!r}")
    if not np.isfinite(value) or value != int(value):
        raise AssertionError(f"{name} = {value!r} is not a whole number: a count has no fractional part")
    return int(value)


def has_loop(func):
    """Whether the code of ``func`` (with the comprehensions and functions inside it) holds a loop.

    A ``for`` or ``while`` statement, a comprehension or a generator expression counts; loops in
    other functions that ``func`` calls do not.
    """
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    todo = [code]
    while todo:
        code = todo.pop()
        for ins in dis.get_instructions(code):
            backward = "JUMP" in ins.opname and isinstance(ins.argval, int) and ins.argval <= ins.offset
            if ins.opname == "FOR_ITER" or backward:
                return True
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return False


def _in_attn(code):
    path = os.path.abspath(code.co_filename)
    return path.startswith(_ATTN_DIR + os.sep) and not path.startswith(_EXERCISES_DIR + os.sep)


class CallLog:
    """The calls into the ``attn`` package made while the reader's function ran.

    Attributes
    ----------
    calls : list of (str, dict)
        Name and arguments (the frame's locals on entry) of each call of an ``attn`` function
        made from outside ``attn``, in order; calls that ``attn`` makes inside are left out.
    """

    def __init__(self):
        self.calls = []

    def names(self):
        return [name for name, _ in self.calls]

    def count(self, name):
        return sum(1 for n, _ in self.calls if n == name)


def call_logged(func, name, *args, none_hint=None):
    """Like :func:`call_student`, and also log the reader's direct calls into ``attn``.

    The log is taken with :func:`sys.setprofile`, so it sees a function however it was
    imported (``attn.softmax``, ``from attn import softmax``, an alias ...).

    Returns
    -------
    result
        What ``func`` returned.
    log : CallLog
    """
    log = CallLog()

    def profile(frame, event, arg):
        if event == "call" and _in_attn(frame.f_code):
            caller = frame.f_back
            if caller is None or not _in_attn(caller.f_code):
                log.calls.append((frame.f_code.co_name, dict(frame.f_locals)))

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        result = call_student(func, name, *args, none_hint=none_hint)
    finally:
        sys.setprofile(previous)
    return result, log
