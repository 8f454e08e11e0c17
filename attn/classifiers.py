"""Sequence classifiers for chapter 11: N frames in, one speaker out.

Four models, each a ``loss_and_grads`` and a ``predict`` function for the training loop of
:mod:`attn.train`, built from the layers of :mod:`attn.backprop` and :mod:`attn.pooling`:

* ``"bag"``: the mean of the real frames, then a linear classifier (a bag of frames);
* ``"window"``: every frame with its ``half_width`` neighbours on each side, stacked, goes
  through the FC network of chapter 10; the per-frame outputs are mean-pooled;
* ``"attention"``: one self-attention layer with a key padding mask, the FC network on each
  column of ``[I; O]``, then mean pooling over the real frames;
* ``"attention_pooling"``: the same, but pooled by attention pooling (one learned query).

The FC network ends with a linear layer, so pooling its per-frame outputs (speaker scores)
with weights that sum to 1 is the same as pooling its last hidden layer and then applying
the linear layer: ``sum_i w_i (W2 u^i + b2) = W2 (sum_i w_i u^i) + b2``. The models pool the
scores.

A batch is ``((I, is_real), speakers)``: frames ``I`` (B, d, N) padded with zeros, ``is_real``
(B, N) True at real frames, and the speaker ids (B,) (see :func:`attn.speakers.pad_batch`).
"""

import functools

import numpy as np

from ._checks import check_choice, check_count
from .backprop import (_cross_entropy, attention_backward, attention_forward, from_columns, mlp_backward,
                       mlp_forward, to_columns)
from .loop import batch_accuracy, split_validation, train
from .pooling import _attention_pool, _mean_pool, _mean_pool_backward, attention_pool_backward
from .speakers import FRAME_SIZE, batches, check_frames, check_speakers, make_utterances

KINDS = ("bag", "window", "attention", "attention_pooling")

KEYS = {
    "bag": ("W", "b"),
    "window": ("W1", "b1", "W2", "b2"),
    "attention": ("W_q", "W_k", "W_v", "W1", "b1", "W2", "b2"),
    "attention_pooling": ("W_q", "W_k", "W_v", "W1", "b1", "W2", "b2", "W_k_pool", "q_pool"),
}


# --- parameters ------------------------------------------------------------------------------------------

def init_classifier(kind, seed, *, n_classes=3, d=FRAME_SIZE, d_k=8, hidden=16, half_width=2, qk_init=0.1):
    """Random parameters of a sequence classifier.

    Parameters
    ----------
    kind : {"bag", "window", "attention", "attention_pooling"}
    seed : int
    n_classes : int
        Number of speakers.
    d : int
        Frame size.
    d_k : int
        Size of queries and keys (self-attention and attention pooling).
    hidden : int
        Width of the FC hidden layer.
    half_width : int
        Frames seen on each side by the window model.
    qk_init : float
        W_q, W_k (and the pooling's W_k_pool, q_pool) start with entries of standard deviation
        ``qk_init / sqrt(d)``: near-uniform attention at the start, as in chapter 10.

    Returns
    -------
    dict of ndarray
        ``bag``: ``W`` (n_classes, d), ``b``; ``window``: ``W1`` (hidden, (2 half_width + 1) d),
        ``b1``, ``W2`` (n_classes, hidden), ``b2``; ``attention``: ``W_q``, ``W_k`` (d_k, d), ``W_v``
        (d, d), ``W1`` (hidden, 2d), ``b1``, ``W2``, ``b2``; ``attention_pooling``: those and
        ``W_k_pool`` (d_k, 2d), ``q_pool`` (d_k,).
    """
    check_choice("kind", kind, KINDS)
    n_classes, d, d_k = check_count("n_classes", n_classes, 2), check_count("d", d, 1), check_count("d_k", d_k, 1)
    hidden, half_width = check_count("hidden", hidden, 1), check_count("half_width", half_width, 0)
    if not qk_init >= 0:
        raise ValueError(f"qk_init must be >= 0, got {qk_init!r}")
    rng = np.random.default_rng(seed)
    if kind == "bag":
        return {"W": rng.normal(0.0, 1.0 / np.sqrt(d), (n_classes, d)), "b": np.zeros(n_classes)}
    f = (2 * half_width + 1) * d if kind == "window" else 2 * d
    params = {}
    if kind != "window":
        params["W_q"] = rng.normal(0.0, qk_init / np.sqrt(d), (d_k, d))
        params["W_k"] = rng.normal(0.0, qk_init / np.sqrt(d), (d_k, d))
        params["W_v"] = rng.normal(0.0, 1.0 / np.sqrt(d), (d, d))
    params.update({"W1": rng.normal(0.0, 1.0 / np.sqrt(f), (hidden, f)), "b1": np.zeros(hidden),
                   "W2": rng.normal(0.0, 1.0 / np.sqrt(hidden), (n_classes, hidden)), "b2": np.zeros(n_classes)})
    if kind == "attention_pooling":
        params["W_k_pool"] = rng.normal(0.0, qk_init / np.sqrt(f), (d_k, f))
        params["q_pool"] = rng.normal(0.0, qk_init, d_k)
    return params


