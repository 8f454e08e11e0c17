"""Inputs of a sequence model: a sequence is a set of vectors (chapter 1).

Every sequence is a matrix ``I`` of shape (d, N) whose column i is the vector a^i,
as in the rest of :mod:`attn`. This module builds such matrices from the three
kinds of data the lecture starts from (part 上, slides 2-6):

* text: one-hot vectors over a vocabulary, or rows of a small hand-made
  embedding table whose clusters are chosen on purpose;
* speech (:mod:`attn.speech`, importable from here): a 16 kHz signal cut into
  25 ms frames every 10 ms, optionally turned into log mel filter-bank vectors;
* graphs: node features plus an adjacency matrix (a social network, a molecule).

It also pads sequences of different lengths into one array and measures what the
padding costs. Everything is numpy only.
"""

from typing import NamedTuple

import numpy as np

from ._checks import as_array, check_count
# Chapter 1 reads the speech helpers as inputs.<name>; they live in attn.speech.
from .speech import (chirp, frame_count, frame_signal, hz_to_mel, log_mel_features, mel_filterbank,  # noqa: F401
                     mel_to_hz, ms_to_samples)

# --- text ---------------------------------------------------------------------------------------

#: The toy vocabulary of chapter 1: three clusters on lecture slide 3.
VOCABULARY = ("run", "jump", "dog", "rabbit", "cat", "tree", "flower")

#: Names of the hand-made embedding dimensions (rows of :data:`EMBEDDINGS`).
EMBEDDING_AXES = ("is an action", "is an animal", "is a plant", "has legs")

#: A hand-made word-embedding table E, shape (4, 7): column w is the embedding of VOCABULARY[w].
#: The values are chosen, not learned, so that run/jump, dog/rabbit/cat and tree/flower cluster.
EMBEDDINGS = np.array(
    [
        # run   jump   dog   rabbit  cat   tree  flower
        [0.90, 0.85, 0.10, 0.15, 0.05, 0.00, 0.00],  # is an action
        [0.05, 0.10, 0.95, 0.90, 0.92, 0.00, 0.05],  # is an animal
        [0.00, 0.00, 0.00, 0.05, 0.00, 0.95, 0.90],  # is a plant
        [0.40, 0.45, 0.35, 0.40, 0.30, 0.00, 0.05],  # has legs
    ]
)
EMBEDDINGS.setflags(write=False)


def _check_words(name, words):
    if isinstance(words, str):
        raise ValueError(f"{name} must be a sequence of words, got the single string {words!r}: wrap it in a list")
    words = list(words)
    if not words:
        raise ValueError(f"{name} is empty: a sequence needs at least one word (N > 0)")
    for w in words:
        if not isinstance(w, str):
            raise ValueError(f"{name} must hold strings, got {w!r} of type {type(w).__name__}")
    return words


def _index(words, vocabulary):
    position = {w: v for v, w in enumerate(vocabulary)}
    missing = [w for w in words if w not in position]
    if missing:
        raise ValueError(f"words {missing} are not in the vocabulary {tuple(vocabulary)}")
    return [position[w] for w in words]


def one_hot(words, vocabulary=VOCABULARY):
    """One-hot vectors (獨熱編碼) of a list of words, as columns.

    Parameters
    ----------
    words : sequence of str, length N
        The sentence a^1 ... a^N.
    vocabulary : sequence of str, length n_vocab
        The words that get a dimension each, in order; no repeats.

    Returns
    -------
    I : (n_vocab, N) ndarray
        Column i is o_w, the one-hot vector of words[i]: 1 in entry w, the position of
        words[i] in the vocabulary, and 0 everywhere else.

    Examples
    --------
    >>> one_hot(["b", "a", "b"], vocabulary=["a", "b"])
    array([[0., 1., 0.],
           [1., 0., 1.]])
    """
    words = _check_words("words", words)
    vocabulary = _check_words("vocabulary", vocabulary)
    if len(set(vocabulary)) != len(vocabulary):
        repeated = sorted({w for w in vocabulary if vocabulary.count(w) > 1})
        raise ValueError(f"vocabulary repeats {repeated}: each word needs exactly one dimension")
    I = np.zeros((len(vocabulary), len(words)))
    I[_index(words, vocabulary), np.arange(len(words))] = 1.0
    return I


