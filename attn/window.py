"""Sequence labeling before self-attention: a per-vector layer, then a window (chapter 2).

Sequences are (d, N) matrices whose columns are the vectors a^1 ... a^N, as in the rest of
:mod:`attn`. Lecture part 上, slide 10:

* a fully connected layer applied to each vector alone, y^i = W a^i + c, cannot tell two
  equal vectors apart (the two "saw" in "I saw a saw");
* a window stacks each vector with its r = ``half_width`` neighbours on either side,
  [a^{i-r}; ...; a^i; ...; a^{i+r}], so the same layer sees some context;
* but a window is fixed: to see the whole sequence it must reach the longest input, and
  its parameter count grows with it.

The layer's output at position i is called y^i here, not b^i: the book keeps b^i for the
output of self-attention.
"""

import numpy as np

from ._checks import as_array, check_count, check_sequence

#: "I saw a saw" (lecture slide 7) and its part-of-speech tags.
SAW_SENTENCE = ("I", "saw", "a", "saw")
SAW_TAGS = ("N", "V", "DET", "N")
SAW_VOCABULARY = ("I", "saw", "a")
TAGSET = ("N", "V", "DET")


def per_vector_fc(I, W, c=None):
    """A fully connected layer applied to each vector on its own.

    Parameters
    ----------
    I : (d, N) ndarray
        The sequence; column i is a^i.
    W : (d_y, d) ndarray
    c : (d_y,) ndarray, optional
        The bias; zero when None.

    Returns
    -------
    Y : (d_y, N) ndarray
        Column i is y^i = W a^i + c. It depends on a^i alone, so equal input
        columns give equal output columns, whatever W and c are.
    """
    I = check_sequence(I)
    W = as_array("W", W, ndim=2)
    if W.shape[1] != I.shape[0]:
        raise ValueError(f"W has shape {W.shape} but I has shape {I.shape}: W needs {I.shape[0]} columns")
    c = np.zeros(W.shape[0], np.result_type(I, W)) if c is None else as_array("c", c, ndim=1)
    if c.shape[0] != W.shape[0]:
        raise ValueError(f"c has shape {c.shape} but W has shape {W.shape}: c needs {W.shape[0]} entries")
    return W @ I + c[:, None]  # (d_y, d) x (d, N) -> (d_y, N)


def window_features(I, half_width):
    """Stack each vector with its ``half_width`` neighbours on either side.

    Parameters
    ----------
    I : (d, N) ndarray
        The sequence; column i is a^i.
    half_width : int
        r below: the window holds 2r + 1 vectors (r = 0 is the vector alone).

    Returns
    -------
    I_win : ((2r + 1) d, N) ndarray
        Column i is [a^{i-r}; ...; a^i; ...; a^{i+r}], oldest first; positions
        outside the sequence are zero vectors. Block m (rows m d ... (m + 1) d - 1)
        holds the neighbour at offset m - r.

    Examples
    --------
    >>> window_features(np.array([[1.0, 2.0, 3.0]]), 1)
    array([[0., 1., 2.],
           [1., 2., 3.],
           [2., 3., 0.]])
    """
    I = check_sequence(I)
    r = check_count("half_width", half_width, 0)
    d, N = I.shape
    padded = np.concatenate([np.zeros((d, r), I.dtype), I, np.zeros((d, r), I.dtype)], axis=1)  # (d, N + 2r)
    return np.concatenate([padded[:, m : m + N] for m in range(2 * r + 1)], axis=0)


def window_fc(I, W, c=None, *, half_width):
    """A fully connected layer applied to each window of 2r + 1 vectors, r = ``half_width``.

    Parameters
    ----------
    I : (d, N) ndarray
    W : (d_y, (2r + 1) d) ndarray
    c : (d_y,) ndarray, optional
    half_width : int
        r: the window sees r vectors on each side.

    Returns
    -------
    Y : (d_y, N) ndarray
        Column i is y^i = W [a^{i-r}; ...; a^{i+r}] + c.
    """
    I_win = window_features(I, half_width)
    W = as_array("W", W, ndim=2)
    if W.shape[1] != I_win.shape[0]:
        raise ValueError(
            f"W has shape {W.shape} but a window of 2r+1 = {2 * half_width + 1} vectors of size {I_win.shape[0] // (2 * half_width + 1)} "
            f"has {I_win.shape[0]} entries: W needs {I_win.shape[0]} columns"
        )
    return per_vector_fc(I_win, W, c)


