"""Training with hand-written gradients (chapter 10): one optimiser, the gradient check, the loop, scores.

The layers and their gradients are in :mod:`attn.backprop`, the two taggers in
:mod:`attn.taggers`. This module trains any model given as two functions:

* ``loss_and_grads(params, *batch) -> (loss, grads)``, with ``grads`` a dict shaped like ``params``;
* ``predict(params, inputs) -> labels``, compared with a batch's targets to measure accuracy.

A tagger's batch is tokens and tags, both (B, N); a sequence classifier's batch is B
sequences and their B labels. Both use the same :func:`train`, :func:`adam_step` and
:func:`gradient_check`. :func:`train_tagger` trains a tagger with the chapter's data and settings.

Chapter 10 reads the taggers and layers it needs as ``train.<name>``; they are importable from here.
"""

import functools

import numpy as np

from ._checks import check_choice, check_count
from .backprop import attention_forward, softmax_columns_backward
from .classifiers import train_classifier  # chapter 11's entry point, in attn.classifiers
from .taggers import (KINDS, attention_loss_and_grads, attention_predict, attention_weights, check_batch,
                      check_params, init_attention_model, init_window_model, model_functions,
                      window_loss_and_grads, window_predict)
from .tagging_data import cue_position, is_ambiguous, length_batches, make_order_sentences, make_sentences

__all__ = [
    # defined here
    "DEFAULTS", "TASKS", "TASK_DATA", "accuracy", "adam_step", "ambiguous_hits", "batch_accuracy",
    "default_data", "gradient_check", "split_validation", "train", "train_tagger",
    # from attn.taggers and attn.backprop, read by chapter 10 as train.<name>
    "KINDS", "attention_forward", "attention_loss_and_grads", "attention_predict", "attention_weights",
    "init_attention_model", "init_window_model", "model_functions", "softmax_columns_backward",
    "window_loss_and_grads", "window_predict",
    # from attn.classifiers (chapter 11)
    "train_classifier",
]

# --- the optimiser and the gradient check --------------------------------------------------------------


def gradient_check(loss_and_grads, params, *batch, eps=1e-4):
    """Compare hand-written gradients with central finite differences.

    Parameters
    ----------
    loss_and_grads : callable
        ``loss_and_grads(params, *batch) -> (loss, grads)``, e.g.
        :func:`~attn.taggers.attention_loss_and_grads`.
    params : dict of float64 ndarray
    *batch : ndarray
        What ``loss_and_grads`` takes after ``params``: tokens and tags (B, N) for a tagger.
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
    _, grads = loss_and_grads(params, *batch)
    worst = 0.0
    for name, value in params.items():
        if value.dtype != np.float64:
            raise ValueError(f"params[{name!r}] has dtype {value.dtype}: the check needs float64")
        numeric = np.zeros_like(value)
        for idx in np.ndindex(value.shape):
            saved = value[idx]
            value[idx] = saved + eps
            up, _ = loss_and_grads(params, *batch)
            value[idx] = saved - eps
            down, _ = loss_and_grads(params, *batch)
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


# --- the loop ------------------------------------------------------------------------------------------


def train(loss_and_grads, params, batches, *, epochs=3, lr=0.01, lr_factors=None, seed=0, predict=None,
          validation=None):
    """Train with Adam (:func:`adam_step`), visiting the batches in a new random order every epoch.

    Parameters
    ----------
    loss_and_grads : callable
        ``loss_and_grads(params, *batch) -> (loss, grads)``, e.g.
        :func:`~attn.taggers.window_loss_and_grads` with batches of (tokens, tags).
    params : dict of ndarray
        Initial parameters (left unchanged).
    batches : list of tuple
        The training set, already cut into batches; each is passed as ``*batch``.
    epochs : int
        Passes over the training set.
    lr : float
        Adam's learning rate.
    lr_factors : dict, optional
        Per-parameter multipliers of ``lr`` (see :func:`adam_step`).
    seed : int
        Seed of the batch order.
    predict : callable, optional
        ``predict(params, inputs) -> labels``; with ``validation``, the accuracy on it is recorded.
    validation : list of (inputs, targets), optional
        Batches kept out of training to watch it (not the test set); see :func:`batch_accuracy`.

    Returns
    -------
    params : dict
        The trained parameters.
    history : dict
        ``"loss"``: mean training loss of each epoch (list of float);
        ``"validation"``: accuracy on ``validation`` before training and after each epoch
        (``epochs + 1`` numbers; empty without ``validation``).
    """
    epochs = check_count("epochs", epochs, 1)
    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr!r}")
    if len(batches) == 0:
        raise ValueError("batches is empty: there is nothing to train on")
    watch = predict is not None and validation is not None
    rng = np.random.default_rng(seed)
    state, history = {}, {"loss": [], "validation": []}
    if watch:
        history["validation"].append(batch_accuracy(predict, params, validation))
    for _ in range(epochs):
        losses = []
        for k in rng.permutation(len(batches)):
            loss, grads = loss_and_grads(params, *batches[k])
            params = adam_step(params, grads, state, lr=lr, lr_factors=lr_factors)
            losses.append(loss)
        history["loss"].append(float(np.mean(losses)))
        if watch:
            history["validation"].append(batch_accuracy(predict, params, validation))
    return params, history


# --- scores --------------------------------------------------------------------------------------------


def batch_accuracy(predict, params, batches):
    """Fraction of all targets that ``predict`` gets right, over a list of (inputs, targets) batches.

    Every label counts once: each position of a tagged sentence, each sequence of a classifier.
    """
    right = total = 0
    for inputs, targets in batches:
        right, total = right + int(np.sum(predict(params, inputs) == targets)), total + np.size(targets)
    return right / total


def accuracy(predict, params, sentences):
    """Fraction of all tokens tagged correctly, and the same fraction over ambiguous words only.

    Parameters
    ----------
    predict : callable
        ``predict(params, tokens) -> tags``, e.g. :func:`~attn.taggers.window_predict`.
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
        hit = guess == tags
        amb = is_ambiguous(tokens)
        right, total = right + int(hit.sum()), total + hit.size
        right_amb, total_amb = right_amb + int(hit[amb].sum()), total_amb + int(amb.sum())
    return right / total, right_amb / max(total_amb, 1)


