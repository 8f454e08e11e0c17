"""Synthetic speakers for chapter 11: one label for a whole sequence of frames.

An utterance is a sequence of N frames, ``I`` of shape (d, N) with the lecture's columns
a^1 ... a^N, and its label is who spoke it. The speakers are made so that their
identity lives only in which frames belong together:

* there are 4 **sounds** and a **silence** frame. Every utterance holds each of the 4 sounds
  exactly once, whoever speaks, and silence everywhere else;
* a speaker joins the 4 sounds into 2 **syllables** of two sounds each (its *pairing*). No
  two speakers join the same two sounds: speaker s joins sound x with sound x XOR (s + 1),
  so the 3 speakers' pairings are the 3 ways to split 4 sounds into two pairs;
* the two frames of a syllable share a **mark**, one of 2, and the 2 syllables of an
  utterance carry the 2 marks in a random order. The marks say which frames go together;
  which sounds they join says who speaks;
* sound frames stand at least ``gap`` positions apart (3 by default). With gap 3 no window
  of 3 consecutive frames (a frame and its neighbour on each side) holds two sounds.

A frame is ``[onehot(sound or silence); onehot(mark)]`` (5 + 2 = 7 numbers; silence has no
mark) plus Gaussian noise. Every utterance holds every sound once and every mark twice, so
without noise the mean of its frames depends on its length N only; N and the noise are drawn
independently of the speaker, so the mean frame has the same distribution for every speaker.

Randomness only comes from ``np.random.default_rng(seed)``.
"""

import numpy as np

from ._checks import as_array, check_count

N_SOUNDS = 4
N_MARKS = N_SOUNDS // 2
SILENCE = N_SOUNDS  # row of the silence frame's one-hot entry
FRAME_SIZE = N_SOUNDS + 1 + N_MARKS  # d = 7
MAX_SPEAKERS = N_SOUNDS - 1  # disjoint pairings of 4 sounds: at most 3


def check_speakers(n_speakers):
    """Return ``n_speakers`` as an int in 2 .. 3, or raise ValueError."""
    n = check_count("n_speakers", n_speakers, 2)
    if n > MAX_SPEAKERS:
        raise ValueError(f"n_speakers must be at most {MAX_SPEAKERS} (4 sounds have at most 3 disjoint pairings), "
                         f"got {n}")
    return n


def pairing(speaker):
    """The 2 syllables of a speaker: pairs (x, y) of sounds with x < y.

    Parameters
    ----------
    speaker : int
        0, 1 or 2. Speaker s joins sound x with sound x XOR (s + 1).

    Returns
    -------
    list of (int, int)

    Examples
    --------
    >>> pairing(0), pairing(1), pairing(2)
    ([(0, 1), (2, 3)], [(0, 2), (1, 3)], [(0, 3), (1, 2)])
    """
    s = check_count("speaker", speaker, 0)
    if s >= MAX_SPEAKERS:
        raise ValueError(f"speaker must be in 0..{MAX_SPEAKERS - 1}, got {s}")
    return sorted({(min(x, x ^ (s + 1)), max(x, x ^ (s + 1))) for x in range(N_SOUNDS)})


def partner_of(speaker):
    """(4,) int array: ``partner_of(s)[x]`` is the sound that speaker s joins with sound x."""
    pairing(speaker)  # checks speaker
    return np.arange(N_SOUNDS) ^ (int(speaker) + 1)


