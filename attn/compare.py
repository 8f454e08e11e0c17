"""Self-attention compared with a CNN and an RNN (lecture part 下, slides 35-39 and 42).

Lecture notation: vectors are columns, a sequence is ``I`` of shape (d, N), and an
attention matrix is ``A_prime[j, i]``: how much query i attends to key j.

Three comparisons, each small enough to check exactly:

* **CNN.** An image of C channels and H x W pixels is a set of H W vectors of size C
  (:func:`attn.applications.image_to_sequence`). A 3 x 3 convolution (:func:`conv2d`, written plainly)
  equals multi-head self-attention with 9 heads, one per offset of the 3 x 3
  neighbourhood, each attending with weight exactly 1 to the pixel at its offset
  (:func:`conv_as_attention`, after Cordonnier, Loukas and Jaggi 2020). Zero padding is
  one extra vector of zeros that a head attends to when its offset leaves the image.
* **RNN.** :func:`rnn` passes a memory from step to step. Dependency graphs
  (:func:`rnn_dependencies`, :func:`attention_dependencies`, :func:`conv_dependencies`)
  give the number of sequential steps (:func:`sequential_steps`) and the path length
  between two positions (:func:`path_length`); :func:`rnn_parallel_rounds` measures how
  many rounds of updating every position at once the RNN needs.
* **Linear attention.** With the feature map phi(x) = elu(x) + 1 the same causal
  attention can be computed in parallel (:func:`linear_attention`) or as a recurrence
  with a fixed-size state (:func:`linear_attention_recurrent`): "Transformers are RNNs"
  (Katharopoulos et al. 2020).
"""

import numpy as np

from . import applications
from ._checks import as_array, check_count, check_kernel_size, check_sequence
from .core import self_attention
# Chapter 8 reads the dependency graphs and linear attention as compare.<name>: they live in their own modules.
from .dependencies import (attention_dependencies, conv_dependencies, conv_layers_to_connect, path_length,
                           rnn_dependencies, sequential_steps)
from .linear_attention import elu_feature_map, linear_attention, linear_attention_recurrent, linear_attention_step

__all__ = [
    "neighbourhood_offsets", "conv2d", "offset_mask", "conv_output_projection", "conv_as_attention",
    "rnn_step", "rnn", "rnn_parallel_rounds",
    # from attn.dependencies
    "rnn_dependencies", "attention_dependencies", "conv_dependencies", "sequential_steps", "path_length",
    "conv_layers_to_connect",
    # from attn.linear_attention
    "elu_feature_map", "linear_attention", "linear_attention_step", "linear_attention_recurrent",
]

# --------------------------------------------------------------------------------------------
# CNN: a convolution is self-attention with a fixed receptive field
# --------------------------------------------------------------------------------------------


def neighbourhood_offsets(kernel_size=3):
    """The offsets (dr, dc) of a square neighbourhood, row by row.

    Parameters
    ----------
    kernel_size : int
        An odd side length k; the offsets run from -(k-1)/2 to (k-1)/2.

    Returns
    -------
    list of (int, int)
        k*k offsets (row offset, column offset), top-left first, in the order in which
        :func:`conv_as_attention` numbers its heads.

    Examples
    --------
    >>> neighbourhood_offsets(3)[:4]
    [(-1, -1), (-1, 0), (-1, 1), (0, -1)]
    """
    r = check_kernel_size(kernel_size) // 2
    return [(dr, dc) for dr in range(-r, r + 1) for dc in range(-r, r + 1)]