def ambiguous_hits(predict, params, sentences):
    """For every ambiguous word: its distance to the cue, and whether its tag was right.

    Takes the arguments of :func:`accuracy`; each sentence is tagged on its own.

    Returns
    -------
    distance : (n_ambiguous,) ndarray of int
        |i - cue| for each ambiguous word, sentences in order.
    correct : (n_ambiguous,) ndarray of bool
    """
    distance, correct = [], []
    for tokens, tags in sentences:
        guess = predict(params, tokens)
        amb = np.flatnonzero(is_ambiguous(tokens))
        distance.append(np.abs(amb - cue_position(tokens)))
        correct.append(guess[amb] == tags[amb])
    return np.concatenate(distance), np.concatenate(correct)


# --- the chapter's settings and one entry point -----------------------------------------------------------

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
    train_set, test_set = _default_data(check_choice("task", task, TASKS))
    return list(train_set), list(test_set)


def split_validation(sentences, share):
    """Carve a validation set off the end of a training set: (train, validation) lists."""
    if not 0.0 < share < 1.0:
        raise ValueError(f"validation_share must be in (0, 1), got {share!r}")
    n_val = int(round(share * len(sentences)))
    if not 0 < n_val < len(sentences):
        raise ValueError(f"validation_share {share} of {len(sentences)} sentences leaves no training or "
                         "no validation sentence")
    return list(sentences[:-n_val]), list(sentences[-n_val:])


def _checked_batches(sentences, batch_size, what):
    """Batches of equal-length sentences, each checked once (:func:`~attn.taggers.check_batch`)."""
    for k, (tokens, tags) in enumerate(sentences):
        if np.shape(tokens) != np.shape(tags):
            raise ValueError(f"{what} sentence {k} has {np.shape(tokens)} tokens but {np.shape(tags)} tags")
    return [check_batch(tokens, tags) for tokens, tags in length_batches(sentences, batch_size)]


def train_tagger(kind, seed, *, task="cue", train_set=None, test_set=None, **overrides):
    """Initialise and train one tagger with the chapter's settings; score it on held-out sentences.

    Parameters
    ----------
    kind : {"window", "attention", "attention+position"}
        The window-FC tagger, the self-attention tagger, or the self-attention tagger with
        a learned positional encoding e^i added to every a^i (a table with one column per
        position up to the longest training sentence; a longer test sentence is an error).
    seed : int
        Seeds both the initial weights and the batch order.
    task : {"cue", "order"}
        Which data set the defaults take (:func:`default_data`).
    train_set, test_set : list of (tokens, tags), optional
        Replace the task's default sentences. The last ``validation_share`` of the
        training sentences are kept out of training as a validation set.
    **overrides
        Any key of ``DEFAULTS[task]``: model sizes, ``qk_init`` (see
        :func:`~attn.taggers.init_attention_model`), ``qk_lr_factor`` (W_q and W_k learn at this
        fraction of ``lr``), ``epochs``, ``batch_size``, ``lr``, ``validation_share``.

    Returns
    -------
    params : dict
        The trained parameters.
    history : dict
        ``"loss"``: mean training loss per epoch; ``"validation"``: validation accuracy
        before training and after each epoch; ``"accuracy"``: a one-element list, the accuracy on the test
        sentences after training (the test set is used for that number only).
    """
    check_choice("kind", kind, KINDS)
    check_choice("task", task, TASKS)
    unknown = sorted(set(overrides) - set(DEFAULTS[task]))
    if unknown:
        raise ValueError(f"unknown settings {unknown}; train_tagger accepts {sorted(DEFAULTS[task])}")
    h = {**DEFAULTS[task], **overrides}
    default_train, default_test = default_data(task)
    train_set = default_train if train_set is None else list(train_set)
    test_set = default_test if test_set is None else list(test_set)
    fit_set, val_set = split_validation(train_set, h["validation_share"])
    batches = _checked_batches(fit_set, h["batch_size"], "training")
    validation = _checked_batches(val_set, 256, "validation")
    if kind == "window":
        params = init_window_model(seed, d=h["d"], half_width=h["half_width"], hidden=h["hidden"])
    else:
        n_positions = 0
        if kind == "attention+position":  # sized from the training sentences only
            n_positions = max(len(tokens) for tokens, _ in train_set)
            longest_test = max(len(tokens) for tokens, _ in test_set)
            if longest_test > n_positions:
                raise ValueError(f"a test sentence has {longest_test} words, but the longest training sentence "
                                 f"has {n_positions}: the learned positional table has no column for the rest")
        params = init_attention_model(seed, d=h["d"], d_k=h["d_k"], hidden=h["hidden"], qk_init=h["qk_init"],
                                      n_positions=n_positions)
    check_params(params, kind)
    loss_and_grads, predict = model_functions(kind, check_inputs=False)  # every batch was checked above, once
    params, history = train(loss_and_grads, params, batches, epochs=h["epochs"], lr=h["lr"],
                            lr_factors={"W_q": h["qk_lr_factor"], "W_k": h["qk_lr_factor"]},
                            seed=seed, predict=predict, validation=validation)
    history["accuracy"] = [accuracy(predict, params, test_set)[0]]
    return params, history
