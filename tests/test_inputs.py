"""Tests for attn.inputs: text, speech and graph inputs as (d, N) sequences, and padding."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attn import inputs


# --- text -----------------------------------------------------------------------------------------

def test_one_hot_columns_are_unit_vectors():
    I = inputs.one_hot(["cat", "run", "cat"])
    assert I.shape == (len(inputs.VOCABULARY), 3)
    np.testing.assert_array_equal(I.sum(axis=0), [1, 1, 1])
    assert I[inputs.VOCABULARY.index("cat"), 0] == 1 and I[inputs.VOCABULARY.index("run"), 1] == 1
    np.testing.assert_array_equal(I[:, 0], I[:, 2])


def test_one_hot_similarity_is_identity():
    S = inputs.cosine_similarity(inputs.one_hot(inputs.VOCABULARY))
    np.testing.assert_array_equal(S, np.eye(len(inputs.VOCABULARY)))


def test_embedding_clusters():
    S = inputs.cosine_similarity(inputs.embed(inputs.VOCABULARY))
    clusters = [("run", "jump"), ("dog", "rabbit", "cat"), ("tree", "flower")]
    label = {w: c for c, group in enumerate(clusters) for w in group}
    words = inputs.VOCABULARY
    within = [S[i, j] for i in range(7) for j in range(7) if i != j and label[words[i]] == label[words[j]]]
    across = [S[i, j] for i in range(7) for j in range(7) if label[words[i]] != label[words[j]]]
    assert min(within) > 0.95 and max(across) < 0.5


def test_embed_equals_table_times_one_hot():
    words = ["tree", "dog", "dog", "jump"]
    np.testing.assert_allclose(inputs.embed(words), inputs.EMBEDDINGS @ inputs.one_hot(words))


def test_embeddings_table_is_read_only():
    with pytest.raises(ValueError):
        inputs.EMBEDDINGS[0, 0] = 5.0


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_cosine_similarity_laws(d, n, seed):
    X = np.random.default_rng(seed).normal(size=(d, n)) + 0.01
    S = inputs.cosine_similarity(X)
    np.testing.assert_allclose(S, S.T, atol=1e-12)
    np.testing.assert_allclose(np.diag(S), 1.0, atol=1e-12)
    assert np.all(np.abs(S) <= 1.0)
    np.testing.assert_allclose(inputs.cosine_similarity(3.0 * X), S, atol=1e-12)  # scale does not matter


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: inputs.one_hot("cat"), "single string"),
        (lambda: inputs.one_hot([]), "empty"),
        (lambda: inputs.one_hot(["horse"]), r"\['horse'\] are not in the vocabulary"),
        (lambda: inputs.one_hot(["a"], ["a", "a"]), "repeats"),
        (lambda: inputs.one_hot([3]), "strings"),
        (lambda: inputs.embed(["a"], np.ones((2, 3)), ["a", "b"]), r"table has shape \(2, 3\)"),
        (lambda: inputs.cosine_similarity(np.ones((2, 3)), np.ones((3, 3))), r"\(2, 3\).*\(3, 3\)"),
        (lambda: inputs.cosine_similarity(np.array([[1.0, 0.0], [0.0, 0.0]])), "column 1 is the zero vector"),
        (lambda: inputs.cosine_similarity(np.ones(3)), "2 axes"),
    ],
)
def test_text_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- speech ---------------------------------------------------------------------------------------

def test_lecture_numbers():
    assert inputs.ms_to_samples(25) == 400 and inputs.ms_to_samples(10) == 160
    assert inputs.frame_count(16000) == 98
    assert inputs.frame_count(60 * 16000) == 5998  # "1 minute = 6000 vectors", minus the edge


def test_frame_signal_columns_are_slices():
    x = np.arange(16000, dtype=float)
    F = inputs.frame_signal(x)
    assert F.shape == (400, 98)
    for t in (0, 1, 50, 97):
        np.testing.assert_array_equal(F[:, t], x[160 * t : 160 * t + 400])


@given(st.integers(0, 3000), st.integers(1, 400), st.integers(1, 200))
def test_frame_count_is_the_largest_count_that_fits(n, window, hop):
    T = inputs.frame_count(n, window, hop)
    if T > 0:
        assert (T - 1) * hop + window <= n  # the last frame ends inside the signal
    assert T * hop + window > n  # one more would not


def test_chirp_shape_and_range():
    x = inputs.chirp(0.5, 8000, 100.0, 3000.0, amplitude=0.3)
    assert x.shape == (4000,) and np.abs(x).max() <= 0.3 + 1e-12


def test_mel_filterbank_covers_every_filter():
    F = inputs.mel_filterbank(80, 512, 16000)
    assert F.shape == (80, 257)
    assert np.all(F.max(axis=1) > 0) and F.max() <= 1.0 and F.min() >= 0.0
    centres = F.argmax(axis=1)
    assert np.all(np.diff(centres) >= 0)  # filters climb in frequency


def test_mel_round_trip():
    f = np.array([0.0, 300.0, 1000.0, 8000.0])
    np.testing.assert_allclose(inputs.mel_to_hz(inputs.hz_to_mel(f)), f, atol=1e-9)
    assert abs(float(inputs.hz_to_mel(1000.0)) - 1000.0) < 1.0  # the mel scale is anchored near 1 kHz


def test_log_mel_tracks_a_rising_chirp():
    L = inputs.log_mel_features(inputs.frame_signal(inputs.chirp()))
    assert L.shape == (80, 98)
    peak = L.argmax(axis=0)
    assert peak[-1] > peak[0] + 30  # the loudest band moves up as the pitch rises


def test_log_mel_of_a_pure_tone_peaks_at_its_band():
    t = np.arange(400) / 16000
    frame = np.sin(2 * np.pi * 1000.0 * t)[:, None]
    band = int(inputs.log_mel_features(frame).argmax())
    F = inputs.mel_filterbank()
    centre_hz = F[band].argmax() * 16000 / 512
    assert abs(centre_hz - 1000.0) < 100.0


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: inputs.frame_signal(np.zeros(399)), r"shape \(399,\): shorter than one frame of 400"),
        (lambda: inputs.frame_signal(np.zeros((2, 500))), "1 axes"),
        (lambda: inputs.ms_to_samples(25, 22050), "not a whole number"),
        (lambda: inputs.ms_to_samples(-1), "positive"),
        (lambda: inputs.frame_count(-1), "non-negative"),
        (lambda: inputs.frame_count(100, 0, 10), "window must be an integer >= 1"),
        (lambda: inputs.chirp(f_end=9000.0), "Nyquist"),
        (lambda: inputs.log_mel_features(np.zeros((600, 3))), r"\(600, 3\).*n_fft"),
        (lambda: inputs.hz_to_mel(-5.0), "non-negative"),
    ],
)
def test_speech_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- graphs ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("make", [inputs.social_network, inputs.ethanol])
def test_graphs_are_well_formed(make):
    g = make()
    d, N = g.features.shape
    assert len(g.names) == N and len(g.feature_names) == d
    assert g.adjacency.shape == (N, N) and g.positions.shape == (N, 2)
    np.testing.assert_array_equal(g.adjacency, g.adjacency.T)
    assert np.all(np.diag(g.adjacency) == 0)
    assert set(np.unique(g.adjacency)) <= {0.0, 1.0}


def test_ethanol_chemistry():
    g = inputs.ethanol()
    counts = dict(zip(inputs.ELEMENTS, g.features.sum(axis=1)))
    assert counts == {"H": 6, "C": 2, "N": 0, "O": 1}  # C2H6O
    valence = {"H": 1, "C": 4, "O": 2}
    for i, name in enumerate(g.names):
        assert g.adjacency[i].sum() == valence[name.rstrip("0123456789")], name


def test_adjacency_from_edges():
    M = inputs.adjacency_from_edges(3, [(0, 1), (2, 1)])
    np.testing.assert_array_equal(M, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])


@pytest.mark.parametrize(
    "edges, message",
    [([(0, 3)], "names node 3"), ([(1, 1)], "self-loop"), ([(0, 1, 2)], "pair"), ([(0, -1)], "names node -1")],
)
def test_adjacency_bad_edges(edges, message):
    with pytest.raises(ValueError, match=message):
        inputs.adjacency_from_edges(3, edges)


# --- padding --------------------------------------------------------------------------------------

def test_pad_sequences():
    a, b = np.ones((2, 3)), 2 * np.ones((2, 1))
    padded, mask = inputs.pad_sequences([a, b], value=-1.0)
    assert padded.shape == (2, 2, 3)
    np.testing.assert_array_equal(mask, [[True, True, True], [True, False, False]])
    np.testing.assert_array_equal(padded[1], [[2, -1, -1], [2, -1, -1]])
    assert inputs.padding_fraction([3, 1]) == pytest.approx(1 - mask.mean())


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=1, max_size=8))
def test_padding_fraction_matches_the_mask(lengths):
    seqs = [np.zeros((1, n)) for n in lengths]
    _, mask = inputs.pad_sequences(seqs)
    assert inputs.padding_fraction(lengths) == pytest.approx(1 - mask.mean())
    assert (inputs.padding_fraction(lengths) == 0) == (len(set(lengths)) == 1)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: inputs.pad_sequences([]), "empty"),
        (lambda: inputs.pad_sequences([np.ones((2, 3)), np.ones((3, 3))]), r"sequences\[1\] has shape \(3, 3\)"),
        (lambda: inputs.pad_sequences([np.ones((2, 0))]), "N > 0"),
        (lambda: inputs.padding_fraction([3, 0]), "positive integers"),
        (lambda: inputs.padding_fraction([]), "positive integers"),
        (lambda: inputs.padding_fraction([1.5]), "positive integers"),
    ],
)
def test_padding_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()