def _check_conv(image, kernel):
    """A convolution's image is (C_in, H, W), channels first, as CNN libraries store it."""
    image = as_array("image", image, ndim=3)
    if 0 in image.shape:
        raise ValueError(f"image has shape {image.shape}: it needs at least one channel and one pixel (C, H, W)")
    kernel = as_array("kernel", kernel, ndim=4)
    C_out, C_in, k, k2 = kernel.shape
    if k != k2 or k % 2 == 0 or C_out == 0:
        raise ValueError(
            f"kernel has shape {kernel.shape}: it must be (C_out, C_in, k, k) with C_out >= 1 and an odd side k"
        )
    if C_in != image.shape[0]:
        raise ValueError(
            f"kernel has shape {kernel.shape} but image has shape {image.shape}: C_in must be {image.shape[0]}"
        )
    return image, kernel


def conv2d(image, kernel):
    """A convolutional layer (卷積) written plainly: stride 1, zero padding, output as large as the input.

    Parameters
    ----------
    image : (C_in, H, W) ndarray
    kernel : (C_out, C_in, k, k) ndarray
        The filters; k is odd. ``kernel[o, c, r + (k-1)/2, s + (k-1)/2]`` multiplies channel c of the
        pixel at offset (r, s) from the output pixel.

    Returns
    -------
    (C_out, H, W) ndarray
        ``out[o, y, x] = sum_{c, u, v} kernel[o, c, u, v] * image[c, y + u - p, x + v - p]`` with
        p = (k-1)/2 and pixels outside the image taken as 0.

    Notes
    -----
    As in deep-learning libraries, the kernel is not flipped (strictly a cross-correlation).
    Each output pixel sees only its k x k neighbourhood: its receptive field (感受野).
    """
    image, kernel = _check_conv(image, kernel)
    C_out, _, k, _ = kernel.shape
    _, H, W = image.shape
    p = k // 2
    padded = np.pad(image, ((0, 0), (p, p), (p, p)))  # zeros around the border
    out = np.zeros((C_out, H, W), dtype=np.result_type(image, kernel))
    for y in range(H):
        for x in range(W):
            window = padded[:, y:y + k, x:x + k]  # (C_in, k, k), centred on pixel (y, x)
            out[:, y, x] = np.tensordot(kernel, window, axes=3)  # (C_out, C_in, k, k) . (C_in, k, k) -> (C_out,)
    return out


def offset_mask(H, W, offset):
    """The hard attention pattern of the head for one offset, as a mask over H*W pixels and one padding vector.

    Parameters
    ----------
    H, W : int
        The image size.
    offset : (int, int)
        (dr, dc): the head looks dr rows down and dc columns right of each query pixel.

    Returns
    -------
    mask : (H*W + 1, H*W + 1) bool ndarray
        ``mask[j, i]`` is True for exactly one key j per query i: the pixel at the offset from
        pixel i when it lies in the image, otherwise the padding vector (index H*W). The padding
        vector, as a query, looks at itself.

    Notes
    -----
    A score of 0 where the mask is True and -inf elsewhere makes the softmax exactly one-hot:
    a relative-position score, because whether key j gets weight depends only on where j lies
    relative to i.
    """
    H, W = check_count("H", H, 1), check_count("W", W, 1)
    try:
        dr, dc = (int(o) for o in offset)
    except (TypeError, ValueError):
        raise ValueError(f"offset must be a pair of integers (dr, dc), got {offset!r}") from None
    N = H * W
    mask = np.zeros((N + 1, N + 1), dtype=bool)
    rows, cols = np.divmod(np.arange(N), W)  # pixel i is at (rows[i], cols[i])
    r, c = rows + dr, cols + dc
    inside = (r >= 0) & (r < H) & (c >= 0) & (c < W)
    keys = np.where(inside, r * W + c, N)  # outside the image: the padding vector
    mask[keys, np.arange(N)] = True
    mask[N, N] = True
    return mask


