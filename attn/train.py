"""Learning W_q, W_k, W_v from data, with hand-written gradients (chapter 10).

Taggers for :mod:`attn.tagging_data`, written in numpy only:

* the window tagger: the embeddings of the 2w + 1 words around a position, stacked,
  go through a small fully connected (FC) network;
* the self-attention tagger: embeddings ``I`` (d, N), one self-attention layer
  ``O = V A'`` with the lecture's W_q, W_k, W_v, then the same kind of FC network on
  each column of ``[I; O]``; with a learned positional table ``P`` (the
  "attention+position" kind) e^i = P[:, i] is added to a^i first.

:func:`train_tagger` trains any of them with the chapter's data and settings.

Notation is the lecture's: a sentence is ``I`` of shape (d, N), vectors are columns,
``A = K^T Q / sqrt(d_k)`` (the taggers use the Transformer's scale) and ``A_prime`` is
the softmax of each column of A, so ``A_prime[j, i]`` is how much query i attends to
key j. A batch holds B sentences of the same length N, stacked on a leading axis:
``I`` is then (B, d, N) and ``A_prime`` is (B, N, N).

Every layer has a forward function and a backward function. A backward function
takes the gradient of the loss with respect to the layer's output and returns the
gradients with respect to its inputs and weights (backpropagation, the chain rule
applied layer by layer from the loss back to the embeddings). The per-position FC
layers work on 2-D arrays (features, M) whose M = B * N columns are all positions.
Parameters are plain dicts of arrays, so the optimizer and the gradient check treat
both models alike.
"""

import functools

import numpy as np

from ._checks import as_array
from .tagging_data import (PAD_ID, TAGS, VOCAB, check_tokens, cue_position, is_ambiguous, length_batches,
                           make_order_sentences, make_sentences)

# --- layers ------------------------------------------------------------------------------------


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


def attention_forward(I, W_q, W_k, W_v, *, scale=1.0):
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
    QKV = _batched(np.concatenate([W_q, W_k, W_v]) @ _columns(I), B)  # (2 d_k + d_v, d) x (d, B*N) -> (B, ., N)
    Q, K, V = QKV[:, :d_k], QKV[:, d_k:2 * d_k], QKV[:, 2 * d_k:]  # (B, d_k, N), (B, d_k, N), (B, d_v, N)
    A = scale * (K.transpose(0, 2, 1) @ Q)  # (B, N, d_k) x (B, d_k, N) -> (B, N, N)
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
    dQKV = _columns(np.concatenate([dQ, dK, dV], axis=1))  # (2 d_k + d_v, B*N)
    dW = dQKV @ _columns(I).T  # (2 d_k + d_v, B*N) x (B*N, d): sum_b dQ I^T and the like, stacked
    dI = _batched(np.concatenate([W_q, W_k, W_v]).T @ dQKV, I.shape[0])  # W_q^T dQ + W_k^T dK + W_v^T dV
    d_k = W_q.shape[0]
    return dI, dW[:d_k], dW[d_k:2 * d_k], dW[2 * d_k:]


def _columns(X):
    """(B, f, N) -> (f, B*N): every position of every sentence as one column."""
    return X.transpose(1, 0, 2).reshape(X.shape[1], -1)


def _batched(X2, B):
    """(f, B*N) -> (B, f, N), the inverse of :func:`_columns`."""
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


def _embed_backward(dX, tokens, n_vocab):
    """Gradient of the embedding matrix: column k sums dX over the positions holding word k.

    dX : (d, K) ndarray, tokens : (K,) int ndarray -> (d, n_vocab) ndarray. ``np.bincount``
    adds in a fixed order, so the result does not depend on the number of BLAS threads.
    """
    d = dX.shape[0]
    slot = (np.arange(d)[:, None] * n_vocab + tokens).ravel()  # row r, word k -> slot r * n_vocab + k
    return np.bincount(slot, weights=dX.ravel(), minlength=d * n_vocab).reshape(d, n_vocab)


