"""Checkers for the exercises of chapter 8: self-attention compared with CNNs and RNNs.

Each checker raises ``AssertionError`` with a hint when the answer is wrong and returns a
short message when it is right.
"""

import numpy as np

from .. import compare
from ._common import call_without

_KERNEL_SHAPES = ((2, 3, 3, 3), (1, 1, 3, 3), (3, 2, 5, 5), (2, 4, 1, 1), (4, 1, 3, 3))
_LAYER_CASES = ((2, 3), (3, 3), (10, 3), (25, 3), (10, 5), (11, 5), (12, 5), (30, 7), (17, 9), (9, 9))


def check_output_projection(projection):
    """Check ``projection(kernel) -> W_o``, the output projection that makes the offset heads a convolution.

    Parameters
    ----------
    projection : callable
        ``projection(kernel)`` with kernel of shape (C_out, C_in, k, k) must return W^O of shape
        (C_out, k*k*C_in) whose block m (C_in columns) applies to head m, the m-th offset of
        :func:`attn.compare.neighbourhood_offsets`.

    Returns
    -------
    str
        A short confirmation.
    """
    for shape in _KERNEL_SHAPES:
        kernel = np.random.default_rng(sum(shape)).normal(size=shape)
        C_out, C_in, k, _ = shape
        got = np.asarray(call_without(
            projection, "projection", kernel, forbidden=("attn.compare.conv_output_projection",),
            hint="stack the slices kernel[:, :, dr + r, dc + r] with r = (k - 1) // 2, one per offset (dr, dc) of "
                 "cp.neighbourhood_offsets(k), side by side",
        ), dtype=float)
        expected = compare.conv_output_projection(kernel)
        if got.shape != expected.shape:
            raise AssertionError(
                f"kernel of shape {shape}: W_o needs shape (C_out, k*k*C_in) = {expected.shape}, got {got.shape}"
            )
        if np.allclose(got, expected):
            continue
        if np.allclose(got, kernel.reshape(C_out, -1)):
            raise AssertionError(
                "kernel.reshape(C_out, -1) puts the columns in the order (channel, row, column). W_o takes the "
                "heads' outputs stacked head by head: all C_in channels of offset 1, then of offset 2, ..."
            )
        if np.allclose(got, compare.conv_output_projection(kernel[:, :, ::-1, ::-1])):
            raise AssertionError(
                "you flipped the kernel. conv2d (like deep-learning libraries) does not: the head for offset "
                "(dr, dc) uses kernel[:, :, dr + r, dc + r], r = (k - 1) // 2"
            )
        if np.allclose(got, compare.conv_output_projection(kernel.transpose(0, 1, 3, 2))):
            raise AssertionError(
                "the offsets go row by row: (-1, -1), (-1, 0), (-1, 1), (0, -1), ... (the column offset changes fastest)"
            )
        image = np.random.default_rng(1).normal(size=(C_in, 4, 5))
        raise AssertionError(
            f"kernel of shape {shape}: with your W_o the heads do not give conv2d (largest difference "
            f"{np.abs(_attention_with(got, image, k) - compare.conv2d(image, kernel)).max():.3g}); block m must be "
            f"kernel[:, :, dr + r, dc + r] for the m-th offset (dr, dc), r = (k - 1) // 2"
        )
    return f"Right: your W_o turns the {len(_KERNEL_SHAPES)} kernels' offset heads into their convolutions."


def _attention_with(W_o, image, k):
    """The offset heads' stacked outputs for ``image``, mixed by a given W_o (for the hint)."""
    C_in, H, W = image.shape
    _, A_primes = compare.conv_as_attention(image, np.zeros((1, C_in, k, k)))
    I = np.concatenate([image.reshape(C_in, H * W), np.zeros((C_in, 1))], axis=1)  # pixels row by row
    B = np.concatenate([I @ A_m for A_m in A_primes], axis=0)  # W_v = identity in every head
    return (W_o @ B)[:, :-1].reshape(-1, H, W)


