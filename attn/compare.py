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

from collections import deque

import numpy as np

from ._checks import as_array, check_count, check_qkv, check_sequence
from . import applications
from .core import self_attention

# --------------------------------------------------------------------------------------------
# CNN: a convolution is self-attention with a fixed receptive field
# --------------------------------------------------------------------------------------------


def _check_kernel_size(kernel_size):
    k = check_count("kernel_size", kernel_size, 1)
    if k % 2 == 0:
        raise ValueError(f"kernel_size must be odd (a centre pixel and r pixels on each side), got {k}")
    return k


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
    r = _check_kernel_size(kernel_size) // 2
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


def rnn_dependencies(N):
    """What each memory of an RNN is computed from.

    Parameters
    ----------
    N : int
        Sequence length.

    Returns
    -------
    dict
        ``deps[("h", t)]`` is the tuple of nodes that h^t reads: ``("h", t-1)`` (except for t = 0)
        and the input ``("a", t)``. Positions count from 0.
    """
    N = check_count("N", N, 1)
    return {("h", t): ((("h", t - 1),) if t > 0 else ()) + (("a", t),) for t in range(N)}


def attention_dependencies(N):
    """What each output of self-attention is computed from: every input, directly.

    Parameters
    ----------
    N : int

    Returns
    -------
    dict
        ``deps[("b", i)]`` is ``(("a", 0), ..., ("a", N-1))``.
    """
    N = check_count("N", N, 1)
    inputs = tuple(("a", j) for j in range(N))
    return {("b", i): inputs for i in range(N)}


def conv_dependencies(N, kernel_size, layers):
    """What each output of a stack of 1-D convolutions is computed from.

    Parameters
    ----------
    N : int
        Sequence length.
    kernel_size : int
        Odd width k of each layer's window.
    layers : int
        Number of stacked layers.

    Returns
    -------
    dict
        ``deps[("conv", l, t)]`` (layer l = 1 ... layers) reads positions t - r ... t + r of the layer
        below (r = (k-1)/2, clipped at the ends); layer 0 is the input ``("a", t)``.
    """
    N, layers = check_count("N", N, 1), check_count("layers", layers, 1)
    r = _check_kernel_size(kernel_size) // 2

    def node(l, t):
        return ("a", t) if l == 0 else ("conv", l, t)

    return {node(l, t): tuple(node(l - 1, s) for s in range(max(0, t - r), min(N, t + r + 1)))
            for l in range(1, layers + 1) for t in range(N)}


def _check_deps(deps):
    if not isinstance(deps, dict) or not deps:
        raise ValueError(f"deps must be a non-empty dict node -> tuple of nodes, got {type(deps).__name__}")


def sequential_steps(deps):
    """The number of steps that must run one after another: the longest chain of dependent computations.

    Parameters
    ----------
    deps : dict
        Node -> the nodes it is computed from (as from :func:`rnn_dependencies`). Nodes that are
        not keys are inputs, available at step 0.

    Returns
    -------
    int
        The largest depth, where an input has depth 0 and a computed node has
        1 + the largest depth of what it reads. Everything of the same depth can run in parallel.
    """
    _check_deps(deps)
    depth = {}
    for start in deps:
        if start in depth:
            continue
        stack, on_path = [(start, iter(deps[start]))], {start}
        while stack:  # depth-first without recursion, so long chains are fine
            node, parents = stack[-1]
            for p in parents:
                if p in deps and p not in depth:
                    if p in on_path:
                        raise ValueError(f"deps has a cycle: {p!r} depends on itself")
                    on_path.add(p)
                    stack.append((p, iter(deps[p])))
                    break
            else:  # every parent has its depth
                depth[node] = 1 + max((depth.get(p, 0) for p in deps[node]), default=0)
                on_path.discard(node)
                stack.pop()
    return max(depth.values())


def path_length(deps, source, target):
    """The fewest computations information passes through from ``source`` to ``target``.

    Parameters
    ----------
    deps : dict
        Node -> the nodes it is computed from.
    source, target : hashable
        Two nodes, e.g. ``("a", 0)`` and ``("h", N - 1)``.

    Returns
    -------
    int or None
        The number of edges on the shortest path from source to target, or None when target does
        not depend on source at all.
    """
    _check_deps(deps)
    readers = {}
    for node, parents in deps.items():
        for p in parents:
            readers.setdefault(p, []).append(node)
    if source not in readers and source not in deps:
        raise ValueError(f"source {source!r} is not a node of deps")
    if target not in deps:
        raise ValueError(f"target {target!r} is not a computed node of deps")
    seen, queue = {source: 0}, deque([source])
    while queue:  # breadth first: the first time target is reached is the shortest path
        node = queue.popleft()
        if node == target:
            return seen[node]
        for nxt in readers.get(node, ()):
            if nxt not in seen:
                seen[nxt] = seen[node] + 1
                queue.append(nxt)
    return None


def conv_layers_to_connect(N, kernel_size):
    """How many stacked 1-D convolution layers it takes before output N depends on input 1.

    Parameters
    ----------
    N : int
        Sequence length, at least 2.
    kernel_size : int
        Odd width of each layer's window, at least 3.

    Returns
    -------
    int
        The smallest number of layers L for which :func:`path_length` from ``("a", 0)`` to
        ``("conv", L, N - 1)`` exists; found by building the stacks, not from a formula.
    """
    N = check_count("N", N, 2)
    k = _check_kernel_size(kernel_size)
    if k < 3:
        raise ValueError(f"kernel_size must be at least 3 to reach a neighbour, got {k}")
    layers = 1
    while path_length(conv_dependencies(N, k, layers), ("a", 0), ("conv", layers, N - 1)) is None:
        layers += 1
    return layers