def make_utterance(speaker, N, rng, *, gap=3, noise=0.1):
    """One utterance of a speaker.

    Parameters
    ----------
    speaker : int
    N : int
        Number of frames, at least ``(N_SOUNDS - 1) * gap + 1``.
    rng : numpy.random.Generator
    gap : int
        Smallest distance between two sound frames.
    noise : float
        Standard deviation of the Gaussian noise added to every entry.

    Returns
    -------
    frames : (FRAME_SIZE, N) ndarray
    sounds : (N,) ndarray of int
        The sound of each frame, ``SILENCE`` (4) for silence.
    marks : (N,) ndarray of int
        The mark of each sound frame, -1 for silence.
    """
    partner = partner_of(speaker)
    span = (N_SOUNDS - 1) * gap + 1
    if N < span:
        raise ValueError(f"N = {N} frames cannot hold {N_SOUNDS} sounds {gap} apart: N must be at least {span}")
    # N_SOUNDS sorted slots among N - (N_SOUNDS - 1)(gap - 1), spread by gap - 1 per rank: all >= gap apart
    slots = np.sort(rng.choice(N - (N_SOUNDS - 1) * (gap - 1), size=N_SOUNDS, replace=False))
    positions = slots + (gap - 1) * np.arange(N_SOUNDS)
    order = rng.permutation(N_SOUNDS)  # which sound stands at each position
    sounds = np.full(N, SILENCE)
    sounds[positions] = order
    syllable_mark = rng.permutation(N_MARKS)  # syllable k (of the pairing) gets mark syllable_mark[k]
    first = np.minimum(np.arange(N_SOUNDS), partner)  # a syllable is named by its smaller sound
    syllable_of = {x: k for k, x in enumerate(sorted(set(first.tolist())))}
    marks = np.full(N, -1)
    marks[positions] = [syllable_mark[syllable_of[int(first[x])]] for x in order]
    frames = np.zeros((FRAME_SIZE, N))
    frames[sounds, np.arange(N)] = 1.0
    frames[N_SOUNDS + 1 + marks[positions], positions] = 1.0
    frames += noise * rng.standard_normal(frames.shape)
    return frames, sounds, marks


def markings(frames, sounds, marks):
    """The same utterance marked in each of the 6 ways the 3 speakers can mark it.

    Every speaker marks an utterance in 2 ways (which of its syllables gets mark 1), so the 4
    sounds of one utterance can carry their marks in 6 ways, one speaker for each pair of them.
    The positions, the sounds and the noise stay as they are; only the mark rows of the 4 sound
    frames change.

    Parameters
    ----------
    frames : (FRAME_SIZE, N) ndarray
    sounds, marks : (N,) ndarray of int
        As returned by :func:`make_utterance` (or ``make_utterances(..., layout=True)``).

    Returns
    -------
    variants : (6, FRAME_SIZE, N) ndarray
        Variant 2 s + o is the utterance as speaker s marks it, with mark 1 on its syllable ``o``
        (0 or 1) of :func:`pairing` (code counts marks from 0: mark 1 is mark index 0).
    speakers : (6,) ndarray of int
        ``[0, 0, 1, 1, 2, 2]``: who speaks each variant.
    """
    frames = as_array("frames", frames, ndim=2)
    sounds, marks = np.asarray(sounds), np.asarray(marks)
    if frames.shape[0] != FRAME_SIZE or sounds.shape != (frames.shape[1],) or marks.shape != sounds.shape:
        raise ValueError(f"frames {frames.shape}, sounds {sounds.shape} and marks {marks.shape} do not fit: frames "
                         f"needs {FRAME_SIZE} rows and one column per entry of sounds and marks")
    at = np.flatnonzero(sounds != SILENCE)
    if sorted(sounds[at].tolist()) != list(range(N_SOUNDS)) or sorted(marks[at].tolist()) != [0, 0, 1, 1]:
        raise ValueError("sounds and marks must hold each sound once and each mark on two sound frames")
    plain = frames.copy()
    plain[N_SOUNDS + 1 + marks[at], at] -= 1.0  # take the marks off, keep the noise
    variants, who = [], []
    for speaker in range(MAX_SPEAKERS):
        syllable = {x: k for k, pair in enumerate(pairing(speaker)) for x in pair}  # sound -> its syllable, 0 or 1
        for first in range(N_MARKS):  # the syllable that gets mark index 0
            variant = plain.copy()
            variant[N_SOUNDS + 1 + np.array([int(syllable[int(x)] != first) for x in sounds[at]]), at] += 1.0
            variants.append(variant)
            who.append(speaker)
    return np.stack(variants), np.array(who)


