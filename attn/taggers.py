"""The two taggers of chapter 10: parameters, loss with the gradient of every parameter, predictions.

Taggers for :mod:`attn.tagging_data`, written in numpy only:

* the window tagger: the embeddings of the 2w + 1 words around a position, stacked,
  go through a small fully connected (FC) network;
* the self-attention tagger: embeddings ``I`` (d, N), one self-attention layer
  ``O = V A'`` with the lecture's W_q, W_k, W_v, then the same kind of FC network on
  each column of ``[I; O]``; with a learned positional table ``P`` (the
  "attention+position" kind) e^i = P[:, i-1] is added to a^i first.

Parameters are plain dicts of arrays, so the optimiser and the gradient check of
:mod:`attn.train` treat both models alike. Every model offers
``loss_and_grads(params, tokens, tags) -> (loss, grads)`` and ``predict(params, tokens) -> tags``;
the self-attention tagger's weights A' come from :func:`attention_weights`.
"""

import numpy as np

from ._checks import check_choice, check_count
from .backprop import (_cross_entropy, attention_backward, attention_forward, embedding_backward, from_columns,
                       mlp_backward, mlp_forward, to_columns)
from .tagging_data import PAD_ID, TAGS, VOCAB, check_tokens

KINDS = ("window", "attention", "attention+position")
WINDOW_KEYS = ("W_emb", "W1", "b1", "W2", "b2")
ATTENTION_KEYS = ("W_emb", "W_q", "W_k", "W_v", "W1", "b1", "W2", "b2")  # and "P" with positions