# --- the two models ----------------------------------------------------------------------------


def init_window_model(seed, *, d=8, half_width=2, hidden=16):
    """Random parameters of the window tagger.

    Parameters
    ----------
    seed : int
    d : int
        Embedding size.
    half_width : int
        The window sees ``half_width`` words on each side: 2 * half_width + 1 in all.
    hidden : int
        Width of the FC hidden layer.

    Returns
    -------
    dict
        ``E`` (d, V), ``W1`` (hidden, (2w+1) d), ``b1`` (hidden,), ``W2`` (T, hidden), ``b2`` (T,).
    """
    d, half_width, hidden = _positive("d", d), _positive("half_width", half_width, 0), _positive("hidden", hidden)
    rng = np.random.default_rng(seed)
    f = (2 * half_width + 1) * d
    return {
        "E": rng.normal(0.0, 1.0, (d, len(VOCAB))),
        **_mlp_init(rng, f, hidden),
    }


def init_attention_model(seed, *, d=8, d_k=8, hidden=16, qk_init=0.1, n_positions=0):
    """Random parameters of the self-attention tagger.

    Parameters
    ----------
    seed : int
    d : int
        Embedding size; the values v^i have the same size (d_v = d).
    d_k : int
        Size of queries and keys.
    hidden : int
        Width of the FC hidden layer.
    qk_init : float
        W_q and W_k start with entries of standard deviation ``qk_init / sqrt(d)``.
        A small value (the default 0.1) makes every score near 0 and so every column
        of A' near uniform at the start: each query then sees every key, the one that
        matters included, and gets a gradient towards it. With 1 (the usual scale for
        a weight matrix) the scores start with a spread of several units, the
        softmax is already peaked on random keys, and a query whose weight on the
        useful key starts near 0 gets almost no gradient to move it.
    n_positions : int
        With n_positions > 0, a learned positional encoding: a table ``P`` (d, n_positions)
        whose column p is e^(p+1), added to a^(p+1). Entries start as N(0, 1) draws, so
        every position starts distinct. Sentences may not be longer than n_positions.

    Returns
    -------
    dict
        ``E`` (d, V), ``W_q``, ``W_k`` (d_k, d), ``W_v`` (d, d), ``W1`` (hidden, 2d), ``b1``,
        ``W2`` (T, hidden), ``b2``, and ``P`` (d, n_positions) when n_positions > 0.
    """
    d, d_k, hidden = _positive("d", d), _positive("d_k", d_k), _positive("hidden", hidden)
    if not qk_init >= 0:
        raise ValueError(f"qk_init must be >= 0, got {qk_init!r}")
    n_positions = _positive("n_positions", n_positions, 0)
    rng = np.random.default_rng(seed)
    params = {
        "E": rng.normal(0.0, 1.0, (d, len(VOCAB))),
        "W_q": rng.normal(0.0, qk_init / np.sqrt(d), (d_k, d)),
        "W_k": rng.normal(0.0, qk_init / np.sqrt(d), (d_k, d)),
        "W_v": rng.normal(0.0, 1.0 / np.sqrt(d), (d, d)),
        **_mlp_init(rng, 2 * d, hidden),
    }
    if n_positions:
        params["P"] = rng.normal(0.0, 1.0, (d, n_positions))
    return params


def _mlp_init(rng, f, hidden):
    return {
        "W1": rng.normal(0.0, 1.0 / np.sqrt(f), (hidden, f)),
        "b1": np.zeros(hidden),
        "W2": rng.normal(0.0, 1.0 / np.sqrt(hidden), (len(TAGS), hidden)),
        "b2": np.zeros(len(TAGS)),
    }