def make_utterances(n, seed, *, n_speakers=3, min_len=10, max_len=12, gap=3, noise=0.1, layout=False):
    """Generate ``n`` labelled utterances, speakers drawn uniformly.

    Parameters
    ----------
    n : int
    seed : int
        Seed of ``np.random.default_rng``; the same seed gives the same utterances.
    n_speakers : int
        2 or 3; the labels are 0 ... n_speakers - 1.
    min_len, max_len : int
        Lengths N are drawn uniformly from ``min_len .. max_len`` (both included); ``min_len`` is
        at least ``(N_SOUNDS - 1) * gap + 1``, the shortest utterance that holds the 4 sounds.
    gap : int
        Smallest distance between two sound frames (>= 1).
    noise : float
        Standard deviation of the noise on every entry (>= 0).
    layout : bool
        Also return each utterance's sounds and marks.

    Returns
    -------
    list of (frames, speaker)
        ``frames`` is (FRAME_SIZE, N); with ``layout=True`` each item is
        (frames, speaker, sounds, marks), see :func:`make_utterance`.

    Examples
    --------
    >>> frames, speaker = make_utterances(1, seed=0)[0]
    >>> frames.shape[0], 10 <= frames.shape[1] <= 12
    (7, True)
    """
    n = check_count("n", n, 1)
    n_speakers = check_speakers(n_speakers)
    gap = check_count("gap", gap, 1)
    min_len = check_count("min_len", min_len, (N_SOUNDS - 1) * gap + 1)
    max_len = check_count("max_len", max_len, min_len)
    if not noise >= 0:
        raise ValueError(f"noise must be >= 0, got {noise!r}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        speaker = int(rng.integers(n_speakers))
        frames, sounds, marks = make_utterance(speaker, int(rng.integers(min_len, max_len + 1)), rng,
                                               gap=gap, noise=noise)
        out.append((frames, speaker, sounds, marks) if layout else (frames, speaker))
    return out


def check_frames(I, is_real, name="I"):
    """Check a padded batch: ``I`` (B, d, N) float and ``is_real`` (B, N) bool with a real frame in every row.

    Returns
    -------
    (ndarray, ndarray)
        ``I`` as float, ``is_real`` as bool.
    """
    I = as_array(name, I, ndim=3)
    is_real = np.asarray(is_real)
    if is_real.dtype != bool or is_real.shape != (I.shape[0], I.shape[2]):
        raise ValueError(f"is_real must be a bool array of shape (B, N) = {(I.shape[0], I.shape[2])} for {name} of "
                         f"shape {I.shape}, got dtype {is_real.dtype} and shape {is_real.shape}")
    empty = np.flatnonzero(~is_real.any(axis=1))
    if empty.size:
        raise ValueError(f"utterance {int(empty[0])} of the batch has no real frame (is_real[{int(empty[0])}] is all "
                         "False)")
    return I, is_real


def pad_batch(utterances, length=None):
    """Stack utterances of different lengths into one padded batch.

    Parameters
    ----------
    utterances : list of (frames, speaker)
        ``frames`` (d, N_b), the same d for all.
    length : int, optional
        Pad every utterance to this many frames (at least the longest); default: the longest.

    Returns
    -------
    I : (B, d, N) ndarray
        Utterance b in ``I[b, :, :N_b]``, zeros after it (the padding).
    is_real : (B, N) bool ndarray
        ``is_real[b, i]`` is True where frame i of utterance b is a real frame.
    speakers : (B,) int ndarray
    """
    if len(utterances) == 0:
        raise ValueError("utterances is empty")
    frames = [as_array(f"utterances[{k}][0]", u[0], ndim=2) for k, u in enumerate(utterances)]
    d = {f.shape[0] for f in frames}
    if len(d) != 1:
        raise ValueError(f"every utterance needs the same frame size d; got sizes {sorted(d)}")
    longest = max(f.shape[1] for f in frames)
    N = longest if length is None else check_count("length", length, longest)
    I = np.zeros((len(frames), d.pop(), N))
    is_real = np.zeros((len(frames), N), dtype=bool)
    for b, f in enumerate(frames):
        I[b, :, :f.shape[1]] = f
        is_real[b, :f.shape[1]] = True
    speakers = np.array([int(u[1]) for u in utterances], dtype=np.intp)
    return I, is_real, speakers


def batches(utterances, batch_size, *, seed=None):
    """Cut utterances into padded batches ``((I, is_real), speakers)`` for the training loop.

    Parameters
    ----------
    utterances : list of (frames, speaker)
    batch_size : int
    seed : int, optional
        Shuffle the utterances first with this seed, so that a batch mixes lengths; None keeps
        the order.

    Returns
    -------
    list of ((I, is_real), speakers)
        See :func:`pad_batch`.
    """
    batch_size = check_count("batch_size", batch_size, 1)
    if len(utterances) == 0:
        raise ValueError("utterances is empty")
    order = np.arange(len(utterances)) if seed is None else np.random.default_rng(seed).permutation(len(utterances))
    out = []
    for start in range(0, len(order), batch_size):
        I, is_real, speakers = pad_batch([utterances[k] for k in order[start:start + batch_size]])
        out.append(((I, is_real), speakers))
    return out