def embed(words, table=EMBEDDINGS, vocabulary=VOCABULARY):
    """Look words up in an embedding table (詞嵌入 word embedding).

    Parameters
    ----------
    words : sequence of str, length N
    table : (d, n_vocab) ndarray
        The embedding table E; column w is the embedding of vocabulary[w].
    vocabulary : sequence of str, length n_vocab

    Returns
    -------
    I : (d, N) ndarray
        Column i is the embedding E o_w of words[i]; equals ``table @ one_hot(words, vocabulary)``.
    """
    words = _check_words("words", words)
    vocabulary = _check_words("vocabulary", vocabulary)
    table = as_array("table", table, ndim=2)
    if table.shape[1] != len(vocabulary):
        raise ValueError(
            f"table has shape {table.shape} but the vocabulary has {len(vocabulary)} words: "
            f"it needs one column per word"
        )
    return table[:, _index(words, vocabulary)]


def cosine_similarity(X, Y=None):
    """Cosine similarity of every pair of columns.

    Parameters
    ----------
    X : (d, N) ndarray
    Y : (d, M) ndarray, optional
        Defaults to X.

    Returns
    -------
    S : (N, M) ndarray
        S[i, j] = x^i . y^j / (|x^i| |y^j|), between -1 and 1.

    Examples
    --------
    >>> cosine_similarity(np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0]]))
    array([[1., 0., 1.],
           [0., 1., 0.],
           [1., 0., 1.]])
    """
    X = as_array("X", X, ndim=2)
    Y = X if Y is None else as_array("Y", Y, ndim=2)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X has shape {X.shape} and Y has shape {Y.shape}: columns must have the same size d")
    for name, M in (("X", X), ("Y", Y)):
        norms = np.linalg.norm(M, axis=0)
        if np.any(norms == 0):
            raise ValueError(f"{name} column {int(np.argmin(norms))} is the zero vector: its direction is undefined")
    Xn = X / np.linalg.norm(X, axis=0)
    Yn = Y / np.linalg.norm(Y, axis=0)
    return np.clip(Xn.T @ Yn, -1.0, 1.0)  # (N, d) x (d, M) -> (N, M)


# --- graphs -------------------------------------------------------------------------------------

class Graph(NamedTuple):
    """A graph as a sequence: node features as columns plus who is connected to whom.

    Attributes
    ----------
    names : tuple of str, length N
        One label per node.
    features : (d, N) ndarray
        Column i is node i's vector a^i.
    feature_names : tuple of str, length d
    adjacency : (N, N) ndarray
        adjacency[i, j] = 1 when nodes i and j are linked (symmetric, zero diagonal).
    positions : (N, 2) ndarray
        Where to draw each node (x, y); only for pictures.
    """

    names: tuple
    features: np.ndarray
    feature_names: tuple
    adjacency: np.ndarray
    positions: np.ndarray


def adjacency_from_edges(n_nodes, edges):
    """Symmetric 0/1 adjacency matrix of an undirected graph.

    Parameters
    ----------
    n_nodes : int
    edges : sequence of (int, int)
        Pairs of 0-based node indices; no self-loops.

    Returns
    -------
    (n_nodes, n_nodes) ndarray
    """
    n_nodes = check_count("n_nodes", n_nodes, 1)
    M = np.zeros((n_nodes, n_nodes))
    for edge in edges:
        if len(edge) != 2:
            raise ValueError(f"edge {edge!r} must be a pair of node indices")
        i, j = edge
        for k in (i, j):
            if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < n_nodes:
                raise ValueError(f"edge {edge!r} names node {k!r}, but nodes are 0 ... {n_nodes - 1}")
        if i == j:
            raise ValueError(f"edge {edge!r} is a self-loop")
        M[i, j] = M[j, i] = 1.0
    return M


#: Chemical elements that get a one-hot dimension in :func:`ethanol`.
ELEMENTS = ("H", "C", "N", "O")