def conv_output_projection(kernel):
    """W^O that turns the stacked outputs of the offset heads into the convolution's output.

    Parameters
    ----------
    kernel : (C_out, C_in, k, k) ndarray

    Returns
    -------
    W_o : (C_out, k*k*C_in) ndarray
        Block m (columns m*C_in ... (m+1)*C_in - 1) is ``kernel[:, :, dr + p, dc + p]`` for the
        m-th offset (dr, dc) of :func:`neighbourhood_offsets`, p = (k-1)/2.
    """
    kernel = as_array("kernel", kernel, ndim=4)
    C_out, C_in, k, k2 = kernel.shape
    if k != k2 or k % 2 == 0:
        raise ValueError(f"kernel has shape {kernel.shape}: it must be (C_out, C_in, k, k) with an odd side k")
    return kernel.transpose(0, 2, 3, 1).reshape(C_out, k * k * C_in)  # (C_out, k, k, C_in): offsets row by row


def conv_as_attention(image, kernel):
    """A convolution computed as multi-head self-attention with one hard-attention head per offset.

    Parameters
    ----------
    image : (C_in, H, W) ndarray
    kernel : (C_out, C_in, k, k) ndarray

    Returns
    -------
    O : (C_out, H, W) ndarray
        Equal to ``conv2d(image, kernel)``.
    A_primes : (k*k, H*W + 1, H*W + 1) ndarray
        Head m's attention matrix (key rows, query columns) over the H*W pixels and the padding
        vector (last row and column); every column is one-hot.

    Notes
    -----
    The input sequence is the image's pixel vectors plus one vector of zeros (the padding).
    Head m has W_q = W_k = 0 (its scores ignore content), the mask of :func:`offset_mask` for the
    m-th offset, and W_v = identity, so b^{i,m} is the pixel at offset m from pixel i (or 0).
    W^O = :func:`conv_output_projection` then applies the kernel:
    b^i = sum_m kernel[:, :, offset m] b^{i,m}, which is the convolution (Cordonnier et al. 2020).
    """
    image, kernel = _check_conv(image, kernel)
    C_in, H, W = image.shape
    dtype = np.result_type(image, kernel)
    pixels = applications.image_to_sequence(image.transpose(1, 2, 0))  # (C_in, H*W): channels last, as the lecture draws it
    I = np.concatenate([pixels, np.zeros((C_in, 1), dtype)], axis=1)  # (C_in, H*W + 1)
    zeros, identity = np.zeros((1, C_in), dtype), np.eye(C_in, dtype=dtype)
    heads = [self_attention(I, zeros, zeros, identity, mask=offset_mask(H, W, o))
             for o in neighbourhood_offsets(kernel.shape[-1])]
    B = np.concatenate([O_m for O_m, _ in heads], axis=0)  # (k*k*C_in, H*W + 1): b^{i,1..h} stacked
    O = conv_output_projection(kernel) @ B  # (C_out, k*k*C_in) x (k*k*C_in, H*W + 1)
    return applications.sequence_to_image(O[:, :-1], H, W).transpose(2, 0, 1), np.stack([A_m for _, A_m in heads])


# --------------------------------------------------------------------------------------------
# RNN: a memory passed from step to step
# --------------------------------------------------------------------------------------------


def _check_rnn(I, W_h, W_x, h0):
    I = check_sequence(I)
    W_h = as_array("W_h", W_h, ndim=2)
    W_x = as_array("W_x", W_x, ndim=2)
    d_h = W_h.shape[0]
    if W_h.shape != (d_h, d_h) or d_h == 0:
        raise ValueError(f"W_h has shape {W_h.shape}: it must be square (d_h, d_h) with d_h >= 1")
    if W_x.shape != (d_h, I.shape[0]):
        raise ValueError(
            f"W_x has shape {W_x.shape} but W_h is {W_h.shape} and I is {I.shape}: W_x must be ({d_h}, {I.shape[0]})"
        )
    h0 = np.zeros(d_h, np.result_type(I, W_h, W_x)) if h0 is None else as_array("h0", h0, ndim=1)
    if h0.shape != (d_h,):
        raise ValueError(f"h0 has shape {h0.shape} but W_h is {W_h.shape}: h0 must be ({d_h},)")
    return I, W_h, W_x, h0


