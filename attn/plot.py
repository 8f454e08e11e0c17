"""Plotting helpers for the book's figures (imports matplotlib; numerics live elsewhere).

Heatmaps of attention follow one convention everywhere: rows are keys j, columns
are queries i, so column i of the picture is the distribution alpha'_{i,.} that
sums to 1.
"""

import matplotlib.pyplot as plt
import numpy as np

from ._checks import as_array


def attention_heatmap(A_prime, ax=None, *, keys=None, queries=None, title=None, annotate=True, cmap="Blues"):
    """Draw an attention matrix with key rows and query columns labelled.

    Parameters
    ----------
    A_prime : (N, N) ndarray
        A_prime[j, i] = alpha'_{i,j}: how much query i attends to key j.
    ax : matplotlib Axes, optional
        Where to draw; a new figure is made when None.
    keys, queries : sequence of str, optional
        Tick labels for the rows (keys) and columns (queries). Defaults: 1 ... N.
    title : str, optional
    annotate : bool
        Write each weight in its cell (only for N <= 12).
    cmap : str

    Returns
    -------
    matplotlib.image.AxesImage
        The image, e.g. for ``fig.colorbar``.
    """
    A_prime = as_array("A_prime", A_prime, ndim=2)
    n_keys, n_queries = A_prime.shape
    if ax is None:
        _, ax = plt.subplots(figsize=(1 + 0.5 * n_queries, 1 + 0.5 * n_keys))
    keys = [str(j + 1) for j in range(n_keys)] if keys is None else list(keys)
    queries = [str(i + 1) for i in range(n_queries)] if queries is None else list(queries)
    if len(keys) != n_keys or len(queries) != n_queries:
        raise ValueError(
            f"A_prime has shape {A_prime.shape} but got {len(keys)} key labels and {len(queries)} query labels"
        )
    image = ax.imshow(A_prime, cmap=cmap, vmin=0.0, vmax=1.0, aspect="auto")
    ax.set_xticks(np.arange(n_queries), queries)
    ax.set_yticks(np.arange(n_keys), keys)
    ax.set_xlabel("query i")
    ax.set_ylabel("key j")
    if title:
        ax.set_title(title)
    if annotate and max(n_keys, n_queries) <= 12:
        for j in range(n_keys):
            for i in range(n_queries):
                value = A_prime[j, i]
                ax.text(i, j, f"{value:.2f}", ha="center", va="center", fontsize=8,
                        color="white" if value > 0.6 else "black")
    return image
