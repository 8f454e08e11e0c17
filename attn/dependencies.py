"""Dependency graphs: how many steps must run one after another, and how far apart two positions are
(chapter 8, comparing an RNN, a stack of convolutions and self-attention).

A graph maps each computed node to the nodes it is computed from; the inputs ("a", t) depend on nothing.
"""

from collections import deque

from ._checks import check_count, check_kernel_size


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
    r = check_kernel_size(kernel_size) // 2

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
    k = check_kernel_size(kernel_size)
    if k < 3:
        raise ValueError(f"kernel_size must be at least 3 to reach a neighbour, got {k}")
    layers = 1
    while path_length(conv_dependencies(N, k, layers), ("a", 0), ("conv", layers, N - 1)) is None:
        layers += 1
    return layers
