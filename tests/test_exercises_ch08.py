"""The checkers of chapter 8 (compared with CNNs and RNNs): a reference solution passes, typical wrong answers fail with a hint."""

import numpy as np
import pytest

from attn import compare
from attn.exercises import ch08

# --- reference solutions (the same ones the chapter folds away) ------------------------------------


def projection_reference(kernel):
    C_out, C_in, k, _ = kernel.shape
    r = (k - 1) // 2
    return np.concatenate([kernel[:, :, dr + r, dc + r] for dr in range(-r, r + 1) for dc in range(-r, r + 1)], axis=1)


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

def test_layers_cases_are_odd_widths_of_at_least_3():
    """The exercise asks for odd k >= 3 and N >= 2: a width of 1 never connects the ends, and the library says so."""
    assert all(N >= 2 and k >= 3 and k % 2 == 1 for N, k in ch08._LAYER_CASES)
    with pytest.raises(ValueError, match="kernel_size must be at least 3 to reach a neighbour, got 1"):
        compare.conv_layers_to_connect(5, 1)


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


def step_twice(S, z, q, k, v):
    S, z, b = step_reference(S, z, q, k, v)
    return S, z, 2 * b


@pytest.mark.parametrize("wrong, hint", [
    (step_stale, "before computing b"),
    (step_no_phi_q, "phi to the query"),
    (step_no_norm, "divide by z"),
    (step_transposed, "S must stay"),
    (lambda S, z, q, k, v: (S, z), "three things"),
    (lambda S, z, q, k, v: (S, z, np.zeros_like(v)), "S is still zero"),
    (step_twice, "differ from the parallel form"),
])
def test_step_wrong(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch08.check_linear_step(wrong)


def make_step_with_hidden_history(keep_S_and_z_right):
    """A step that keeps every past k, v inside itself and computes b from them, not from S and z.

    With ``keep_S_and_z_right`` False it leaves S at zero and uses z as a counter of the steps; with True
    it returns the right running sums but still reads b from its own history.
    """
    phi = compare.elu_feature_map
    history = []

    def step(S, z, q, k, v):
        if not z.any():  # a new sequence starts
            history.clear()
        history.append((k, v))
        keys = np.stack([phi(k_j) for k_j, _ in history], axis=1)  # (d_k, i)
        values = np.stack([v_j for _, v_j in history], axis=1)  # (d_v, i)
        weights = keys.T @ phi(q)
        b = values @ weights / weights.sum()
        if keep_S_and_z_right:
            return S + np.outer(v, phi(k)), z + phi(k), b
        return S, z + 1, b

    return step


def test_step_with_hidden_history_and_no_state_is_refused():
    # its outputs b are right along every sequence: only the state gives it away
    with pytest.raises(AssertionError, match=r"after step 1, S is still zero: add v phi\(k\)\^T"):
        ch08.check_linear_step(make_step_with_hidden_history(False))


def test_step_with_hidden_history_and_a_right_state_is_refused():
    with pytest.raises(AssertionError, match="b must be read from it"):
        ch08.check_linear_step(make_step_with_hidden_history(True))


def test_the_hidden_history_steps_give_the_right_outputs():
    """The two cheats above compute causal linear attention along a sequence: the checker must look further."""
    g = np.random.default_rng(5)
    Q, K, V = g.normal(size=(3, 7)), g.normal(size=(3, 7)), g.normal(size=(2, 7))
    expected, _ = compare.linear_attention(Q, K, V, causal=True)
    for keep in (False, True):
        step, S, z = make_step_with_hidden_history(keep), np.zeros((2, 3)), np.zeros(3)
        outputs = []
        for i in range(7):
            S, z, b = step(S, z, Q[:, i], K[:, i], V[:, i])
            outputs.append(b)
        np.testing.assert_allclose(np.stack(outputs, axis=1), expected, rtol=1e-12)


@pytest.mark.parametrize("wrong, hint", [
    (lambda S, z, q, k, v: (S + np.outer(v, k), z + compare.elu_feature_map(k), np.zeros_like(v)),
     r"not v k\^T"),
    (lambda S, z, q, k, v: (np.outer(v, compare.elu_feature_map(k)), z + compare.elu_feature_map(k), np.zeros_like(v)),
     "not only this step's"),
    (lambda S, z, q, k, v: (S + 1.5 * np.outer(v, compare.elu_feature_map(k)), z + compare.elu_feature_map(k),
                            np.zeros_like(v)), r"S_i = S_\(i-1\) \+ v\^i phi\(k\^i\)\^T"),
    (lambda S, z, q, k, v: (S + np.outer(v, compare.elu_feature_map(k)), z + k, np.zeros_like(v)),
     "not k itself"),
    (lambda S, z, q, k, v: (S + np.outer(v, compare.elu_feature_map(k)), compare.elu_feature_map(k), np.zeros_like(v)),
     "z is a running sum"),
    (lambda S, z, q, k, v: (S + np.outer(v, compare.elu_feature_map(k)), z + 1, np.zeros_like(v)),
     "z is not a counter"),
])
def test_step_with_a_wrong_state_is_refused(wrong, hint):
    with pytest.raises(AssertionError, match=hint):
        ch08.check_linear_step(wrong)


# --- the library's answers are refused ------------------------------------------------------------

@pytest.mark.parametrize("checker, reader, called, hint", [
    (ch08.check_output_projection, lambda kernel: compare.conv_output_projection(kernel),
     "conv_output_projection", "stack the slices kernel"),
    (ch08.check_output_projection, compare.conv_output_projection, "conv_output_projection", "stack the slices"),
    (ch08.check_layers_to_connect, lambda N, k: compare.conv_layers_to_connect(N, k),
     "conv_layers_to_connect", r"count how far back one layer reaches"),
    (ch08.check_layers_to_connect, compare.conv_layers_to_connect, "conv_layers_to_connect", "count how far back"),
    (ch08.check_linear_step, compare.linear_attention_step, "linear_attention_step", r"add v phi\(k\)\^T to S"),
    (ch08.check_linear_step, lambda S, z, q, k, v: compare.linear_attention_step(S, z, q, k, v),
     "linear_attention_step", "add v phi"),
])
def test_the_library_answer_is_refused(checker, reader, called, hint):
    name = {ch08.check_output_projection: "projection", ch08.check_layers_to_connect: "layers",
            ch08.check_linear_step: "step"}[checker]
    with pytest.raises(AssertionError, match=f"^{name} calls attn\\.\\w+\\.{called}, which this exercise asks "
                                             f"you to do without: {hint}"):
        checker(reader)


def test_the_library_is_back_after_a_refusal():
    with pytest.raises(AssertionError, match=r"calls attn\.\w+\.linear_attention_step"):
        ch08.check_linear_step(compare.linear_attention_step)
    S, z, b = compare.linear_attention_step(np.zeros((1, 1)), np.zeros(1), np.ones(1), np.ones(1), np.ones(1))
    np.testing.assert_allclose(b, [1.0])
    assert ch08.check_linear_step(step_reference).startswith("Right:")
    assert ch08.check_layers_to_connect(layers_reference).startswith("Right:")
    assert compare.conv_layers_to_connect(5, 3) == 4


def test_the_reference_helpers_the_exercises_name_stay_allowed():
    """cp.neighbourhood_offsets and cp.elu_feature_map, which the exercises point to, are not refused."""
    def projection(kernel):
        r = (kernel.shape[-1] - 1) // 2
        return np.concatenate([kernel[:, :, dr + r, dc + r] for dr, dc in compare.neighbourhood_offsets(kernel.shape[-1])],
                              axis=1)

    assert ch08.check_output_projection(projection).startswith("Right:")
    assert ch08.check_linear_step(step_reference).startswith("Right:")  # calls compare.elu_feature_map
