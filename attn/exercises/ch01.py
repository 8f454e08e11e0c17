"""Checkers for the exercises of chapter 1 (inputs and outputs).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import numpy as np

from .. import inputs
from ._common import call_without

_ANIMALS = ("dog", "rabbit", "cat")
_OTHERS = ("run", "jump", "tree", "flower")


_FRAME_CASES = ((16000, 400, 160), (960000, 400, 160), (400, 400, 160), (399, 400, 160),
                (560, 400, 160), (559, 400, 160), (0, 400, 160), (8000, 200, 80), (10, 3, 3))

#: The library's frame count, which the exercise asks the reader to do without (``inputs`` re-exports ``speech``'s).
_LIBRARY_COUNTS = ("attn.speech.frame_count", "attn.inputs.frame_count")
_COUNT_HINT = "count frame starts 0, hop, 2 hop, ... whose frame still ends inside the signal"

#: Counts that slip in a common way, each with its hint.
_WRONG_FRAME_COUNTS = (
    (lambda n, window, hop: n // hop,
     "n_samples // hop counts frame starts, but the last frames would run past the end of the signal: a frame "
     "needs all its window samples"),
    (lambda n, window, hop: max(0, (n - window) // hop),
     "one frame short: the frame that starts at sample 0 counts too, so add 1"),
    (lambda n, window, hop: 1 + (n - window) // hop,
     "a frame needs all its window samples: no frame fits when n_samples < window"),
    (lambda n, window, hop: max(0, 1 + -(-(n - window) // hop)),
     "that counts a last, partial frame: only full frames count, so round (n_samples - window) / hop down"),
)


def check_frame_count(frame_count):
    """Exercise ex-ch01-frames: a function ``frame_count(n_samples, window, hop)``.

    It must return how many full frames of ``window`` samples, one every ``hop``
    samples, fit in a signal of ``n_samples`` samples, without the library's count:
    ``attn.inputs.frame_count`` (``attn.speech.frame_count``) is out of reach, and so is
    ``attn.speech.frame_signal``, which calls it.
    """
    answers = []
    for n, window, hop in _FRAME_CASES:
        expected = inputs.frame_count(n, window, hop)
        answers.append(call_without(
            frame_count, "frame_count", n, window, hop, forbidden=_LIBRARY_COUNTS, hint=_COUNT_HINT,
            none_hint=(f"frame_count({n}, {window}, {hop}) returned None, expected {expected}: count frame starts "
                       "0, hop, 2 hop, ... whose frame still ends inside the signal"),
        ))
    for (n, window, hop), got in zip(_FRAME_CASES, answers):
        expected = inputs.frame_count(n, window, hop)
        if got == expected:
            continue
        hint = next((h for wrong, h in _WRONG_FRAME_COUNTS
                     if all(a == wrong(*case) for case, a in zip(_FRAME_CASES, answers))), None)
        if hint is None:
            hint = ("a frame needs all its window samples: no frame fits when n_samples < window"
                    if n < window else
                    "count frame starts 0, hop, 2 hop, ... whose frame still ends inside the signal")
        raise AssertionError(f"frame_count({n}, {window}, {hop}) returned {got!r}, expected {expected}: {hint}")
    return "Right: 1 + (n_samples - window) // hop full frames (0 if the signal is shorter than a window)."


def check_horse_embedding(vector):
    """Exercise ex-ch01-horse: a 4-dim embedding for "horse" in the table of chapter 1.

    It must lie in the animal cluster: cosine similarity at least 0.9 with dog, rabbit
    and cat, and below 0.6 with run, jump, tree and flower.
    """
    v = np.asarray(vector, dtype=float)
    d = inputs.EMBEDDINGS.shape[0]
    if v.shape != (d,):
        raise AssertionError(f"the embedding must have shape ({d},), one entry per axis {inputs.EMBEDDING_AXES}, got {v.shape}")
    if not np.all(np.isfinite(v)) or not np.any(v):
        raise AssertionError("the embedding must be finite and not the zero vector")
    sims = inputs.cosine_similarity(v[:, None], inputs.embed(_ANIMALS + _OTHERS))[0]
    for word, s in zip(_ANIMALS + _OTHERS, sims):
        if word in _ANIMALS and s < 0.9:
            raise AssertionError(f"cosine with {word!r} is {s:.3f} < 0.9: give horse the animal axes' profile")
        if word in _OTHERS and s >= 0.6:
            raise AssertionError(f"cosine with {word!r} is {s:.3f} >= 0.6: horse is too close to a non-animal")
    floor = np.floor(sims[:3].min() * 1000) / 1000  # rounded down, so that "or more" holds
    return f"Right: horse sits with the animals (cosine {floor:.3f} or more with dog, rabbit, cat)."


#: How close the padding fraction must be: 4 digits pass, a frame count off by one does not.
_TOL = 1e-5
#: Frame counts near the right ones (5998 and 98): 100 frames a second, or off by one or two. The short
#: utterances' count decides the fraction at 4 digits (1.5e-4 a frame, so a hint matches within half a unit
#: of the 4th digit); the long one's moves it by 2.5e-6 a frame only.
_NEAR_SHORT = (100, 99, 97, 96)
_NEAR_LONG = range(5996, 6001)


def check_padding_cost(fraction):
    """Exercise ex-ch01-padding: padding fraction of one 1-minute utterance batched with nine 1-second ones.

    Frames are 25 ms every 10 ms at 16 kHz (full frames only).
    """
    lengths = [inputs.frame_count(60 * 16000)] + [inputs.frame_count(16000)] * 9
    expected = inputs.padding_fraction(lengths)
    try:
        got = float(fraction)
    except (TypeError, ValueError):
        raise AssertionError(f"answer with one number between 0 and 1, got {fraction!r}") from None
    if 1.0 < got <= 100.0 and abs(got / 100 - expected) <= 1e-3:
        raise AssertionError(f"{got} is a percentage: answer with the fraction, a number between 0 and 1")
    if not 0.0 <= got <= 1.0:
        raise AssertionError(f"a fraction is between 0 and 1, got {got}")
    if abs(got - (1 - expected)) <= 1e-3:
        raise AssertionError(f"{got!r} is the share of real frames: padding is the rest of the padded array")
    short_only = 1 - lengths[1] / lengths[0]
    if abs(got - short_only) <= 1e-3:
        raise AssertionError(
            f"{got!r} is the padding of one short utterance's row: the batch has 10 rows, and the long "
            "utterance's row has no padding"
        )
    if abs(got - expected) > _TOL:
        for places in (1, 2, 3):
            if abs(got - round(expected, places)) < 1e-12:
                hundred = inputs.padding_fraction([6000] + [100] * 9)   # 100 frames a second: also 0.885
                also = ""
                if places == 3 and round(hundred, 3) == got:
                    also = (f" (With 4 places {hundred:.4f} would mean 100 frames a second; only full 25 ms "
                            "frames count, 1 + (16000 - 400) // 160 in one second.)")
                raise AssertionError(f"{got} is given to {places} decimal place{'s' if places > 1 else ''}: "
                                     f"give 4.{also}")
        for short in _NEAR_SHORT:
            if any(abs(got - inputs.padding_fraction([long] + [short] * 9)) <= 5e-5 for long in _NEAR_LONG):
                if short == 100:
                    raise AssertionError(
                        f"{got!r} counts 100 frames a second, 6000 and 100 frames: only full 25 ms frames count, "
                        "and one second holds 1 + (16000 - 400) // 160 of them"
                    )
                raise AssertionError(
                    f"{got!r} is the padding with {short} frames in each one-second utterance: one second holds "
                    "1 + (16000 - 400) // 160 full 25 ms frames (inputs.frame_count)"
                )
        raise AssertionError(
            f"{got!r} is not it: the lengths are {lengths[0]} and 9 x {lengths[1]} frames; "
            f"the padded array holds 10 x {lengths[0]} positions"
        )
    return f"Right: {expected:.4f} of the padded batch is padding."
