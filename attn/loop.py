"""The training loop shared by chapters 10 and 11: one optimiser, the gradient check, the loop, accuracy.

It trains any model given as two functions:

* ``loss_and_grads(params, *batch) -> (loss, grads)``, with ``grads`` a dict shaped like ``params``;
* ``predict(params, inputs) -> labels``, compared with a batch's targets to measure accuracy.

A tagger's batch is tokens and tags, both (B, N) (:mod:`attn.train`); a sequence classifier's batch is B sequences
and their B labels (:mod:`attn.classifiers`). Both use the same :func:`train`, :func:`adam_step` and
:func:`gradient_check`; :mod:`attn.train` hands all of them on, so chapter 10 reads them as ``train.<name>``.
"""

import numpy as np

from ._checks import check_count

__all__ = ["adam_step", "batch_accuracy", "gradient_check", "split_validation", "train"]


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


def split_validation(sentences, share):
    """Carve a validation set off the end of a training set: (train, validation) lists."""
    if not 0.0 < share < 1.0:
        raise ValueError(f"validation_share must be in (0, 1), got {share!r}")
    n_val = int(round(share * len(sentences)))
    if not 0 < n_val < len(sentences):
        raise ValueError(f"validation_share {share} of {len(sentences)} sentences leaves no training or "
                         "no validation sentence")
    return list(sentences[:-n_val]), list(sentences[-n_val:])