def check_layers_to_connect(layers):
    """Check ``layers(N, k)``: how many stacked 1-D convolutions of width k it takes for output N to see input 1.

    Parameters
    ----------
    layers : callable
        ``layers(N, k)`` for N >= 2 and odd k >= 3 must return an int. The checker asks only such cases:
        a width of 1 reaches no neighbour, so no number of layers connects the ends.

    Returns
    -------
    str
        A short confirmation.
    """
    answers = [call_without(layers, "layers", N, k, forbidden=("attn.compare.conv_layers_to_connect",),
                            hint="count how far back one layer reaches, (k - 1) / 2 positions, and how many such "
                                 "steps cover the N - 1 positions from output N back to input 1")
               for N, k in _LAYER_CASES]
    wrong = [(N, k, got) for (N, k), got in zip(_LAYER_CASES, answers) if got != compare.conv_layers_to_connect(N, k)]
    if wrong:
        N, k, got = wrong[0]
        r = (k - 1) // 2
        if all(a == N - 1 for (N, _), a in zip(_LAYER_CASES, answers)):
            raise AssertionError(
                f"layers({N}, {k}) returned {got}: N - 1 is right for k = 3 only. A window of width {k} reaches "
                f"{r} positions to each side, so one layer carries information {r} positions further"
            )
        if all(a == -(-(N - 1) // (k - 1)) for (N, k), a in zip(_LAYER_CASES, answers)):
            raise AssertionError(
                f"layers({N}, {k}) returned {got}: a window of width {k} reaches (k - 1) / 2 = {r} positions to "
                f"each side, not {k - 1} in one direction"
            )
        if all(a == (N - 1) // ((k - 1) // 2) for (N, k), a in zip(_LAYER_CASES, answers)):
            raise AssertionError(
                f"layers({N}, {k}) returned {got}: (N - 1) // r rounds down, but a part of a step still needs a "
                f"whole layer: round up, ceil((N - 1) / r) = -(-(N - 1) // r)"
            )
        if all(a == -(-N // ((k - 1) // 2)) for (N, k), a in zip(_LAYER_CASES, answers)):
            raise AssertionError(
                f"layers({N}, {k}) returned {got}: output N must reach input 1, N - 1 = {N - 1} positions back, "
                f"not N"
            )
        raise AssertionError(
            f"layers({N}, {k}) returned {got}, expected {compare.conv_layers_to_connect(N, k)}. Output N must reach "
            f"back N - 1 = {N - 1} positions, {r} per layer; a part of a step still needs a whole layer"
        )
    return f"Right: {len(_LAYER_CASES)} cases; a stack of convolutions needs about 2N/(k - 1) layers, self-attention one."


#: The library's recurrence (and its unchecked core), which ex-ch08-step asks the reader to write.
_LINEAR_STEPS = ("attn.compare.linear_attention_step", "attn.compare._linear_step")


def _linear_variants(Q, K, V):
    """Outputs of typical wrong recurrences, for the hints."""
    phi = compare.elu_feature_map
    d_v, N = V.shape
    S, z = np.zeros((d_v, K.shape[0])), np.zeros(K.shape[0])
    stale, no_phi_q, no_norm = (np.zeros((d_v, N)) for _ in range(3))
    for i in range(N):
        q, k, v = Q[:, i], K[:, i], V[:, i]
        stale[:, i] = (S @ phi(q)) / (z @ phi(q)) if i > 0 else np.nan
        S, z = S + np.outer(v, phi(k)), z + phi(k)
        no_phi_q[:, i] = (S @ q) / (z @ q)
        no_norm[:, i] = S @ phi(q)
    return {"stale": stale, "no_phi_q": no_phi_q, "no_norm": no_norm}


def _state_hint(name, got, expected, K, V, i):
    """The hint when the state ``name`` ('S' or 'z') returned after step i (from 0) is not the running sum."""
    phi = compare.elu_feature_map
    n = i + 1
    if name == "S":
        if np.allclose(got, 0):
            return (f"after step {n}, S is still zero: add v phi(k)^T to S at every step, so that S is the sum of "
                    f"v^j phi(k^j)^T over j = 1 .. {n}")
        if np.allclose(got, V[:, :n] @ K[:, :n].T):
            return "S must add v phi(k)^T, with phi = cp.elu_feature_map applied to the key, not v k^T"
        if np.allclose(got, np.outer(V[:, i], phi(K[:, i]))):
            return f"S is a running sum: after step {n} it holds v^j phi(k^j)^T for every j = 1 .. {n}, not only this step's"
        return (f"after step {n}, S should be the sum of v^j phi(k^j)^T over j = 1 .. {n} (S_i = S_(i-1) + v^i "
                f"phi(k^i)^T); largest difference {np.abs(got - expected).max():.3g}")
    if np.allclose(got, n):
        return f"z is not a counter: it sums the feature vectors, z_i = z_(i-1) + phi(k^i), phi = cp.elu_feature_map"
    if np.allclose(got, 0):
        return f"after step {n}, z is still zero: add phi(k) to z at every step"
    if np.allclose(got, K[:, :n].sum(axis=1)):
        return "z must add phi(k), with phi = cp.elu_feature_map applied to the key, not k itself"
    if np.allclose(got, phi(K[:, i])):
        return f"z is a running sum: after step {n} it holds phi(k^j) summed over j = 1 .. {n}, not only this step's"
    return (f"after step {n}, z should be the sum of phi(k^j) over j = 1 .. {n} (z_i = z_(i-1) + phi(k^i)); largest "
            f"difference {np.abs(got - expected).max():.3g}")


def _call_step(step, S, z, q, k, v):
    """Run the reader's step once and return (S, z, b) as float arrays of the right shapes."""
    d_v, d_k = S.shape
    result = call_without(step, "step", S.copy(), z.copy(), q, k, v, forbidden=_LINEAR_STEPS,
                          hint="add v phi(k)^T to S and phi(k) to z, then b = S phi(q) / (z . phi(q)) "
                               "with phi = cp.elu_feature_map")
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        raise AssertionError(f"step must return three things (S, z, b), got {type(result).__name__}")
    S, z, b = (np.asarray(x, dtype=float) for x in result)
    if S.shape != (d_v, d_k) or z.shape != (d_k,) or b.shape != (d_v,):
        raise AssertionError(
            f"with d_k = {d_k}, d_v = {d_v}: S must stay ({d_v}, {d_k}) (v phi(k)^T, an outer product), "
            f"z ({d_k},) and b ({d_v},); got S {S.shape}, z {z.shape}, b {b.shape}"
        )
    return S, z, b


def check_linear_step(step):
    """Check ``step(S, z, q, k, v) -> (S, z, b)``: one step of causal linear attention as a recurrence.

    The checker runs ``step`` along whole sequences, feeding each step the state the step before
    returned. After step i it checks the state against its definition, S_i = sum over j <= i of
    v^j phi(k^j)^T and z_i = sum over j <= i of phi(k^j), and the outputs against
    ``attn.compare.linear_attention(Q, K, V, causal=True)``. Last it gives ``step`` a state of its own
    making, not reached from any sequence it saw, and checks that b is read from that state.

    Parameters
    ----------
    step : callable
        Takes the state S (d_v, d_k) and z (d_k,), this position's q, k (d_k,) and v (d_v,); returns the
        updated state and the output b (d_v,).

    Returns
    -------
    str
        A short confirmation.
    """
    phi = compare.elu_feature_map
    for d_k, d_v, N, seed in ((3, 2, 6, 0), (1, 1, 4, 1), (4, 3, 9, 2)):
        rng = np.random.default_rng(seed)
        Q, K, V = rng.normal(size=(d_k, N)), rng.normal(size=(d_k, N)), rng.normal(size=(d_v, N))
        expected, _ = compare.linear_attention(Q, K, V, causal=True)
        S, z = np.zeros((d_v, d_k)), np.zeros(d_k)
        got = np.empty((d_v, N))
        for i in range(N):
            S, z, got[:, i] = _call_step(step, S, z, Q[:, i], K[:, i], V[:, i])
            S_expected = V[:, :i + 1] @ phi(K[:, :i + 1]).T  # sum of v^j phi(k^j)^T over j <= i: (d_v, d_k)
            z_expected = phi(K[:, :i + 1]).sum(axis=1)  # sum of phi(k^j) over j <= i: (d_k,)
            if not np.allclose(S, S_expected):
                raise AssertionError(_state_hint("S", S, S_expected, K, V, i))
            if not np.allclose(z, z_expected):
                raise AssertionError(_state_hint("z", z, z_expected, K, V, i))
        if np.allclose(got, expected):
            continue
        wrong = _linear_variants(Q, K, V)
        if np.allclose(got[:, 1:], wrong["stale"][:, 1:]):
            raise AssertionError("add this step's key and value to S and z before computing b: query i also sees key i")
        if np.allclose(got, wrong["no_phi_q"]):
            raise AssertionError("apply phi to the query too: b = S phi(q) / (z . phi(q))")
        if np.allclose(got, wrong["no_norm"]):
            raise AssertionError("divide by z . phi(q), so that the weights of each query sum to 1")
        raise AssertionError(
            f"d_k = {d_k}, d_v = {d_v}, N = {N}: your outputs differ from the parallel form (largest difference "
            f"{np.abs(got - expected).max():.3g}). S grows by v phi(k)^T and z by phi(k), with phi = elu + 1"
        )
    # a state that no sequence above led to: b must come from the S and z passed in
    rng = np.random.default_rng(3)
    d_k, d_v = 4, 3
    S0, z0 = rng.normal(size=(d_v, d_k)), phi(rng.normal(size=(4, d_k))).sum(axis=0)
    q, k, v = rng.normal(size=d_k), rng.normal(size=d_k), rng.normal(size=d_v)
    S, z, b = _call_step(step, S0, z0, q, k, v)
    S_expected, z_expected = S0 + np.outer(v, phi(k)), z0 + phi(k)
    if not (np.allclose(S, S_expected) and np.allclose(z, z_expected)):
        raise AssertionError(
            "given a state S, z of the checker's making, step must add to it: S + v phi(k)^T and z + phi(k). "
            "Keep nothing between calls outside S and z"
        )
    if not np.allclose(b, S_expected @ phi(q) / (z_expected @ phi(q))):
        raise AssertionError(
            "given a state S, z of the checker's making, b must be read from it: b = S phi(q) / (z . phi(q)) with "
            "the updated S and z. Keep nothing between calls outside S and z"
        )
    return ("Right: run step by step, your state is the running sums S and z and your outputs are the parallel "
            "causal linear attention, up to rounding.")
