"""Checkers for chapter 11 (one label for a whole sequence).

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns
a short message when it is right.
"""

import numpy as np

from .. import pooling, speakers
from ..core import softmax
from ._common import call_without

# The library's own poolings, which the exercises ask the reader to write (attention pooling with q = 0 is a mean).
_POOLINGS = ("attn.pooling.mean_pool", "attn.pooling._mean_pool", "attn.pooling.attention_pool",
             "attn.pooling._attention_pool")
# The generator, which would compute the mean frame instead of the reader.
_GENERATORS = ("attn.speakers.make_utterances", "attn.speakers.make_utterance")


def _padded_case(seed, B, f, lengths, N):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(B, f, N))
    is_real = np.arange(N)[None, :] < np.array(lengths)[:, None]
    X[~np.broadcast_to(is_real[:, None, :], X.shape)] = rng.normal(size=int((~is_real).sum()) * f) * 10  # loud padding
    return X, is_real


def check_masked_mean(masked_mean):
    """Check ``masked_mean(X, is_real)``: the mean of the real columns of every sequence of a padded batch.

    Parameters
    ----------
    masked_mean : callable
        ``masked_mean(X, is_real)`` with X (B, f, N) and is_real (B, N) bool must return (B, f), without
        calling the library's poolings (``attn.pooling``).

    Returns
    -------
    str
        A short confirmation.
    """
    cases = [(0, 3, 2, (5, 2, 4), 6), (1, 1, 4, (3,), 3), (2, 4, 1, (1, 7, 7, 2), 7)]
    for seed, B, f, lengths, N in cases:
        X, is_real = _padded_case(seed, B, f, lengths, N)
        got = np.asarray(call_without(
            masked_mean, "masked_mean", X.copy(), is_real.copy(), forbidden=_POOLINGS,
            hint="zero the padded columns with is_real, sum over the columns and divide by is_real.sum(axis=1)",
        ), dtype=float)
        if got.shape != (B, f):
            raise AssertionError(f"lengths {lengths}: the result should have shape (B, f) = {(B, f)}, got {got.shape}")
        expected = pooling.mean_pool(X, is_real)
        if np.allclose(got, expected):
            continue
        if np.allclose(got, X.mean(axis=2)):
            raise AssertionError(f"lengths {lengths}: you averaged the padding too. Only the columns where is_real "
                                 "is True belong to the sequence")
        if np.allclose(got, (X * is_real[:, None, :]).sum(axis=2) / N):
            raise AssertionError(f"lengths {lengths}: the sum is right, but divide by each sequence's own number of "
                                 "real columns, is_real.sum(axis=1), not by the padded length N")
        raise AssertionError(f"lengths {lengths}: wrong mean; expected {np.round(expected, 3).tolist()}, "
                             f"got {np.round(got, 3).tolist()}")
    return f"Right: the masked mean matches on {len(cases)} padded batches, whatever the padding holds."


def check_attention_pool(pool):
    """Check ``pool(V, K, q)``: attention pooling of one sequence with one learned query.

    Parameters
    ----------
    pool : callable
        ``pool(V, K, q)`` with the columns to pool V (f, N), their keys K (d_k, N) and the query q
        (d_k,) must return the pooled vector (f,): sum_i gamma'_i V[:, i] with gamma' the softmax
        over i of K[:, i] . q / sqrt(d_k), without calling the library's poolings (``attn.pooling``).

    Returns
    -------
    str
        A short confirmation.
    """
    for seed, (f, d_k, N) in enumerate(((3, 2, 5), (2, 4, 1), (4, 3, 7))):
        rng = np.random.default_rng(20 + seed)
        V, K, q = rng.normal(size=(f, N)), rng.normal(size=(d_k, N)), 2 * rng.normal(size=d_k)
        got = np.asarray(call_without(
            pool, "pool", V.copy(), K.copy(), q.copy(), forbidden=_POOLINGS,
            hint="score every column by K[:, i] . q / sqrt(d_k), turn the scores into weights with a softmax and "
                 "mix the columns of V with them",
        ), dtype=float)
        if got.shape != (f,):
            raise AssertionError(f"(f, d_k, N) = {(f, d_k, N)}: the pooled vector should have shape ({f},), "
                                 f"got {got.shape}")
        expected = V @ softmax(K.T @ q / np.sqrt(d_k))
        if np.allclose(got, expected):
            continue
        if N > 1 and np.allclose(got, V @ softmax(K.T @ q)):
            raise AssertionError(f"(f, d_k, N) = {(f, d_k, N)}: divide the scores by sqrt(d_k) before the softmax")
        if N > 1 and np.allclose(got, V @ (K.T @ q / np.sqrt(d_k))):
            raise AssertionError(f"(f, d_k, N) = {(f, d_k, N)}: the softmax is missing: the weights must be "
                                 "positive and sum to 1")
        if N > 1 and np.allclose(got, V.mean(axis=1)):
            raise AssertionError(f"(f, d_k, N) = {(f, d_k, N)}: that is mean pooling; weight each column by its "
                                 "attention weight")
        raise AssertionError(f"(f, d_k, N) = {(f, d_k, N)}: wrong pooled vector; expected "
                             f"{np.round(expected, 3).tolist()}, got {np.round(got, 3).tolist()}")
    return "Right: attention pooling matches on 3 random sequences."


def check_mean_frame(mean_frame):
    """Check ``mean_frame(N)``: the mean of the frames of any noiseless utterance of N frames.

    Parameters
    ----------
    mean_frame : callable
        ``mean_frame(N)`` must return the (FRAME_SIZE,) mean frame of an utterance of N frames
        generated with ``noise=0``, whoever speaks, worked out from what an utterance holds, without
        generating utterances (``attn.speakers.make_utterances``).

    Returns
    -------
    str
        A short confirmation.
    """
    for N in (10, 11, 12, 30):
        got = np.asarray(call_without(
            mean_frame, "mean_frame", N, forbidden=_GENERATORS,
            hint="count how many of the N frames hold each sound, silence and each mark, and divide by N",
        ), dtype=float)
        if got.shape != (speakers.FRAME_SIZE,):
            raise AssertionError(f"N = {N}: the mean frame has {speakers.FRAME_SIZE} numbers (one per row of a "
                                 f"frame), got shape {got.shape}")
        for frames, speaker in speakers.make_utterances(30, seed=N, min_len=N, max_len=N, noise=0.0):
            expected = frames.mean(axis=1)
            if np.allclose(got, expected):
                continue
            if np.allclose(got[:speakers.SILENCE], expected[:speakers.SILENCE]) and \
                    not np.isclose(got[speakers.SILENCE], expected[speakers.SILENCE]):
                raise AssertionError(f"N = {N}: the sounds are right; silence fills the other {N - speakers.N_SOUNDS} "
                                     "frames")
            if np.allclose(got[:speakers.N_SOUNDS + 1], expected[:speakers.N_SOUNDS + 1]):
                raise AssertionError(f"N = {N}: the sounds and silence are right; each of the {speakers.N_MARKS} "
                                     "marks is on the two frames of one syllable")
            raise AssertionError(f"N = {N}: each of the {speakers.N_SOUNDS} sounds is on exactly one frame; expected "
                                 f"{np.round(expected, 4).tolist()} for speaker {speaker}, got {np.round(got, 4).tolist()}")
    return "Right: every noiseless utterance of N frames has this mean frame, whoever speaks."