def kind_of(params):
    """Which model a parameter dict belongs to, or ValueError."""
    for kind, keys in KEYS.items():
        if set(params) == set(keys):
            return kind
    raise ValueError(f"params has keys {sorted(params)}, which are those of no classifier: "
                     + "; ".join(f"{k}: {sorted(v)}" for k, v in KEYS.items()))


# --- the window ------------------------------------------------------------------------------------------

def window_frames(I, half_width):
    """Stack every frame with its neighbours: (B, d, N) -> (B, (2w + 1) d, N).

    Rows ``o d .. (o + 1) d`` of column i hold frame i + o - w, zeros past either end (padding
    frames are zeros too, so a real frame's window is the same with or without padding).
    """
    B, d, N = I.shape
    w = half_width
    padded = np.concatenate([np.zeros((B, d, w)), I, np.zeros((B, d, w))], axis=2)
    return np.concatenate([padded[:, :, o:o + N] for o in range(2 * w + 1)], axis=1)


def window_frames_backward(dX, d, half_width):
    """Gradient through :func:`window_frames`: each frame collects the gradient of every window slot it filled."""
    B, _, N = dX.shape
    w = half_width
    dpadded = np.zeros((B, d, N + 2 * w))
    for o in range(2 * w + 1):
        dpadded[:, :, o:o + N] += dX[:, o * d:(o + 1) * d]
    return dpadded[:, :, w:w + N]


# --- forward and backward --------------------------------------------------------------------------------

def _scale(params):
    return 1.0 / np.sqrt(params["W_q"].shape[0])