def fc_parameter_count(d_in, d_y):
    """Weights plus biases of a fully connected layer: d_in d_y + d_y, an int.

    >>> fc_parameter_count(429, 1024)
    440320
    """
    d_in = check_count("d_in", d_in, 1)
    d_y = check_count("d_y", d_y, 1)
    return d_in * d_y + d_y


def window_parameter_count(d, half_width, d_y):
    """Parameters of a fully connected layer on windows of 2r + 1 vectors of size d, r = ``half_width``.

    Parameters
    ----------
    d : int
        Size of each vector (39 for MFCC frames).
    half_width : int
        r: the window sees r vectors on each side.
    d_y : int
        Outputs of the layer.

    Returns
    -------
    int
        ((2r + 1) d + 1) d_y: linear in the window size.

    >>> window_parameter_count(39, 5, 1024)
    440320
    """
    d = check_count("d", d, 1)
    r = check_count("half_width", half_width, 0)
    return fc_parameter_count((2 * r + 1) * d, d_y)


def fit_fc(I_win, T):
    """Least-squares weights of a fully connected layer: W I_win + c is as close to T as it can be.

    Parameters
    ----------
    I_win : (d_in, N) ndarray
        Inputs as columns (e.g. :func:`window_features`).
    T : (d_y, N) ndarray
        Targets as columns (e.g. one-hot tags).

    Returns
    -------
    W : (d_y, d_in) ndarray
    c : (d_y,) ndarray
        The minimum-norm solution of min ||W I_win + c 1^T - T||^2.
    """
    I_win = check_sequence(I_win)
    T = as_array("T", T, ndim=2)
    if T.shape[1] != I_win.shape[1]:
        raise ValueError(f"I_win has shape {I_win.shape} and T has shape {T.shape}: they need the same number of columns N")
    I_win1 = np.vstack([I_win, np.ones((1, I_win.shape[1]))])  # (d_in + 1, N): the bias as a constant input
    Wc = np.linalg.lstsq(I_win1.T, T.T, rcond=None)[0].T  # (d_y, d_in + 1)
    return Wc[:, :-1], Wc[:, -1]


def predict_tags(Y, tagset=TAGSET):
    """The tag with the largest score in each column.

    Parameters
    ----------
    Y : (n_tags, N) ndarray
        Scores; row t belongs to tagset[t].
    tagset : sequence of str, length n_tags

    Returns
    -------
    list of str, length N
        Ties (two tags within 1e-9 of the top) come back as "?", since the model cannot decide.
    """
    Y = check_sequence(Y)
    tagset = list(tagset)
    if len(tagset) != Y.shape[0]:
        raise ValueError(f"Y has shape {Y.shape} but tagset has {len(tagset)} tags: one row per tag")
    top = Y.max(axis=0)
    tied = (Y >= top - 1e-9).sum(axis=0) > 1
    return ["?" if t else tagset[int(j)] for j, t in zip(Y.argmax(axis=0), tied)]


def long_range_pair(gap):
    """Two sentences whose last word needs a tag decided by their first word.

    "yesterday after a very ... very long walk I read" (read: past tense) and
    "usually after a very ... very long walk I read" (read: present tense) differ
    only in their first word, so the tag of the last word depends on a word N - 1 positions away.

    Parameters
    ----------
    gap : int
        How many times "very" is repeated (>= 1); N = gap + 7.

    Returns
    -------
    past, present : list of str
        The two sentences.
    past_tags, present_tags : list of str
        Their tags; they differ only in the last entry ("V-past" vs "V-pres").
    """
    gap = check_count("gap", gap, 1)
    middle = ["after", "a"] + ["very"] * gap + ["long", "walk", "I", "read"]
    middle_tags = ["P", "DET"] + ["ADV"] * gap + ["ADJ", "N", "N"]
    past = ["yesterday"] + middle
    present = ["usually"] + middle
    return past, present, ["ADV"] + middle_tags + ["V-past"], ["ADV"] + middle_tags + ["V-pres"]


#: Every word of :func:`long_range_pair`, for one-hot vectors.
LONG_RANGE_VOCABULARY = ("yesterday", "usually", "after", "a", "very", "long", "walk", "I", "read")