def social_network():
    """A six-person social network: profile vectors and friendships (slide 5).

    Returns
    -------
    Graph
        features : (4, 6), rows age in decades, posts a week, likes sport, likes music.
    """
    names = ("Ann", "Ben", "Chen", "Dan", "Eve", "Fei")
    features = np.array(
        [
            [2.3, 3.1, 2.7, 4.5, 1.9, 3.4],  # age / 10
            [5.0, 1.0, 3.0, 0.0, 8.0, 2.0],  # posts a week
            [1.0, 0.0, 1.0, 0.0, 1.0, 0.0],  # likes sport
            [0.0, 1.0, 1.0, 1.0, 0.0, 1.0],  # likes music
        ]
    )
    edges = [(0, 1), (0, 2), (0, 4), (1, 3), (2, 4), (2, 5), (3, 5)]
    angles = np.pi / 2 - 2 * np.pi * np.arange(6) / 6
    positions = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return Graph(names, features, ("age / 10", "posts a week", "likes sport", "likes music"),
                 adjacency_from_edges(6, edges), positions)


def ethanol():
    """Ethanol, CH3-CH2-OH, as a graph: each atom a one-hot vector over :data:`ELEMENTS` (slide 6).

    Returns
    -------
    Graph
        9 atoms (2 C, 1 O, 6 H); features : (4, 9) one-hot columns; adjacency holds the 8 bonds.
    """
    atoms = ("C", "C", "O", "H", "H", "H", "H", "H", "H")
    names = tuple(f"{a}{i + 1}" for i, a in enumerate(atoms))
    bonds = [(0, 1), (1, 2), (0, 3), (0, 4), (0, 5), (1, 6), (1, 7), (2, 8)]
    positions = np.array(
        [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [-0.8, 0.0], [0.0, 0.8], [0.0, -0.8],
         [1.0, 0.8], [1.0, -0.8], [2.6, 0.6]]
    )
    return Graph(names, one_hot(atoms, ELEMENTS), ELEMENTS, adjacency_from_edges(9, bonds), positions)


# --- variable length ----------------------------------------------------------------------------

def pad_sequences(sequences, value=0.0):
    """Pad sequences of different lengths to one array, with which positions are real.

    Parameters
    ----------
    sequences : list of (d, N_b) ndarray
        B sequences with the same d and any lengths N_b >= 1.
    value : float
        What fills the padded positions.

    Returns
    -------
    padded : (B, d, N) ndarray
        N is the longest N_b; padded[b, :, :N_b] is sequence b, the rest is ``value``.
    is_real : (B, N) bool ndarray
        is_real[b, i] is True where position i of sequence b is real. Not a mask in the
        sense of attention masks, which are (N_k, N_q): ``key_padding_mask(is_real[b])`` is
        sequence b's.
    """
    sequences = list(sequences)
    if not sequences:
        raise ValueError("sequences is empty: nothing to pad")
    arrays = [as_array(f"sequences[{b}]", s, ndim=2) for b, s in enumerate(sequences)]
    d = arrays[0].shape[0]
    for b, s in enumerate(arrays):
        if s.shape[0] != d:
            raise ValueError(f"sequences[{b}] has shape {s.shape} but sequences[0] has {d} rows: d must agree")
        if s.shape[1] == 0:
            raise ValueError(f"sequences[{b}] has shape {s.shape}: every sequence needs N > 0")
    n_max = max(s.shape[1] for s in arrays)
    padded = np.full((len(arrays), d, n_max), float(value))
    is_real = np.zeros((len(arrays), n_max), dtype=bool)
    for b, s in enumerate(arrays):
        padded[b, :, : s.shape[1]] = s
        is_real[b, : s.shape[1]] = True
    return padded, is_real


def padding_fraction(lengths):
    """Fraction of the padded array that is padding when sequences of these lengths share one array.

    Parameters
    ----------
    lengths : sequence of int
        N_1 ... N_B, each >= 1.

    Returns
    -------
    float
        1 - sum(N_b) / (B * max(N_b)).

    Examples
    --------
    >>> padding_fraction([2, 4])
    0.25
    """
    lengths = np.asarray(list(lengths))
    if lengths.ndim != 1 or lengths.size == 0 or lengths.dtype.kind not in "iu" or np.any(lengths < 1):
        raise ValueError(f"lengths must be a non-empty list of positive integers, got {lengths.tolist()!r}")
    return float(1.0 - lengths.sum() / (lengths.size * lengths.max()))