def _forward(params, I, is_real):
    """Speaker scores (n_classes, B) and what the backward pass needs."""
    kind = kind_of(params)
    B = I.shape[0]
    if kind == "bag":
        pooled = _mean_pool(I, is_real)  # (B, d): the mean frame
        return params["W"] @ pooled.T + params["b"][:, None], (kind, pooled)
    if kind == "window":
        half_width = (params["W1"].shape[1] // I.shape[1] - 1) // 2
        X = window_frames(I, half_width)
        att = None
    else:
        O, A_prime, att = attention_forward(I, params["W_q"], params["W_k"], params["W_v"], scale=_scale(params),
                                            is_real=is_real)
        X = np.concatenate([I, O], axis=1)  # [a^i; b^i]: (B, 2d, N)
    scores, mlp_cache = mlp_forward(params, to_columns(X))  # per-frame speaker scores (n_classes, B*N)
    scores = from_columns(scores, B)  # (B, n_classes, N)
    if kind == "attention_pooling":
        K = params["W_k_pool"] @ X  # (d_k, f) x (B, f, N) -> (B, d_k, N)
        pooled, pool_weights, pool_cache = _attention_pool(scores, K, params["q_pool"], is_real, _scale(params))
    else:
        pooled, pool_weights, pool_cache = _mean_pool(scores, is_real), None, None
    return pooled.T, (kind, X, att, mlp_cache, pool_cache, pool_weights)


def classifier_loss_and_grads(params, inputs, speakers):
    """Mean cross entropy of a classifier on a padded batch, and the gradient of every parameter.

    Parameters
    ----------
    params : dict
        From :func:`init_classifier`.
    inputs : (I, is_real)
        Frames (B, d, N) and the real-frame mask (B, N), see :func:`attn.speakers.pad_batch`.
    speakers : (B,) ndarray of int

    Returns
    -------
    loss : float
    grads : dict
        Shaped like ``params``.
    """
    I, is_real = check_frames(*inputs)
    speakers = np.asarray(speakers)
    n_classes = params["W" if kind_of(params) == "bag" else "W2"].shape[0]
    if speakers.shape != (I.shape[0],) or speakers.dtype.kind not in "iu" or speakers.min() < 0 \
            or speakers.max() >= n_classes:
        raise ValueError(f"speakers must be {I.shape[0]} integer ids in 0..{n_classes - 1}, got shape "
                         f"{speakers.shape} and dtype {speakers.dtype}")
    return _loss_and_grads(params, (I, is_real), speakers)


def _loss_and_grads(params, inputs, speakers):
    """:func:`classifier_loss_and_grads` without the input checks, for the training loop."""
    I, is_real = inputs
    logits, cache = _forward(params, I, is_real)
    loss, dlogits = _cross_entropy(logits, speakers)  # (n_classes, B)
    kind = cache[0]
    if kind == "bag":
        pooled = cache[1]
        return loss, {"W": dlogits @ pooled, "b": dlogits.sum(axis=1)}
    _, X, att, mlp_cache, pool_cache, _ = cache
    grads = {}
    if kind == "attention_pooling":
        dscores, dK, grads["q_pool"] = attention_pool_backward(dlogits.T, pool_cache)
        grads["W_k_pool"] = np.einsum("bkn,bfn->kf", dK, X)
        dX_keys = np.einsum("kf,bkn->bfn", params["W_k_pool"], dK)
    else:
        dscores, dX_keys = _mean_pool_backward(dlogits.T, is_real), 0.0
    dX, mlp_grads = mlp_backward(to_columns(dscores), params, mlp_cache)
    grads.update(mlp_grads)
    dX = from_columns(dX, I.shape[0]) + dX_keys
    if kind != "window":
        d = I.shape[1]
        _, grads["W_q"], grads["W_k"], grads["W_v"] = attention_backward(
            dX[:, d:], params["W_q"], params["W_k"], params["W_v"], att)
    return loss, grads


def speaker_scores(params, inputs):
    """Scores (logits) of every speaker for every utterance of a batch: (n_classes, B) array."""
    I, is_real = check_frames(*inputs)
    return _forward(params, I, is_real)[0]


def classifier_predict(params, inputs):
    """The speaker each utterance of a batch is assigned: (B,) int array."""
    return speaker_scores(params, inputs).argmax(axis=0)


def _predict(params, inputs):
    return _forward(params, *inputs)[0].argmax(axis=0)


def attention_of(params, frames):
    """What an attention classifier attends to in one utterance.

    Parameters
    ----------
    params : dict
        Of an ``"attention"`` or ``"attention_pooling"`` classifier.
    frames : (d, N) ndarray

    Returns
    -------
    A_prime : (N, N) ndarray
        ``A_prime[j, i]`` is how much frame i attends to frame j (0-based, as code counts).
    pool_weights : (N,) ndarray or None
        The attention pooling's weight gamma' on every frame (None for mean pooling).
    """
    kind = kind_of(params)
    if kind not in ("attention", "attention_pooling"):
        raise ValueError(f"attention_of needs an attention classifier, got the parameters of {kind!r}")
    I, is_real = check_frames(np.asarray(frames)[None], np.ones((1, np.shape(frames)[-1]), dtype=bool))
    _, A_prime, _ = attention_forward(I, params["W_q"], params["W_k"], params["W_v"], scale=_scale(params),
                                      is_real=is_real)
    _, cache = _forward(params, I, is_real)
    return A_prime[0], (None if cache[5] is None else cache[5][0])


# --- the chapter's data and settings ---------------------------------------------------------------------

#: The chapter's settings of every model; :func:`train_classifier` accepts any of them as an override.
DEFAULTS = {
    "bag": {"epochs": 25, "batch_size": 16, "lr": 0.03, "validation_share": 0.2},
    "window": {"hidden": 32, "half_width": 1, "epochs": 25, "batch_size": 16, "lr": 0.03, "validation_share": 0.2},
    "attention": {"d_k": 8, "hidden": 32, "qk_init": 0.1, "qk_lr_factor": 1.0, "epochs": 25, "batch_size": 16,
                  "lr": 0.03, "validation_share": 0.2},
    "attention_pooling": {"d_k": 8, "hidden": 32, "qk_init": 0.1, "qk_lr_factor": 1.0, "epochs": 25,
                          "batch_size": 16, "lr": 0.03, "validation_share": 0.2},
}

#: The settings of ``DEFAULTS`` that size a model (keywords of :func:`init_classifier`); the others train it.
SIZE_KEYS = ("d_k", "hidden", "half_width", "qk_init")


def chapter_sizes(kind):
    """The :func:`init_classifier` keywords of the chapter's ``kind`` model (its sizes in ``DEFAULTS``).

    Examples
    --------
    >>> chapter_sizes("window")
    {'hidden': 32, 'half_width': 1}
    """
    check_choice("kind", kind, KINDS)
    return {k: DEFAULTS[kind][k] for k in SIZE_KEYS if k in DEFAULTS[kind]}


#: The chapter's data: (number of training utterances, seed), (number of test utterances, seed), n_speakers.
DATA = {"train": (600, 11), "test": (1000, 12), "n_speakers": 3}


@functools.lru_cache(maxsize=None)
def _default_data():
    (n_train, s_train), (n_test, s_test) = DATA["train"], DATA["test"]
    return (tuple(make_utterances(n_train, s_train, n_speakers=DATA["n_speakers"])),
            tuple(make_utterances(n_test, s_test, n_speakers=DATA["n_speakers"])))


def default_data():
    """The chapter's training and test utterances: two new lists of (frames, speaker)."""
    train_set, test_set = _default_data()
    return list(train_set), list(test_set)


def train_classifier(kind, seed, *, train_set=None, test_set=None, **overrides):
    """Initialise and train one sequence classifier with the chapter's settings; score it on held-out utterances.

    Parameters
    ----------
    kind : {"bag", "window", "attention", "attention_pooling"}
    seed : int
        Seeds three things and nothing else: the initial weights (:func:`init_classifier`), which
        training utterances share a batch (they are shuffled with this seed before they are cut
        into batches, :func:`attn.speakers.batches`), and the order in which the batches are
        visited in every epoch (:func:`attn.train.train`). It does not touch the data: by default
        the utterances are :func:`default_data`, generated with seeds of their own
        (``DATA["train"]`` and ``DATA["test"]``), the same for every ``seed``.
    train_set, test_set : list of (frames, speaker), optional
        Replace the chapter's utterances (:func:`default_data`). The last ``validation_share``
        of the training utterances are kept out of training as a validation set; the
        validation and test utterances are batched in their given order, whatever ``seed``.
    **overrides
        Any key of ``DEFAULTS[kind]``.

    Returns
    -------
    params : dict
        The trained parameters.
    history : dict
        ``"loss"``: mean training loss per epoch; ``"validation_accuracy"``: accuracy on the
        validation utterances after each epoch (one per epoch); ``"test_accuracy"``: accuracy on
        the test utterances after training (a float; the test set serves for this number only);
        ``"n_classes"``: the number of speakers.
    """

    check_choice("kind", kind, KINDS)
    unknown = sorted(set(overrides) - set(DEFAULTS[kind]))
    if unknown:
        raise ValueError(f"unknown settings {unknown}; train_classifier({kind!r}, ...) accepts {sorted(DEFAULTS[kind])}")
    h = {**DEFAULTS[kind], **overrides}
    if train_set is None or test_set is None:
        default_train, default_test = default_data()
    train_set = default_train if train_set is None else list(train_set)
    test_set = default_test if test_set is None else list(test_set)
    n_classes = max(int(s) for _, s in train_set + test_set) + 1
    check_speakers(n_classes)
    fit_set, val_set = split_validation(train_set, h["validation_share"])
    sizes = {k: h[k] for k in SIZE_KEYS if k in h}
    d = {np.shape(f)[0] for f, _ in train_set + test_set}
    if len(d) != 1:
        raise ValueError(f"every utterance needs the same frame size; got {sorted(d)}")
    params = init_classifier(kind, seed, n_classes=n_classes, d=d.pop(), **sizes)
    fit_batches = batches(fit_set, h["batch_size"], seed=seed)
    for (I, is_real), speakers in fit_batches:
        check_frames(I, is_real)
    factor = h.get("qk_lr_factor", 1.0)
    params, history = train(_loss_and_grads, params, fit_batches, epochs=h["epochs"], lr=h["lr"],
                            lr_factors={"W_q": factor, "W_k": factor}, seed=seed, predict=_predict,
                            validation=batches(val_set, 256))
    history["validation_accuracy"] = history.pop("validation")[1:]
    history["test_accuracy"] = float(batch_accuracy(_predict, params, batches(test_set, 256)))
    history["n_classes"] = n_classes
    return params, history
