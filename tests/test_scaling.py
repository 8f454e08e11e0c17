"""attn.scaling: ReLU weights, the softmax Jacobian and the saturation experiment."""

import numpy as np
import pytest

import attn
from attn import scaling


def test_relu_weights():
    np.testing.assert_array_equal(scaling.relu_weights([2.0, -1.0, 0.5]), [2.0, 0.0, 0.5])
    A = np.array([[1.0, -2.0], [-3.0, 4.0]])
    np.testing.assert_array_equal(scaling.relu_weights(A), [[1.0, 0.0], [0.0, 4.0]])


@pytest.mark.parametrize("alpha, message", [(3.0, r"shape \(\)"), (np.ones((2, 2, 2)), "shape"),
                                            ([1.0, np.nan], "finite")])
def test_relu_weights_rejects_bad_input(alpha, message):
    with pytest.raises(ValueError, match=message):
        scaling.relu_weights(alpha)


def test_softmax_jacobian_matches_finite_differences():
    x = np.array([0.3, -1.2, 2.0, 0.1])
    p = attn.softmax(x)
    J = scaling.softmax_jacobian(p)
    h = 1e-6
    numeric = np.column_stack([(attn.softmax(x + h * e) - attn.softmax(x - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(J, numeric, atol=1e-8)


def test_softmax_jacobian_vanishes_when_saturated():
    assert np.linalg.norm(scaling.softmax_jacobian(attn.softmax([50.0, 0.0, 0.0]))) < 1e-20


@pytest.mark.parametrize("p", [[0.5, 0.6], [-0.5, 1.5], [], np.eye(2)])
def test_softmax_jacobian_rejects_non_probabilities(p):
    with pytest.raises(ValueError, match="p must"):
        scaling.softmax_jacobian(p)


def test_plain_scores_saturate_and_scaled_ones_do_not():
    d_ks = [1, 16, 256]
    plain = scaling.saturation_experiment(d_ks, trials=300)
    scaled = scaling.saturation_experiment(d_ks, trials=300, scaled=True)
    np.testing.assert_allclose(plain["score_std"], np.sqrt(d_ks), rtol=0.15)
    np.testing.assert_allclose(scaled["score_std"], 1.0, rtol=0.15)
    assert np.all(np.diff(plain["max_weight"]) > 0) and plain["max_weight"][-1] > 0.9
    assert np.all(np.diff(plain["jacobian_norm"]) < 0) and plain["jacobian_norm"][-1] < 0.15
    assert np.ptp(scaled["max_weight"]) < 0.1 and np.ptp(scaled["jacobian_norm"]) < 0.05


def test_saturation_experiment_is_reproducible():
    a = scaling.saturation_experiment([4, 8], trials=20, seed=7)
    b = scaling.saturation_experiment([4, 8], trials=20, seed=7)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])


@pytest.mark.parametrize("kwargs, message", [({"d_ks": []}, "d_ks"), ({"d_ks": [0, 4]}, "d_ks"),
                                             ({"d_ks": [2.5]}, "d_ks"), ({"d_ks": [4], "N": 0}, "N must"),
                                             ({"d_ks": [4], "trials": True}, "trials must")])
def test_saturation_experiment_rejects_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        scaling.saturation_experiment(**kwargs)