# --- initial parameters ------------------------------------------------------------------------------

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
        ``W_emb`` (d, V), the word embeddings (column k is word k's vector), ``W1`` (hidden, (2w+1) d)
        with w = half_width, ``b1`` (hidden,), ``W2`` (T, hidden), ``b2`` (T,).
    """
    d, hidden = check_count("d", d, 1), check_count("hidden", hidden, 1)
    half_width = check_count("half_width", half_width, 0)
    rng = np.random.default_rng(seed)
    f = (2 * half_width + 1) * d
    return {
        "W_emb": rng.normal(0.0, 1.0, (d, len(VOCAB))),
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
        ``W_emb`` (d, V), ``W_q``, ``W_k`` (d_k, d), ``W_v`` (d, d), ``W1`` (hidden, 2d), ``b1``,
        ``W2`` (T, hidden), ``b2``, and ``P`` (d, n_positions) when n_positions > 0.
    """
    d, d_k, hidden = check_count("d", d, 1), check_count("d_k", d_k, 1), check_count("hidden", hidden, 1)
    if not qk_init >= 0:
        raise ValueError(f"qk_init must be >= 0, got {qk_init!r}")
    n_positions = check_count("n_positions", n_positions, 0)
    rng = np.random.default_rng(seed)
    params = {
        "W_emb": rng.normal(0.0, 1.0, (d, len(VOCAB))),
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



def half_width_of(params):
    """The window half-width w of window-tagger parameters: W1 has (2w + 1) d columns."""
    d, f = params["W_emb"].shape[0], params["W1"].shape[1]
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
    w = check_count("half_width", half_width, 0)
    B, N = tokens.shape
    padded = np.concatenate([np.full((B, w), PAD_ID), tokens, np.full((B, w), PAD_ID)], axis=1)
    return np.stack([padded[:, o:o + N] for o in range(2 * w + 1)])


def _window_forward(params, tokens):
    win = window_tokens(tokens, half_width_of(params)).reshape(-1)  # (K,) with K = (2w+1) B N
    d = params["W_emb"].shape[0]
    X = params["W_emb"][:, win].reshape(d, -1, tokens.size)  # (d, 2w+1, M): window slot o of every position
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
    check_params(params, "window")
    return _window_loss_and_grads(params, *check_batch(tokens, tags))


def _window_loss_and_grads(params, tokens, tags):
    """:func:`window_loss_and_grads` without the input checks, for the training loop."""
    logits, (win, cache) = _window_forward(params, tokens)
    loss, dlogits = _cross_entropy(logits, tags.reshape(-1))  # positions in the order of to_columns
    dX, grads = mlp_backward(dlogits, params, cache)
    d = params["W_emb"].shape[0]
    dX = dX.reshape(-1, d, tokens.size).transpose(1, 0, 2).reshape(d, -1)  # back to (d, K), K as in win
    grads["W_emb"] = embedding_backward(dX, win, len(VOCAB))
    return loss, grads


def window_predict(params, tokens):
    """Tag ids the window tagger picks: (B, N) or (N,) int array -> same shape."""
    check_params(params, "window")
    tokens = check_tokens(tokens)
    logits, _ = _window_forward(params, tokens[None] if tokens.ndim == 1 else tokens)
    return logits.argmax(axis=0).reshape(tokens.shape)


def _attention_forward(params, tokens):
    I = params["W_emb"][:, tokens].transpose(1, 0, 2)  # (d, B, N) -> (B, d, N)
    if "P" in params:
        if tokens.shape[1] > params["P"].shape[1]:
            raise ValueError(f"sentences of {tokens.shape[1]} words are longer than the {params['P'].shape[1]} "
                             "positions of the learned table P")
        I = I + params["P"][:, :tokens.shape[1]]  # a^i + e^i, the same e^i in every sentence
    scale = 1.0 / np.sqrt(params["W_q"].shape[0])  # the Transformer's 1 / sqrt(d_k)
    O, A_prime, att_cache = attention_forward(I, params["W_q"], params["W_k"], params["W_v"], scale=scale)
    X = to_columns(np.concatenate([I, O], axis=1))  # [a^i; b^i] for every position: (2d, B*N)
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
        One array per parameter (W_emb, W_q, W_k, W_v, W1, b1, W2, b2, and P if present), same shapes.

    Notes
    -----
    With a positional table P, I = W_emb[:, tokens] + P[:, :N]; its gradient is dI summed over
    the sentences of the batch (columns past N get 0), and dI flows on to the embeddings.
    """
    check_params(params, "attention")
    return _attention_loss_and_grads(params, *check_batch(tokens, tags))


def _attention_loss_and_grads(params, tokens, tags):
    """:func:`attention_loss_and_grads` without the input checks, for the training loop."""
    B = tokens.shape[0]
    logits, _, (att_cache, mlp_cache) = _attention_forward(params, tokens)
    loss, dlogits = _cross_entropy(logits, tags.reshape(-1))  # positions in the order of to_columns
    dX, grads = mlp_backward(dlogits, params, mlp_cache)
    d = params["W_emb"].shape[0]
    dX = from_columns(dX, B)  # (B, 2d, N)
    dI, grads["W_q"], grads["W_k"], grads["W_v"] = attention_backward(
        dX[:, d:], params["W_q"], params["W_k"], params["W_v"], att_cache)
    dI = dI + dX[:, :d]  # I reaches the loss twice: through attention and directly into the FC
    grads["W_emb"] = embedding_backward(to_columns(dI), to_columns(tokens[:, None, :])[0], len(VOCAB))
    if "P" in params:  # e^i was added to a^i in every sentence: its gradient sums dI over the batch
        grads["P"] = np.zeros_like(params["P"])
        grads["P"][:, :tokens.shape[1]] = dI.sum(axis=0)
    return loss, grads


def attention_predict(params, tokens):
    """Tag ids the self-attention tagger picks: (B, N) or (N,) int array -> same shape."""
    logits, _ = _attention_run(params, tokens)
    return logits.argmax(axis=0).reshape(np.shape(tokens))


def attention_weights(params, tokens):
    """The attention A' of the self-attention tagger on a sentence or a batch.

    Parameters
    ----------
    params : dict
        From :func:`init_attention_model` (trained or not).
    tokens : (N,) or (B, N) ndarray of int

    Returns
    -------
    A_prime : (N, N) or (B, N, N) ndarray
        A_prime[..., j, i] is how much query i attends to key j.
    """
    tokens = np.asarray(tokens)
    _, A_prime = _attention_run(params, tokens)
    return A_prime[0] if tokens.ndim == 1 else A_prime


def _attention_run(params, tokens):
    """Checked forward pass of the self-attention tagger: logits (T, B*N) and A_prime (B, N, N)."""
    check_params(params, "attention")
    tokens = check_tokens(tokens)
    logits, A_prime, _ = _attention_forward(params, tokens[None] if tokens.ndim == 1 else tokens)
    return logits, A_prime


def model_functions(kind, *, check_inputs=True):
    """The loss-and-gradients function and the predictor of a kind of tagger.

    Parameters
    ----------
    kind : {"window", "attention", "attention+position"}
    check_inputs : bool
        False gives a loss function that skips the checks of ``params`` and of the batch, for a
        training loop whose batches were checked once before it starts (:func:`check_params`,
        :func:`check_batch`).

    Returns
    -------
    loss_and_grads : callable
        ``loss_and_grads(params, tokens, tags) -> (loss, grads)``. The two attention kinds
        share it: a positional table in ``params`` (key ``"P"``) is what adds positions.
    predict : callable
        ``predict(params, tokens) -> tags``, shaped like ``tokens``.
    """
    check_choice("kind", kind, KINDS)
    if kind == "window":
        return (window_loss_and_grads if check_inputs else _window_loss_and_grads), window_predict
    # "attention+position" is the same model: the table P is in params
    return (attention_loss_and_grads if check_inputs else _attention_loss_and_grads), attention_predict


# --- checks ------------------------------------------------------------------------------------------


def check_params(params, kind):
    """Raise ValueError unless ``params`` holds exactly the arrays of a ``kind`` of tagger.

    The attention kinds may carry the positional table ``P``; the window tagger may not.
    """
    kind = check_choice("kind", kind, KINDS)
    if not isinstance(params, dict):
        raise ValueError(f"params must be a dict of arrays, got {type(params).__name__}")
    keys, optional = (WINDOW_KEYS, ()) if kind == "window" else (ATTENTION_KEYS, ("P",))
    missing = [k for k in keys if k not in params]
    extra = sorted(k for k in params if k not in keys and k not in optional)
    if missing or extra:
        raise ValueError(f"params of the {kind} tagger need {list(keys)}"
                         f"{' (and optionally ' + repr(list(optional)) + ')' if optional else ''}: "
                         f"missing {missing}, unexpected {extra}")


def check_batch(tokens, tags):
    """Return (tokens, tags) as (B, N) int arrays of word ids and tag ids, or raise ValueError."""
    tokens = check_tokens(tokens)
    tags = np.asarray(tags)
    if tokens.ndim != 2 or tags.shape != tokens.shape:
        raise ValueError(f"tokens and tags must both have shape (B, N), got {tokens.shape} and {tags.shape}")
    if tags.dtype.kind not in "iu" or tags.min() < 0 or tags.max() >= len(TAGS):
        raise ValueError(f"tags must be integer ids in 0..{len(TAGS) - 1}")
    return tokens, tags.astype(np.intp)
