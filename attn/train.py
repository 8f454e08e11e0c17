"""Training with hand-written gradients (chapter 10): the taggers' data, settings, scores and entry point.

The layers and their gradients are in :mod:`attn.backprop`, the two taggers in :mod:`attn.taggers`, and the
training loop that chapters 10 and 11 share (the optimiser, the gradient check, the loop) in :mod:`attn.loop`.
:func:`train_tagger` trains a tagger with the chapter's data and settings.

Chapter 10 reads the loop, the taggers and the layers it needs as ``train.<name>``; they are importable from here,
as is chapter 11's :func:`~attn.classifiers.train_classifier`.
"""

import functools

import numpy as np

from ._checks import check_choice
from .backprop import attention_forward, softmax_columns_backward
from .classifiers import train_classifier  # chapter 11's entry point, in attn.classifiers
from .loop import adam_step, batch_accuracy, gradient_check, split_validation, train
from .taggers import (KINDS, attention_loss_and_grads, attention_predict, attention_weights, check_batch,
                      check_params, init_attention_model, init_window_model, model_functions,
                      window_loss_and_grads, window_predict)
from .tagging_data import cue_position, is_ambiguous, length_batches, make_order_sentences, make_sentences

__all__ = [
    # defined here
    "DEFAULTS", "TASKS", "TASK_DATA", "accuracy", "ambiguous_hits", "default_data", "train_tagger",
    # from attn.loop, the loop that chapters 10 and 11 share
    "adam_step", "batch_accuracy", "gradient_check", "split_validation", "train",
    # from attn.taggers and attn.backprop, read by chapter 10 as train.<name>
    "KINDS", "attention_forward", "attention_loss_and_grads", "attention_predict", "attention_weights",
    "init_attention_model", "init_window_model", "model_functions", "softmax_columns_backward",
    "window_loss_and_grads", "window_predict",
    # from attn.classifiers (chapter 11)
    "train_classifier",
]

# --- scores ----------------------------------------------------------------------------------------------


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