# --------------------------------------------------------------------------------------------
# Linear attention: the same attention in parallel or as a recurrence
# --------------------------------------------------------------------------------------------


def elu_feature_map(x):
    """phi(x) = elu(x) + 1, the feature map of Katharopoulos et al. (2020); positive everywhere.

    Parameters
    ----------
    x : (...) ndarray

    Returns
    -------
    ndarray
        x + 1 where x > 0 and exp(x) where x <= 0; same shape as x.
    """
    x = as_array("x", x)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def _check_self_attention_qkv(Q, K, V):
    """Q, K (d_k, N) and V (d_v, N): one sequence attending to itself, every query a key."""
    Q, K, V = check_qkv(Q, K, V)
    if Q.ndim != 2 or Q.shape != K.shape:
        raise ValueError(f"Q has shape {Q.shape} and K has shape {K.shape}: self-attention needs both (d_k, N)")
    return Q, K, V


def linear_attention(Q, K, V, *, causal=False):
    """Linear attention in the lecture's matrix form: the scores exp(k . q) become phi(k) . phi(q).

    Parameters
    ----------
    Q, K : (d_k, N) ndarray
        Queries and keys as columns.
    V : (d_v, N) ndarray
        Values as columns.
    causal : bool
        If True, query i only sees keys j <= i (as a decoder does).

    Returns
    -------
    O : (d_v, N) ndarray
        Column i is b^i = sum_j alpha'_{i,j} v^j.
    A_prime : (N, N) ndarray
        ``A_prime[j, i] = phi(k^j) . phi(q^i) / sum_l phi(k^l) . phi(q^i)`` (sums over j, l <= i if
        causal); columns sum to 1.

    Notes
    -----
    All N columns are computed at once, as in training. :func:`linear_attention_recurrent` gives
    the causal version's same outputs one step at a time.
    """
    Q, K, V = _check_self_attention_qkv(Q, K, V)
    A = elu_feature_map(K).T @ elu_feature_map(Q)  # (N, d_k) x (d_k, N) -> (N, N), all entries > 0
    if causal:
        j, i = np.indices(A.shape)
        A = np.where(j <= i, A, 0.0)
    A_prime = A / A.sum(axis=0, keepdims=True)
    return V @ A_prime, A_prime  # (d_v, N) x (N, N) -> (d_v, N)


def linear_attention_step(S, z, q, k, v):
    """One step of causal linear attention as a recurrence with the state (S, z).

    Parameters
    ----------
    S : (d_v, d_k) ndarray
        Running sum of v^j phi(k^j)^T over the steps so far.
    z : (d_k,) ndarray
        Running sum of phi(k^j).
    q, k : (d_k,) ndarray
        This step's query and key.
    v : (d_v,) ndarray
        This step's value.

    Returns
    -------
    S, z : the updated state
        S + v phi(k)^T and z + phi(k).
    b : (d_v,) ndarray
        This step's output S phi(q) / (z . phi(q)), with the updated state.
    """
    S = as_array("S", S, ndim=2)
    z, q, k, v = (as_array(n, x, ndim=1) for n, x in (("z", z), ("q", q), ("k", k), ("v", v)))
    d_v, d_k = S.shape
    if z.shape != (d_k,) or q.shape != (d_k,) or k.shape != (d_k,) or v.shape != (d_v,):
        raise ValueError(
            f"S {S.shape}, z {z.shape}, q {q.shape}, k {k.shape}, v {v.shape}: with S of shape (d_v, d_k) = "
            f"{S.shape}, z, q and k must be ({d_k},) and v ({d_v},)"
        )
    return _linear_step(S, z, q, k, v)


def _linear_step(S, z, q, k, v):
    phi_k, phi_q = elu_feature_map(k), elu_feature_map(q)
    S = S + np.outer(v, phi_k)  # (d_v, 1) x (1, d_k) -> (d_v, d_k)
    z = z + phi_k
    return S, z, (S @ phi_q) / (z @ phi_q)


def linear_attention_recurrent(Q, K, V):
    """Causal linear attention run as an RNN: one step per position, a state of fixed size.

    Parameters
    ----------
    Q, K : (d_k, N) ndarray
    V : (d_v, N) ndarray

    Returns
    -------
    O : (d_v, N) ndarray
        Equal to ``linear_attention(Q, K, V, causal=True)[0]``.
    S : (d_v, d_k) ndarray
    z : (d_k,) ndarray
        The state after the last step: its size does not grow with N.

    Notes
    -----
    S_i = S_{i-1} + v^i phi(k^i)^T, z_i = z_{i-1} + phi(k^i), b^i = S_i phi(q^i) / (z_i . phi(q^i))
    (Katharopoulos et al. 2020, in column notation).
    """
    Q, K, V = _check_self_attention_qkv(Q, K, V)
    dtype = np.result_type(Q, K, V)
    S, z = np.zeros((V.shape[0], K.shape[0]), dtype), np.zeros(K.shape[0], dtype)
    O = np.empty((V.shape[0], Q.shape[1]), dtype)
    for i in range(Q.shape[1]):
        S, z, O[:, i] = _linear_step(S, z, Q[:, i], K[:, i], V[:, i])
    return O, S, z