def rnn_step(h_prev, a, W_h, W_x):
    """One step of a simple recurrent neural network: h = tanh(W_h h_prev + W_x a).

    Parameters
    ----------
    h_prev : (d_h,) ndarray
        The memory after the previous step.
    a : (d,) ndarray
        This step's input vector.
    W_h : (d_h, d_h) ndarray
    W_x : (d_h, d) ndarray

    Returns
    -------
    (d_h,) ndarray
        The new memory.
    """
    h_prev = as_array("h_prev", h_prev, ndim=1)
    a = as_array("a", a, ndim=1)
    W_h = as_array("W_h", W_h, ndim=2)
    W_x = as_array("W_x", W_x, ndim=2)
    d_h = h_prev.shape[0]
    if W_h.shape != (d_h, d_h) or W_x.shape != (d_h, a.shape[0]):
        raise ValueError(
            f"h_prev {h_prev.shape}, a {a.shape}, W_h {W_h.shape}, W_x {W_x.shape}: "
            f"W_h must be ({d_h}, {d_h}) and W_x ({d_h}, {a.shape[0]})"
        )
    return _step(h_prev, a, W_h, W_x)


def _step(h_prev, a, W_h, W_x):
    # contiguous copies: every caller then runs the very same BLAS kernel, so equal inputs give equal bits
    return np.tanh(W_h @ np.ascontiguousarray(h_prev) + W_x @ np.ascontiguousarray(a))


def rnn(I, W_h, W_x, h0=None):
    """A simple recurrent neural network (循環神經網路) over a sequence, one step after another.

    Parameters
    ----------
    I : (d, N) ndarray
        The input sequence; column t is a^t.
    W_h : (d_h, d_h) ndarray
        Memory to memory.
    W_x : (d_h, d) ndarray
        Input to memory.
    h0 : (d_h,) ndarray, optional
        The memory before the first step (zeros by default).

    Returns
    -------
    H : (d_h, N) ndarray
        Column t is h^t = tanh(W_h h^{t-1} + W_x a^t). Step t needs step t-1's result, so the
        N steps run one after another.
    """
    I, W_h, W_x, h = _check_rnn(I, W_h, W_x, h0)
    H = np.empty((W_h.shape[0], I.shape[1]), dtype=np.result_type(I, W_h, W_x, h))
    for t in range(I.shape[1]):
        h = _step(h, I[:, t], W_h, W_x)
        H[:, t] = h
    return H


def rnn_parallel_rounds(I, W_h, W_x, h0=None):
    """Rounds an RNN needs when every position is updated at once from the previous round's memories.

    Round 0 guesses every memory as h0. In each round, every position t computes
    ``rnn_step(guess[t-1], a^t)`` at the same time, from the guesses of the round before. The
    function counts the rounds until the guesses equal :func:`rnn`'s memories exactly.

    Parameters
    ----------
    I : (d, N) ndarray
    W_h : (d_h, d_h) ndarray
    W_x : (d_h, d) ndarray
    h0 : (d_h,) ndarray, optional

    Returns
    -------
    rounds : int
        The number of parallel rounds (at most N: after round r the first r memories are right).
    wrong : list of int
        ``wrong[r]`` is how many of the N memories are still wrong after round r + 1.
    """
    I, W_h, W_x, h0 = _check_rnn(I, W_h, W_x, h0)
    N = I.shape[1]
    target = rnn(I, W_h, W_x, h0)
    guess = np.tile(h0[:, None], (1, N))
    wrong = []
    for _ in range(N):
        previous = np.concatenate([h0[:, None], guess[:, :-1]], axis=1)  # h^{t-1} as last round left it
        guess = np.stack([_step(previous[:, t], I[:, t], W_h, W_x) for t in range(N)], axis=1)
        wrong.append(int(np.sum(np.any(guess != target, axis=0))))
        if wrong[-1] == 0:
            break
    return len(wrong), wrong
