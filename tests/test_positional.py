"""attn.positional: the sinusoidal table, its shift rotation, learned tables, relative biases."""

import numpy as np
import pytest

import attn
from attn import positional


# --- sinusoidal ---------------------------------------------------------------------------------

def test_sinusoidal_small_table_by_hand():
    E = positional.sinusoidal(4, 3)
    p = np.arange(3)
    expected = np.array([np.sin(p), np.cos(p), np.sin(p / 100.0), np.cos(p / 100.0)])
    np.testing.assert_allclose(E, expected, rtol=0, atol=1e-15)


def test_sinusoidal_formula_entry_by_entry():
    d, N = 8, 6
    E = positional.sinusoidal(d, N)
    assert E.shape == (d, N)
    for p in range(N):
        for m in range(d // 2):
            angle = p / 10000 ** (2 * m / d)
            assert E[2 * m, p] == pytest.approx(np.sin(angle), abs=1e-15)
            assert E[2 * m + 1, p] == pytest.approx(np.cos(angle), abs=1e-15)


def test_first_position_is_zeros_and_ones():
    E = positional.sinusoidal(6, 1)
    np.testing.assert_array_equal(E[:, 0], [0.0, 1.0, 0.0, 1.0, 0.0, 1.0])


def test_sinusoidal_prefix_does_not_depend_on_N():
    np.testing.assert_array_equal(positional.sinusoidal(10, 5), positional.sinusoidal(10, 50)[:, :5])


def test_every_column_has_norm_sqrt_d_over_2():
    E = positional.sinusoidal(16, 40)
    np.testing.assert_allclose(np.linalg.norm(E, axis=0), np.sqrt(8.0), rtol=1e-14)


def test_columns_are_distinct():
    E = positional.sinusoidal(8, 200)
    G = E.T @ E
    off_diagonal = G[~np.eye(200, dtype=bool)]
    assert off_diagonal.max() < 4.0 - 1e-6  # e^i . e^j < |e|^2 = d/2 whenever i != j


def test_frequencies_run_from_one_down():
    omega = positional.frequencies(8)
    np.testing.assert_allclose(omega, [1.0, 10000 ** -0.25, 10000 ** -0.5, 10000 ** -0.75], rtol=1e-15)


@pytest.mark.parametrize("d", [0, -2, 3, 7, 2.0, "4", True, None])
def test_sinusoidal_rejects_bad_d(d):
    with pytest.raises(ValueError, match=r"d must be an even integer > 0.*got " + repr(d).replace("(", r"\(")):
        positional.sinusoidal(d, 3)


@pytest.mark.parametrize("N", [0, -1, 1.5, "3", None])
def test_sinusoidal_rejects_bad_N(N):
    with pytest.raises(ValueError, match=r"N must be an integer >= 1, got " + repr(N)):
        positional.sinusoidal(4, N)


def test_sinusoidal_accepts_numpy_integers():
    np.testing.assert_array_equal(positional.sinusoidal(np.int64(4), np.int32(3)), positional.sinusoidal(4, 3))
