"""Layers with hand-written gradients: every forward function has a backward function.

A backward function takes the gradient of the loss with respect to the layer's output and
returns the gradients with respect to its inputs and weights (backpropagation: the chain rule
applied layer by layer, from the loss back to the embeddings).

Notation is the lecture's: a sentence is ``I`` of shape (d, N), vectors are columns,
``A = scale K^T Q`` and ``A_prime`` is the softmax of each column of A, so ``A_prime[j, i]`` is
how much query i attends to key j. A batch holds B sentences of the same length N, stacked on
a leading axis: ``I`` is then (B, d, N) and ``A_prime`` is (B, N, N). The per-position layers
(the FC network, cross entropy) work on 2-D arrays (features, M) whose M = B * N columns are
all positions: :func:`to_columns` and :func:`from_columns` convert between the two layouts.
"""

import numpy as np

from ._checks import as_array


def softmax_columns(A):
    """Softmax over the keys of every query: axis -2 of A (B, N, N), or axis 0 of A (N, N).

    Same maths as :func:`attn.softmax` with its default ``axis=0`` applied to each
    sentence; used inside training, where the input is known to be finite.
    """
    e = np.exp(A - A.max(axis=-2, keepdims=True))
    return e / e.sum(axis=-2, keepdims=True)


def softmax_columns_backward(A_prime, dA_prime):
    """Gradient through the column softmax.

    Parameters
    ----------
    A_prime : (..., N, N) ndarray
        The softmax output; each column sums to 1.
    dA_prime : (..., N, N) ndarray
        Gradient of the loss with respect to A_prime.

    Returns
    -------
    dA : (..., N, N) ndarray
        Gradient with respect to the scores A.

    Notes
    -----
    Within one column s = softmax(a): ds_j / da_l = s_j (delta_jl - s_l), so
    dA[l, i] = A'[l, i] (dA'[l, i] - sum_j A'[j, i] dA'[j, i]).
    """
    A_prime = as_array("A_prime", A_prime)
    dA_prime = as_array("dA_prime", dA_prime)
    if A_prime.shape != dA_prime.shape or A_prime.ndim < 2:
        raise ValueError(f"A_prime {A_prime.shape} and dA_prime {dA_prime.shape} must be equal shapes (..., N, N)")
    return _softmax_backward(A_prime, dA_prime)


def _softmax_backward(A_prime, dA_prime):
    return A_prime * (dA_prime - np.sum(A_prime * dA_prime, axis=-2, keepdims=True))


def attention_forward(I, W_q, W_k, W_v, *, scale=1.0, is_real=None):
    """Self-attention on a batch of sentences, keeping what the backward pass needs.

    Parameters
    ----------
    I : (B, d, N) ndarray
        B sentences; I[b] is one sentence with columns a^1 ... a^N.
    W_q, W_k : (d_k, d) ndarray
    W_v : (d_v, d) ndarray
    scale : float
        Multiplies the scores: A = scale K^T Q (1 is the lecture's plain dot product,
        1 / sqrt(d_k) the Transformer's).
    is_real : (B, N) bool ndarray, optional
        Key padding mask: ``is_real[b, j]`` False makes key j of sentence b get weight exactly 0
        from every query (chapter 4's ``attn.key_padding_mask``). The backward pass needs no
        change: a weight of 0 passes no gradient.

    Returns
    -------
    O : (B, d_v, N) ndarray
        O[b] equals ``attn.self_attention(I[b], W_q, W_k, W_v, scale=scale)[0]``.
    A_prime : (B, N, N) ndarray
        A_prime[b, j, i] is how much query i attends to key j in sentence b.
    cache : tuple
        (I, Q, K, V, A_prime, scale), for :func:`attention_backward`.
    """
    if I.ndim != 3:
        raise ValueError(f"I must be a batch of sentences of shape (B, d, N), got shape {I.shape}")
    for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v)):
        if W.ndim != 2 or W.shape[1] != I.shape[1]:
            raise ValueError(f"{name} has shape {W.shape} but I has shape {I.shape}: {name} needs {I.shape[1]} columns")
    if W_q.shape[0] != W_k.shape[0]:
        raise ValueError(f"W_q {W_q.shape} and W_k {W_k.shape} must have the same number of rows d_k")
    B, d_k = I.shape[0], W_q.shape[0]
    # Q = W_q I for every sentence, as one product over all B * N columns (and K, V with it)
    QKV = from_columns(np.concatenate([W_q, W_k, W_v]) @ to_columns(I), B)  # (2 d_k + d_v, d) x (d, B*N)
    Q, K, V = QKV[:, :d_k], QKV[:, d_k:2 * d_k], QKV[:, 2 * d_k:]  # (B, d_k, N), (B, d_k, N), (B, d_v, N)
    A = scale * (K.transpose(0, 2, 1) @ Q)  # (B, N, d_k) x (B, d_k, N) -> (B, N, N)
    if is_real is not None:
        A = np.where(is_real[:, :, None], A, -np.inf)  # pad keys (rows) score -inf for every query
    A_prime = softmax_columns(A)
    O = V @ A_prime  # (B, d_v, N) x (B, N, N) -> (B, d_v, N)
    return O, A_prime, (I, Q, K, V, A_prime, scale)


