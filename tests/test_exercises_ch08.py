"""The checkers of chapter 8 (compared with CNNs and RNNs): a reference solution passes, typical wrong answers fail with a hint."""

import numpy as np
import pytest

from attn import compare
from attn.exercises import ch08

# --- reference solutions (the same ones the chapter folds away) ------------------------------------


def projection_reference(kernel):
    C_out, C_in, k, _ = kernel.shape
    p = k // 2
    return np.concatenate([kernel[:, :, dr + p, dc + p] for dr in range(-p, p + 1) for dc in range(-p, p + 1)], axis=1)


def layers_reference(N, k):
    r = (k - 1) // 2
    return -(-(N - 1) // r)  # ceil((N - 1) / r)


def step_reference(S, z, q, k, v):
    phi = compare.elu_feature_map
    S, z = S + np.outer(v, phi(k)), z + phi(k)
    return S, z, S @ phi(q) / (z @ phi(q))


# --- W_o of the offset heads ----------------------------------------------------------------------

def test_projection_right():
    assert ch08.check_output_projection(projection_reference).startswith("Right:")


@pytest.mark.parametrize("wrong, hint", [
    (lambda kernel: kernel.reshape(kernel.shape[0], -1), "head by head"),
    (lambda kernel: projection_reference(kernel[:, :, ::-1, ::-1]), "flipped the kernel"),
    (lambda kernel: projection_reference(kernel.transpose(0, 1, 3, 2)), "row by row"),
    (lambda kernel: kernel, "needs shape"),
    (lambda kernel: 2 * projection_reference(kernel), "do not give conv2d"),
    (lambda kernel: None, "returned None"),
])
def test_projection_wrong(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch08.check_output_projection(wrong)


# --- layers of a convolution stack ----------------------------------------------------------------

def test_layers_right():
    assert ch08.check_layers_to_connect(layers_reference).startswith("Right:")


@pytest.mark.parametrize("wrong, hint", [
    (lambda N, k: N - 1, "right for k = 3 only"),
    (lambda N, k: -(-(N - 1) // (k - 1)), "not .* in one direction"),
    (lambda N, k: (N - 1) // ((k - 1) // 2), "rounds down, but a part of a step still needs a whole layer"),
    (lambda N, k: -(-N // ((k - 1) // 2)), r"N - 1 = 1 positions back, not N"),
    (lambda N, k: 1, "expected"),
    (lambda N, k: None, "layers returned None: end it with `return`"),
])
def test_layers_wrong(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch08.check_layers_to_connect(wrong)


# --- one step of linear attention ------------------------------------------------------------------

def test_step_right():
    assert ch08.check_linear_step(step_reference).startswith("Right:")


def step_stale(S, z, q, k, v):
    phi = compare.elu_feature_map
    b = S @ phi(q) / (z @ phi(q)) if z.any() else np.zeros(S.shape[0])
    return S + np.outer(v, phi(k)), z + phi(k), b


def step_no_phi_q(S, z, q, k, v):
    phi = compare.elu_feature_map
    S, z = S + np.outer(v, phi(k)), z + phi(k)
    return S, z, S @ q / (z @ q)


def step_no_norm(S, z, q, k, v):
    phi = compare.elu_feature_map
    S, z = S + np.outer(v, phi(k)), z + phi(k)
    return S, z, S @ phi(q)


def step_transposed(S, z, q, k, v):
    phi = compare.elu_feature_map
    S = S.T + np.outer(phi(k), v) if S.shape != (len(k), len(v)) else S + np.outer(phi(k), v)
    z = z + phi(k)
    return S, z, S.T @ phi(q) / (z @ phi(q))


@pytest.mark.parametrize("wrong, hint", [
    (step_stale, "before computing b"),
    (step_no_phi_q, "phi to the query"),
    (step_no_norm, "divide by z"),
    (step_transposed, "S must stay"),
    (lambda S, z, q, k, v: (S, z), "three things"),
    (lambda S, z, q, k, v: (S, z, np.zeros_like(v)), "differ from the parallel form"),
])
def test_step_wrong(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch08.check_linear_step(wrong)