def _positive(name, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def half_width_of(params):
    """The window half-width w of window-tagger parameters: W1 has (2w + 1) d columns."""
    d, f = params["E"].shape[0], params["W1"].shape[1]
    return (f // d - 1) // 2


def window_tokens(tokens, half_width):
    """The word ids each position's window sees, padding past both ends.

    Parameters
    ----------
    tokens : (B, N) ndarray of int
    half_width : int

    Returns
    -------
    (2w + 1, B, N) ndarray of int
        ``out[o, b, i]`` is the word at position i + o - w of sentence b, or the pad id.
    """
    tokens = check_tokens(tokens)
    tokens = tokens[None] if tokens.ndim == 1 else tokens
    w = _positive("half_width", half_width, 0)
    B, N = tokens.shape
    padded = np.concatenate([np.full((B, w), PAD_ID), tokens, np.full((B, w), PAD_ID)], axis=1)
    return np.stack([padded[:, o:o + N] for o in range(2 * w + 1)])


def _window_forward(params, tokens):
    win = window_tokens(tokens, half_width_of(params)).reshape(-1)  # (K,) with K = (2w+1) B N
    d = params["E"].shape[0]
    X = params["E"][:, win].reshape(d, -1, tokens.size)  # (d, 2w+1, M): window slot o of every position
    X = X.transpose(1, 0, 2).reshape(-1, tokens.size)  # ((2w+1) d, M): slot 0's d numbers, then slot 1's...
    logits, cache = mlp_forward(params, X)
    return logits, (win, cache)


def window_loss_and_grads(params, tokens, tags):
    """Loss of the window tagger on a batch and the gradient of every parameter.

    Parameters
    ----------
    params : dict
        From :func:`init_window_model`.
    tokens, tags : (B, N) ndarray of int

    Returns
    -------
    loss : float
        Mean cross entropy over the B * N positions.
    grads : dict
        One array per parameter, same shapes.
    """
    _check_params(params, WINDOW_KEYS)
    return _window_loss_and_grads(params, *_check_batch(tokens, tags))


def _window_loss_and_grads(params, tokens, tags):
    """:func:`window_loss_and_grads` without the input checks, for the training loop."""
    logits, (win, cache) = _window_forward(params, tokens)
    loss, dlogits = _cross_entropy(logits, tags.reshape(-1))  # positions in the order of _columns
    dX, grads = mlp_backward(dlogits, params, cache)
    d = params["E"].shape[0]
    dX = dX.reshape(-1, d, tokens.size).transpose(1, 0, 2).reshape(d, -1)  # back to (d, K), K as in win
    grads["E"] = _embed_backward(dX, win, len(VOCAB))
    return loss, grads


def window_predict(params, tokens):
    """Tag ids the window tagger picks: (B, N) or (N,) int array -> same shape."""
    _check_params(params, WINDOW_KEYS)
    tokens = check_tokens(tokens)
    logits, _ = _window_forward(params, tokens[None] if tokens.ndim == 1 else tokens)
    return logits.argmax(axis=0).reshape(tokens.shape)


def _attention_forward(params, tokens):
    I = params["E"][:, tokens].transpose(1, 0, 2)  # (d, B, N) -> (B, d, N)
    if "P" in params:
        if tokens.shape[1] > params["P"].shape[1]:
            raise ValueError(f"sentences of {tokens.shape[1]} words are longer than the {params['P'].shape[1]} "
                             "positions of the learned table P")
        I = I + params["P"][:, :tokens.shape[1]]  # a^i + e^i, the same e^i in every sentence
    scale = 1.0 / np.sqrt(params["W_q"].shape[0])  # the Transformer's 1 / sqrt(d_k)
    O, A_prime, att_cache = attention_forward(I, params["W_q"], params["W_k"], params["W_v"], scale=scale)
    X = _columns(np.concatenate([I, O], axis=1))  # [a^i; b^i] for every position: (2d, B*N)
    logits, mlp_cache = mlp_forward(params, X)
    return logits, A_prime, (att_cache, mlp_cache)


def attention_loss_and_grads(params, tokens, tags):
    """Loss of the self-attention tagger on a batch and the gradient of every parameter.

    Parameters
    ----------
    params : dict
        From :func:`init_attention_model`.
    tokens, tags : (B, N) ndarray of int
        With ``P`` among them (``n_positions`` > 0), the learned positional encoding e^i is
        added to each a^i before attention ("attention+position").

    Returns
    -------
    loss : float
    grads : dict
        One array per parameter (E, W_q, W_k, W_v, W1, b1, W2, b2, and P if present), same shapes.

    Notes
    -----
    With a positional table P, I = E[:, tokens] + P[:, :N]; its gradient is dI summed over
    the sentences of the batch (columns past N get 0), and dI flows on to the embeddings.
    """
    _check_params(params, ATTENTION_KEYS)
    return _attention_loss_and_grads(params, *_check_batch(tokens, tags))


def _attention_loss_and_grads(params, tokens, tags):
    """:func:`attention_loss_and_grads` without the input checks, for the training loop."""
    B = tokens.shape[0]
    logits, _, (att_cache, mlp_cache) = _attention_forward(params, tokens)
    loss, dlogits = _cross_entropy(logits, tags.reshape(-1))  # positions in the order of _columns
    dX, grads = mlp_backward(dlogits, params, mlp_cache)
    d = params["E"].shape[0]
    dX = _batched(dX, B)  # (B, 2d, N)
    dI, grads["W_q"], grads["W_k"], grads["W_v"] = attention_backward(
        dX[:, d:], params["W_q"], params["W_k"], params["W_v"], att_cache)
    dI = dI + dX[:, :d]  # I reaches the loss twice: through attention and directly into the FC
    grads["E"] = _embed_backward(_columns(dI), _columns(tokens[:, None, :])[0], len(VOCAB))
    if "P" in params:  # e^i was added to a^i in every sentence: its gradient sums dI over the batch
        grads["P"] = np.zeros_like(params["P"])
        grads["P"][:, :tokens.shape[1]] = dI.sum(axis=0)
    return loss, grads


def attention_predict(params, tokens):
    """Tag ids and attention of the self-attention tagger.

    Parameters
    ----------
    params : dict
    tokens : (N,) or (B, N) ndarray of int

    Returns
    -------
    tags : ndarray of int, shaped like ``tokens``
    A_prime : (N, N) or (B, N, N) ndarray
        A_prime[..., j, i] is how much query i attends to key j.
    """
    _check_params(params, ATTENTION_KEYS)
    tokens = check_tokens(tokens)
    batch = tokens[None] if tokens.ndim == 1 else tokens
    logits, A_prime, _ = _attention_forward(params, batch)
    tags = logits.argmax(axis=0).reshape(tokens.shape)
    return tags, (A_prime[0] if tokens.ndim == 1 else A_prime)


WINDOW_KEYS = ("E", "W1", "b1", "W2", "b2")
ATTENTION_KEYS = ("E", "W_q", "W_k", "W_v", "W1", "b1", "W2", "b2")


def _check_params(params, keys):
    missing = [k for k in keys if k not in params]
    extra = [k for k in params if k not in keys and k != "P"]
    missing += extra
    if missing:
        raise ValueError(f"params lacks {missing}: it has {sorted(params)}")


def _check_batch(tokens, tags):
    tokens = check_tokens(tokens)
    tags = np.asarray(tags)
    if tokens.ndim != 2 or tags.shape != tokens.shape:
        raise ValueError(f"tokens and tags must both have shape (B, N), got {tokens.shape} and {tags.shape}")
    if tags.dtype.kind not in "iu" or tags.min() < 0 or tags.max() >= len(TAGS):
        raise ValueError(f"tags must be integer ids in 0..{len(TAGS) - 1}")
    return tokens, tags.astype(np.intp)


# --- checking and training ---------------------------------------------------------------------


def gradient_check(loss_and_grads, params, tokens, tags, *, eps=1e-4):
    """Compare hand-written gradients with central finite differences.

    Parameters
    ----------
    loss_and_grads : callable
        :func:`window_loss_and_grads` or :func:`attention_loss_and_grads`.
    params : dict of float64 ndarray
    tokens, tags : (B, N) ndarray of int
    eps : float
        Step of the finite difference (L(theta + eps) - L(theta - eps)) / (2 eps). With the
        default 1e-4 the difference is off by about eps^2 (its truncation error), far above
        float64 rounding, so the reported error is reproducible to a few digits.

    Returns
    -------
    float
        The largest relative error over the parameter arrays,
        ||g - g_num|| / (||g|| + ||g_num||) for each array.
    """
    if not eps > 0:
        raise ValueError(f"eps must be positive, got {eps!r}")
    _, grads = loss_and_grads(params, tokens, tags)
    worst = 0.0
    for name, value in params.items():
        if value.dtype != np.float64:
            raise ValueError(f"params[{name!r}] has dtype {value.dtype}: the check needs float64")
        numeric = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            saved = value[idx]
            value[idx] = saved + eps
            up, _ = loss_and_grads(params, tokens, tags)
            value[idx] = saved - eps
            down, _ = loss_and_grads(params, tokens, tags)
            value[idx] = saved
            numeric[idx] = (up - down) / (2 * eps)
        scale = np.linalg.norm(grads[name]) + np.linalg.norm(numeric)
        if scale > 0:
            worst = max(worst, float(np.linalg.norm(grads[name] - numeric) / scale))
    return worst


def adam_step(params, grads, state, *, lr=0.01, lr_factors=None, beta1=0.9, beta2=0.999, eps=1e-8):
    """One step of Adam: a gradient step scaled per parameter by running moments.

    Parameters
    ----------
    params, grads : dict of ndarray
        Same keys and shapes.
    state : dict
        ``{}`` before the first step; updated in place with the moments and step count.
    lr : float
        Learning rate.
    lr_factors : dict, optional
        Multiplies the learning rate of the named parameters, e.g. ``{"W_q": 0.3}``.

    Returns
    -------
    dict
        The new parameters (the old dict is not modified).

    Notes
    -----
    m <- beta1 m + (1 - beta1) g;  v <- beta2 v + (1 - beta2) g^2;
    theta <- theta - lr m_hat / (sqrt(v_hat) + eps), with m_hat, v_hat the bias-corrected moments.
    """
    if set(params) != set(grads):
        raise ValueError(f"params and grads have different keys: {sorted(params)} vs {sorted(grads)}")
    lr_factors = {} if lr_factors is None else lr_factors
    t = state.get("t", 0) + 1
    state["t"] = t
    new = {}
    for name, theta in params.items():
        g = grads[name]
        if g.shape != theta.shape:
            raise ValueError(f"grads[{name!r}] has shape {g.shape} but params[{name!r}] has shape {theta.shape}")
        m = state[("m", name)] = beta1 * state.get(("m", name), 0.0) + (1 - beta1) * g
        v = state[("v", name)] = beta2 * state.get(("v", name), 0.0) + (1 - beta2) * g**2
        step = lr * lr_factors.get(name, 1.0)
        new[name] = theta - step * (m / (1 - beta1**t)) / (np.sqrt(v / (1 - beta2**t)) + eps)
    return new


class _FlatAdam:
    """:func:`adam_step` on all parameters at once: one flat vector, of which ``params`` holds views.

    The same update as :func:`adam_step`, with a dozen numpy calls per step instead of a
    dozen per parameter array (training steps are small, so the call count matters).
    """

    def __init__(self, names, theta, lr_vector):
        self.names, self.theta, self.lr = names, theta, lr_vector
        self.m, self.v, self.t = np.zeros_like(theta), np.zeros_like(theta), 0

    @classmethod
    def start(cls, params, lr, lr_factors):
        lr_factors = {} if lr_factors is None else lr_factors
        names = list(params)
        theta = np.concatenate([np.asarray(params[n], dtype=np.float64).ravel() for n in names])
        lr_vector = np.concatenate([np.full(params[n].size, lr * lr_factors.get(n, 1.0)) for n in names])
        views, start = {}, 0
        for n in names:
            views[n] = theta[start:start + params[n].size].reshape(params[n].shape)
            start += params[n].size
        return views, cls(names, theta, lr_vector)

    def step(self, grads, beta1=0.9, beta2=0.999, eps=1e-8):
        g = np.concatenate([grads[n].ravel() for n in self.names])
        self.t += 1
        self.m *= beta1
        self.m += (1 - beta1) * g
        self.v *= beta2
        self.v += (1 - beta2) * g**2
        m_hat, v_hat = self.m / (1 - beta1**self.t), self.v / (1 - beta2**self.t)
        self.theta -= self.lr * m_hat / (np.sqrt(v_hat) + eps)


def accuracy(predict, params, sentences):
    """Fraction of all tokens tagged correctly, and the same fraction over ambiguous words only.

    Parameters
    ----------
    predict : callable
        :func:`window_predict` or :func:`attention_predict`.
    params : dict
    sentences : list of (tokens, tags)

    Returns
    -------
    (float, float)
        Accuracy over all tokens, accuracy over the ambiguous words. Both are
        exact fractions of token counts.
    """
    right = total = right_amb = total_amb = 0
    for tokens, tags in length_batches(sentences, 256):
        guess = predict(params, tokens)
        guess = guess[0] if isinstance(guess, tuple) else guess
        hit = guess == tags
        amb = is_ambiguous(tokens)
        right, total = right + int(hit.sum()), total + hit.size
        right_amb, total_amb = right_amb + int(hit[amb].sum()), total_amb + int(amb.sum())
    return right / total, right_amb / max(total_amb, 1)


def ambiguous_hits(predict, params, sentences):
    """For every ambiguous word: its distance to the cue, and whether its tag was right.

    Parameters
    ----------
    predict : callable
        :func:`window_predict` or :func:`attention_predict`.
    params : dict
    sentences : list of (tokens, tags)

    Returns
    -------
    distance : (n_ambiguous,) ndarray of int
        |i - cue| for each ambiguous word, sentences in order.
    correct : (n_ambiguous,) ndarray of bool
    """
    distance, correct = [], []
    for tokens, tags in sentences:
        guess = predict(params, tokens)
        guess = guess[0] if isinstance(guess, tuple) else guess
        amb = np.flatnonzero(is_ambiguous(tokens))
        distance.append(np.abs(amb - cue_position(tokens)))
        correct.append(guess[amb] == tags[amb])
    return np.concatenate(distance), np.concatenate(correct)


def train(loss_and_grads, params, sentences, *, epochs=3, batch_size=16, lr=0.01, lr_factors=None, seed=0,
          predict=None, validation=None):
    """Train with Adam on batches of equal-length sentences.

    Parameters
    ----------
    loss_and_grads : callable
        ``loss_and_grads(params, tokens, tags) -> (loss, grads)``, e.g. :func:`window_loss_and_grads`.
    params : dict
        Initial parameters.
    sentences : list of (tokens, tags)
        The training set.
    epochs : int
        Passes over the training set; batches are shuffled every epoch.
    batch_size : int
    lr : float
        Adam's learning rate.
    lr_factors : dict, optional
        Per-parameter multipliers of ``lr`` (see :func:`adam_step`).
    seed : int
        Seed of the batch order.
    predict : callable, optional
        With ``validation``, the accuracy on it is recorded after each epoch.
    validation : list of (tokens, tags), optional
        Sentences kept out of training to watch it (not the test set).

    Returns
    -------
    params : dict
        The trained parameters.
    history : dict
        ``"loss"``: mean training loss of each epoch (list of float);
        ``"validation"``: accuracy on ``validation`` before training and after each epoch
        (``epochs + 1`` numbers; empty without ``validation``).
    """
    epochs = _positive("epochs", epochs)
    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr!r}")
    batches = length_batches(sentences, batch_size)
    rng = np.random.default_rng(seed)
    params, adam = _FlatAdam.start(params, lr, lr_factors)
    history = {"loss": [], "validation": []}
    watch = predict is not None and validation is not None
    if watch:
        validation = length_batches(validation, 256)
        history["validation"].append(_accuracy_of_batches(predict, params, validation))
    for _ in range(epochs):
        losses = []
        for k in rng.permutation(len(batches)):
            loss, grads = loss_and_grads(params, *batches[k])
            adam.step(grads)  # updates the arrays of params in place
            losses.append(loss)
        history["loss"].append(float(np.mean(losses)))
        if watch:
            history["validation"].append(_accuracy_of_batches(predict, params, validation))
    return params, history


# --- one entry point for the chapter and the tests ------------------------------------------------

KINDS = ("window", "attention", "attention+position")
TASKS = ("cue", "order")

#: The chapter's hyperparameters of each task; :func:`train_tagger` accepts any of them as an override.
DEFAULTS = {
    "cue": {"d": 8, "d_k": 8, "hidden": 16, "half_width": 2, "qk_init": 0.1, "qk_lr_factor": 0.3,
            "epochs": 3, "batch_size": 16, "lr": 0.01, "validation_share": 0.2},
    "order": {"d": 16, "d_k": 16, "hidden": 32, "half_width": 2, "qk_init": 0.1, "qk_lr_factor": 0.3,
              "epochs": 6, "batch_size": 24, "lr": 0.02, "validation_share": 0.2},
}

#: The chapter's data: (generator, training sentences with their seed, test sentences with their seed).
TASK_DATA = {
    "cue": (make_sentences, (1000, 1), (500, 2)),
    "order": (make_order_sentences, (1000, 3), (500, 4)),
}


def _check_choice(name, value, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {', '.join(repr(o) for o in options)}; got {value!r}")
    return value


@functools.lru_cache(maxsize=None)
def _default_data(task):
    make, (n_train, train_seed), (n_test, test_seed) = TASK_DATA[task]
    return tuple(make(n_train, seed=train_seed)), tuple(make(n_test, seed=test_seed))


def default_data(task="cue"):
    """The chapter's training and test sentences of a task.

    Parameters
    ----------
    task : {"cue", "order"}

    Returns
    -------
    train_set, test_set : list of (tokens, tags)
        New lists each call; the sentences are generated once and shared.
    """
    train_set, test_set = _default_data(_check_choice("task", task, TASKS))
    return list(train_set), list(test_set)


def model_functions(kind):
    """The loss-and-gradients function and the predictor of a kind of tagger.

    Parameters
    ----------
    kind : {"window", "attention", "attention+position"}

    Returns
    -------
    loss_and_grads : callable
        ``loss_and_grads(params, tokens, tags) -> (loss, grads)``. The two attention kinds
        share it: a positional table in ``params`` (key ``"P"``) is what adds positions.
    predict : callable
        ``predict(params, tokens) -> tags`` (window) or ``-> (tags, A_prime)`` (attention).
    """
    _check_choice("kind", kind, KINDS)
    if kind == "window":
        return window_loss_and_grads, window_predict
    return attention_loss_and_grads, attention_predict  # "attention+position": the table P is in params


def _accuracy_of_batches(predict, params, batches):
    right = total = 0
    for tokens, tags in batches:
        guess = predict(params, tokens)
        guess = guess[0] if isinstance(guess, tuple) else guess
        right, total = right + int(np.sum(guess == tags)), total + tags.size
    return right / total


def split_validation(sentences, share):
    """Carve a validation set off the end of a training set: (train, validation) lists."""
    if not 0.0 < share < 1.0:
        raise ValueError(f"validation_share must be in (0, 1), got {share!r}")
    n_val = int(round(share * len(sentences)))
    if not 0 < n_val < len(sentences):
        raise ValueError(f"validation_share {share} of {len(sentences)} sentences leaves no training or "
                         "no validation sentence")
    return list(sentences[:-n_val]), list(sentences[-n_val:])


def train_tagger(kind, seed, *, task="cue", train_set=None, test_set=None, **overrides):
    """Initialise and train one tagger with the chapter's settings; score it on held-out sentences.

    Parameters
    ----------
    kind : {"window", "attention", "attention+position"}
        The window-FC tagger, the self-attention tagger, or the self-attention tagger with
        a learned positional encoding e^i added to every a^i (a table with one column per
        position up to the longest sentence of the training and test sets).
    seed : int
        Seeds both the initial weights and the batch order.
    task : {"cue", "order"}
        Which data set the defaults take (:func:`default_data`).
    train_set, test_set : list of (tokens, tags), optional
        Replace the task's default sentences. The last ``validation_share`` of the
        training sentences are kept out of training as a validation set.
    **overrides
        Any key of ``DEFAULTS[task]``: model sizes, ``qk_init`` (see :func:`init_attention_model`),
        ``qk_lr_factor`` (W_q and W_k learn at this fraction of ``lr``), ``epochs``,
        ``batch_size``, ``lr``, ``validation_share``.

    Returns
    -------
    params : dict
        The trained parameters.
    history : dict
        ``"loss"``: mean training loss per epoch; ``"validation"``: validation accuracy
        before training and after each epoch; ``"accuracy"``: a one-element list, the accuracy on the test
        sentences after training (the test set is used for that number only).
    """
    _check_choice("kind", kind, KINDS)
    _check_choice("task", task, TASKS)
    unknown = sorted(set(overrides) - set(DEFAULTS[task]))
    if unknown:
        raise ValueError(f"unknown settings {unknown}; train_tagger accepts {sorted(DEFAULTS[task])}")
    h = {**DEFAULTS[task], **overrides}
    default_train, default_test = default_data(task)
    train_set = default_train if train_set is None else list(train_set)
    test_set = default_test if test_set is None else list(test_set)
    fit_set, val_set = split_validation(train_set, h["validation_share"])
    if kind == "window":
        params = init_window_model(seed, d=h["d"], half_width=h["half_width"], hidden=h["hidden"])
    else:
        n_positions = max(len(t) for t, _ in train_set + test_set) if kind == "attention+position" else 0
        params = init_attention_model(seed, d=h["d"], d_k=h["d_k"], hidden=h["hidden"], qk_init=h["qk_init"],
                                      n_positions=n_positions)
    _, predict = model_functions(kind)
    if any(np.shape(tokens) != np.shape(tags) for tokens, tags in fit_set):
        raise ValueError("every training sentence needs as many tags as tokens")
    _check_batch(np.concatenate([t for t, _ in fit_set])[None], np.concatenate([g for _, g in fit_set])[None])
    _check_params(params, WINDOW_KEYS if kind == "window" else ATTENTION_KEYS)
    unchecked = _window_loss_and_grads if kind == "window" else _attention_loss_and_grads  # checked just above
    params, history = train(unchecked, params, fit_set, epochs=h["epochs"], batch_size=h["batch_size"],
                            lr=h["lr"], lr_factors={"W_q": h["qk_lr_factor"], "W_k": h["qk_lr_factor"]},
                            seed=seed, predict=predict, validation=val_set)
    history["accuracy"] = [accuracy(predict, params, test_set)[0]]
    return params, history