def attention_backward(dO, W_q, W_k, W_v, cache):
    """Backpropagate through :func:`attention_forward`.

    Parameters
    ----------
    dO : (B, d_v, N) ndarray
        Gradient of the loss with respect to O.
    W_q, W_k, W_v : ndarray
        The weights used in the forward pass.
    cache : tuple
        The third result of :func:`attention_forward`.

    Returns
    -------
    dI : (B, d, N) ndarray
    dW_q, dW_k : (d_k, d) ndarray
    dW_v : (d_v, d) ndarray

    Notes
    -----
    O = V A' gives dV = dO A'^T and dA' = V^T dO; A = s K^T Q gives dQ = s K dA and
    dK = s Q dA^T; Q = W_q I gives dW_q = sum_b dQ I^T and dI = W_q^T dQ (same for K, V).
    """
    I, Q, K, V, A_prime, scale = cache
    if dO.shape != V.shape:
        raise ValueError(f"dO has shape {dO.shape} but the forward pass gave O of shape {V.shape}")
    dV = dO @ A_prime.transpose(0, 2, 1)  # (B, d_v, N) x (B, N, N) -> (B, d_v, N)
    dA = scale * _softmax_backward(A_prime, V.transpose(0, 2, 1) @ dO)  # (B, N, d_v) x (B, d_v, N)
    dQ = K @ dA  # (B, d_k, N) x (B, N, N) -> (B, d_k, N)
    dK = Q @ dA.transpose(0, 2, 1)
    dQKV = to_columns(np.concatenate([dQ, dK, dV], axis=1))  # (2 d_k + d_v, B*N)
    dW = dQKV @ to_columns(I).T  # (2 d_k + d_v, B*N) x (B*N, d): sum_b dQ I^T and the like, stacked
    dI = from_columns(np.concatenate([W_q, W_k, W_v]).T @ dQKV, I.shape[0])  # W_q^T dQ + W_k^T dK + W_v^T dV
    d_k = W_q.shape[0]
    return dI, dW[:d_k], dW[d_k:2 * d_k], dW[2 * d_k:]


def to_columns(X):
    """(B, f, N) -> (f, B*N): every position of every sentence as one column, sentence by sentence."""
    return X.transpose(1, 0, 2).reshape(X.shape[1], -1)


def from_columns(X2, B):
    """(f, B*N) -> (B, f, N), the inverse of :func:`to_columns`."""
    return X2.reshape(X2.shape[0], B, -1).transpose(1, 0, 2)


def mlp_forward(params, X):
    """The per-position FC network: logits = W2 tanh(W1 X + b1) + b2.

    Parameters
    ----------
    params : dict
        ``W1`` (h, f), ``b1`` (h,), ``W2`` (T, h), ``b2`` (T,).
    X : (f, M) ndarray
        One column per position.

    Returns
    -------
    logits : (T, M) ndarray
    cache : tuple
        For :func:`mlp_backward`.
    """
    if X.ndim != 2 or X.shape[0] != params["W1"].shape[1]:
        raise ValueError(f"X has shape {X.shape} but W1 has shape {params['W1'].shape}: "
                         f"X needs {params['W1'].shape[1]} rows")
    H = np.tanh(params["W1"] @ X + params["b1"][:, None])  # (h, f) x (f, M) -> (h, M)
    return params["W2"] @ H + params["b2"][:, None], (X, H)


def mlp_backward(dlogits, params, cache):
    """Backpropagate through :func:`mlp_forward`.

    Returns
    -------
    dX : (f, M) ndarray
    grads : dict
        ``W1``, ``b1``, ``W2``, ``b2`` gradients, shaped like the parameters.

    Notes
    -----
    d tanh(z)/dz = 1 - tanh(z)^2.
    """
    X, H = cache
    if dlogits.shape != (params["W2"].shape[0], H.shape[1]):
        raise ValueError(f"dlogits has shape {dlogits.shape}, expected {(params['W2'].shape[0], H.shape[1])}")
    dZ = (params["W2"].T @ dlogits) * (1.0 - H**2)  # (h, T) x (T, M) -> (h, M)
    grads = {"W1": dZ @ X.T, "b1": dZ.sum(axis=1), "W2": dlogits @ H.T, "b2": dlogits.sum(axis=1)}
    return params["W1"].T @ dZ, grads


def cross_entropy(logits, tags):
    """Mean cross entropy over positions, and its gradient.

    Parameters
    ----------
    logits : (T, M) ndarray
        One column of tag scores per position.
    tags : (M,) ndarray of int
        The correct tag of each position.

    Returns
    -------
    loss : float
        -mean_m log softmax(logits[:, m])[tags[m]].
    dlogits : (T, M) ndarray
        (softmax(logits) - onehot(tags)) / M.
    """
    logits = as_array("logits", logits, ndim=2)
    tags = np.asarray(tags)
    if tags.shape != (logits.shape[1],) or tags.dtype.kind not in "iu":
        raise ValueError(f"tags must be {logits.shape[1]} integer ids for logits of shape {logits.shape}, "
                         f"got shape {tags.shape} and dtype {tags.dtype}")
    if tags.size and (tags.min() < 0 or tags.max() >= logits.shape[0]):
        raise ValueError(f"tags must lie in 0..{logits.shape[0] - 1}, got {tags.min()}..{tags.max()}")
    return _cross_entropy(logits, tags)


def _cross_entropy(logits, tags):
    """:func:`cross_entropy` without the input checks, for the training loop."""
    M = logits.shape[1]
    shifted = logits - logits.max(axis=0, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=0, keepdims=True))
    loss = -log_p[tags, np.arange(M)].sum() / M
    dlogits = np.exp(log_p)
    dlogits[tags, np.arange(M)] -= 1.0
    return float(loss), dlogits / M


def embedding_backward(dX, tokens, n_vocab):
    """Gradient of an embedding table W_emb (d, n_vocab) that was read as ``X = W_emb[:, tokens]``.

    Parameters
    ----------
    dX : (d, K) ndarray
        Gradient of the loss with respect to the K columns read.
    tokens : (K,) ndarray of int
        The word id of each column.
    n_vocab : int
        Number of columns of W_emb.

    Returns
    -------
    dW_emb : (d, n_vocab) ndarray
        Column k sums dX over the positions holding word k. ``np.bincount`` adds in a fixed
        order, so the result does not depend on the number of BLAS threads.
    """
    d = dX.shape[0]
    slot = (np.arange(d)[:, None] * n_vocab + tokens).ravel()  # row r, word k -> slot r * n_vocab + k
    return np.bincount(slot, weights=dX.ravel(), minlength=d * n_vocab).reshape(d, n_vocab)
