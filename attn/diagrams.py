"""Schematic diagrams of the lecture's two central pictures (imports matplotlib).

Plain functions that draw boxes and arrows and return the Figure:

- :func:`b1_diagram`: how b^1 is made (part 上, slides 16-19): a^j -> q^1, k^j, v^j ->
  scores alpha_{1,j} -> softmax -> weights alpha'_{1,j} -> weighted sum b^1.
- :func:`multi_head_diagram`: two heads and W^O (part 下, slides 26-28).

Every box carries its label as text and every arrow is a ``FancyArrowPatch`` whose
label names its two ends ("a^1 -> q^1"), so a test can check what was drawn.
Like :mod:`attn.plot`, this module is not imported by ``import attn``.
"""

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from ._checks import check_count

HEAD_COLORS = ("#cfe2f3", "#fce5cd")  # head 1 blue, head 2 orange (light fills)
HEAD_EDGES = ("#1f77b4", "#d9730d")


def _box(ax, x, y, text, *, width=0.9, height=0.6, face="white", edge="black", fontsize=11, name=None):
    """Draw a rounded box centred on (x, y) with ``text`` inside; return its centre and size."""
    patch = FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.04,rounding_size=0.1",
                           facecolor=face, edgecolor=edge, linewidth=1.2, zorder=2)
    patch.set_label(name or text)
    ax.add_patch(patch)
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, zorder=3)
    return (x, y, width, height)


def _arrow(ax, start, end, *, color="black", label="", style="-|>", lw=1.1, rad=0.0, zorder=1):
    """Draw an arrow from the edge of box ``start`` to the edge of box ``end`` (boxes as returned by _box)."""
    (x0, y0, w0, h0), (x1, y1, w1, h1) = start, end
    going_up = y1 > y0 + 1e-9
    if abs(y1 - y0) < 1e-9:  # side by side: leave from the side
        sign = 1 if x1 > x0 else -1
        p0, p1 = (x0 + sign * w0 / 2, y0), (x1 - sign * w1 / 2, y1)
    else:
        p0 = (x0, y0 + (h0 / 2 if going_up else -h0 / 2))
        p1 = (x1, y1 - (h1 / 2 if going_up else -h1 / 2))
    arrow = FancyArrowPatch(p0, p1, arrowstyle=style, mutation_scale=11, color=color, linewidth=lw,
                            connectionstyle=f"arc3,rad={rad}", zorder=zorder, shrinkA=2, shrinkB=2)
    arrow.set_label(label)
    ax.add_patch(arrow)
    return arrow


def _canvas(width, height, xlim, ylim):
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    ax.axis("off")
    return fig, ax


def b1_diagram(N=4):
    """Draw the computation of b^1 from a^1 ... a^N (lecture part 上, slides 16-19).

    As everywhere in the book, i is the query (here i = 1) and j runs over the keys.

    Parameters
    ----------
    N : int
        Number of input vectors, 2 to 6 (the lecture draws 4).

    Returns
    -------
    matplotlib.figure.Figure
        Bottom to top: the inputs a^j; the query q^1 and every key k^j and value v^j
        (W^q, W^k, W^v); the scores alpha_{1,j} = q^1 . k^j; one softmax over them;
        the weights alpha'_{1,j}; each v^j times its weight; their sum b^1. The values
        do not pass through the softmax: each v^j is routed around the right end of
        the softmax box (a line labelled "v^j route") to its multiplication.
    """
    N = check_count("N", N, 2)
    if N > 6:
        raise ValueError(f"N = {N} does not fit the drawing: use 2 to 6 input vectors")
    step = 2.2
    xs = [step * j for j in range(N)]  # column of position j + 1
    lane_gap = 0.2  # spacing of the value routes around the softmax box
    route_right = xs[-1] + 1.1  # first vertical lane, right of the last value box
    right = route_right + lane_gap * (N - 1) + 0.35  # the steps named along the right edge
    fig, ax = _canvas(3.4 + 1.35 * N + 0.6, 7.2, (-2.3, right + 2.6), (-0.6, 10.2))

    a = [_box(ax, x, 0, f"$a^{j + 1}$", face="#eeeeee") for j, x in enumerate(xs)]
    k = [_box(ax, x - 0.5, 1.7, f"$k^{j + 1}$", width=0.8, face="#d9ead3") for j, x in enumerate(xs)]
    v = [_box(ax, x + 0.5, 1.7, f"$v^{j + 1}$", width=0.8, face="#fff2cc") for j, x in enumerate(xs)]
    q1 = _box(ax, -1.5, 1.7, "$q^1$", width=0.8, face="#cfe2f3")
    for j in range(N):
        _arrow(ax, a[j], k[j], label=f"a^{j + 1} -> k^{j + 1}")
        _arrow(ax, a[j], v[j], label=f"a^{j + 1} -> v^{j + 1}")
    _arrow(ax, a[0], q1, label="a^1 -> q^1", rad=-0.25)
    ax.text(-1.95, 0.75, "$W^q$", fontsize=9, color="#1f77b4")
    ax.text(xs[0] - 0.95, 0.9, "$W^k$", fontsize=9, color="#38761d")
    ax.text(xs[0] + 0.55, 0.9, "$W^v$", fontsize=9, color="#7f6000")

    alpha = [_box(ax, x - 0.5, 3.5, rf"$\alpha_{{1,{j + 1}}}$", width=1.0, face="white") for j, x in enumerate(xs)]
    bus = 3.5 + 0.55  # q^1 runs along a line above the scores and drops into each
    ax.plot([-1.5, -1.5, xs[-1] - 0.5], [1.7 + 0.3, bus, bus], color="#1f77b4", linewidth=1.1, zorder=1)
    for j in range(N):
        _arrow(ax, k[j], alpha[j], label=f"k^{j + 1} -> alpha_1,{j + 1}")
        drop = FancyArrowPatch((xs[j] - 0.5 - 0.25, bus), (xs[j] - 0.5 - 0.25, 3.5 + 0.3), arrowstyle="-|>",
                               mutation_scale=9, color="#1f77b4", linewidth=1.1, zorder=1, shrinkA=0, shrinkB=1)
        drop.set_label(f"q^1 -> alpha_1,{j + 1}")
        ax.add_patch(drop)
    for y, note in ((0, "inputs"), (1.7, "query $q^1$, keys $k^j$,\nvalues $v^j$"),
                    (3.5, "scores\n$\\alpha_{1,j} = q^1 \\cdot k^j$"), (5.2, "one softmax"),
                    (6.7, "weights $\\alpha'_{1,j}$"), (8.0, "$\\alpha'_{1,j}\\, v^j$"), (9.4, "output")):
        ax.text(right, y, note, fontsize=9, va="center", color="#444444")

    soft = _box(ax, (xs[0] + xs[-1]) / 2 - 0.5, 5.2, "softmax over $j = 1, \\dots, %d$" % N,
                width=xs[-1] - xs[0] + 1.2, height=0.6, face="#f4cccc", name="softmax")
    for j in range(N):
        _arrow(ax, alpha[j], (xs[j] - 0.5, soft[1], 1.0, soft[3]), label=f"alpha_1,{j + 1} -> softmax")
    weights = [_box(ax, x - 0.5, 6.7, rf"$\alpha'_{{1,{j + 1}}}$", width=1.0) for j, x in enumerate(xs)]
    for j in range(N):
        _arrow(ax, (xs[j] - 0.5, soft[1], 1.0, soft[3]), weights[j], label=f"softmax -> alpha'_1,{j + 1}")

    times = [_box(ax, x + 0.5, 8.0, r"$\times$", width=0.5, height=0.5, name=f"times {j + 1}")
             for j, x in enumerate(xs)]
    value_colour = "#a67c00"
    for j in range(N):
        _arrow(ax, weights[j], times[j], label=f"alpha'_1,{j + 1} -> times")
        # v^j goes around the softmax box, never through it: up to a lane below the box, right past its end,
        # up past it, back left above it, and up into its multiplication. The last value's lanes are the
        # outermost, so the routes nest without crossing one another.
        x_v = xs[j] + 0.5
        below = 2.0 + 0.2 + 0.14 * (N - 1 - j)  # between the value boxes and the scores
        lane_x = route_right + lane_gap * j
        above = 5.5 + 0.15 + 0.13 * j  # between the softmax box and the weights
        route = Line2D([x_v, x_v, lane_x, lane_x, x_v], [1.7 + 0.3, below, below, above, above],
                       color=value_colour, linewidth=1.0, zorder=4, solid_joinstyle="round")
        route.set_label(f"v^{j + 1} route")
        ax.add_line(route)
        _arrow(ax, (x_v, above, 0.0, 0.0), times[j], label=f"v^{j + 1} -> times", lw=1.0, color=value_colour,
               zorder=4)
    total = _box(ax, (xs[0] + xs[-1]) / 2 + 0.5, 9.4, "$b^1 = \\sum_j \\alpha'_{1,j}\\, v^j$", width=2.6,
                 face="#d0e0e3", name="b^1")
    for j in range(N):
        _arrow(ax, times[j], total, label="times -> b^1")
    fig.tight_layout()
    return fig


def multi_head_diagram():
    """Draw two-head self-attention for two positions i and j (lecture part 下, slides 26-28).

    Returns
    -------
    matplotlib.figure.Figure
        Each position's q, k, v is multiplied by one matrix per head, giving one query,
        key and value per head (q^{i,1} = W^{q,1} q^i, ...). Head 1 (blue) compares only head-1 queries
        with head-1 keys and sums head-1 values into b^{i,1}; head 2 (orange) the
        same with its own vectors. The two outputs are stacked and W^O turns
        [b^{i,1}; b^{i,2}] into b^i.
    """
    fig, ax = _canvas(9.0, 6.9, (-1.2, 13.6), (-0.6, 10.0))
    positions = {"i": 3.4, "j": 9.8}
    per_head = {}
    for p, cx in positions.items():
        a = _box(ax, cx, 0, f"$a^{p}$", face="#eeeeee")
        for n, name in enumerate("qkv"):
            x = cx + 2.1 * (n - 1)
            used = not (name == "q" and p == "j")  # q^j serves b^j, which is not drawn
            base = _box(ax, x, 1.6, f"${name}^{p}$", width=0.8, edge="black" if used else "#aaaaaa")
            _arrow(ax, a, base, label=f"a^{p} -> {name}^{p}", color="black" if used else "#aaaaaa")
            for m in range(2):
                head = _box(ax, x + 0.5 * (2 * m - 1), 3.2, f"${name}^{{{p},{m + 1}}}$", width=0.95,
                            face=HEAD_COLORS[m] if used else "white", edge=HEAD_EDGES[m] if used else "#aaaaaa",
                            fontsize=10)
                _arrow(ax, base, head, color=HEAD_EDGES[m] if used else "#aaaaaa",
                       label=f"{name}^{p} -> {name}^{p},{m + 1}")
                per_head[(name, p, m)] = head
    attend = []
    for m in range(2):
        x = 4.6 + 3.8 * m
        text = (f"head {m + 1}: $\\alpha'^{{{m + 1}}}_{{i,j}}$ = softmax of $q^{{i,{m + 1}}} \\cdot k^{{j,{m + 1}}}$\n"
                f"$b^{{i,{m + 1}}} = \\sum_j \\alpha'^{{{m + 1}}}_{{i,j}}\\, v^{{j,{m + 1}}}$")
        attend.append(_box(ax, x, 5.3, text, width=3.6, height=1.0, face=HEAD_COLORS[m], edge=HEAD_EDGES[m],
                           fontsize=9, name=f"head {m + 1}"))
        for p in positions:
            names = "qkv" if p == "i" else "kv"  # the query of position i meets the keys of every position
            for name in names:
                _arrow(ax, per_head[(name, p, m)], attend[m], color=HEAD_EDGES[m], lw=0.8,
                       label=f"{name}^{p},{m + 1} -> head {m + 1}")
    stacked = []
    for m in range(2):
        stacked.append(_box(ax, 5.9 + 1.2 * m, 6.9, f"$b^{{i,{m + 1}}}$", width=1.1, face=HEAD_COLORS[m],
                            edge=HEAD_EDGES[m]))
        _arrow(ax, attend[m], stacked[m], color=HEAD_EDGES[m], label=f"head {m + 1} -> b^i,{m + 1}")
    ax.text(7.9, 6.9, "stacked: $[b^{i,1}; b^{i,2}]$", fontsize=9, va="center")
    w_o = _box(ax, 6.5, 8.2, "$W^O$", width=1.0, face="#d9d2e9")
    for m in range(2):
        _arrow(ax, stacked[m], w_o, color=HEAD_EDGES[m], label=f"b^i,{m + 1} -> W^O")
    out = _box(ax, 6.5, 9.4, "$b^i$", width=0.9, face="#d0e0e3")
    _arrow(ax, w_o, out, label="W^O -> b^i")
    ax.text(7.2, 8.2, "mixes the heads", fontsize=9, va="center")
    ax.text(-1.1, 3.2, "one matrix\nper head:\n$W^{q,m} q$,\n$W^{k,m} k$,\n$W^{v,m} v$", fontsize=9, va="center")
    ax.text(-1.1, 1.6, "$W^q a$,\n$W^k a$,\n$W^v a$", fontsize=9, va="center")
    fig.tight_layout()
    return fig


def drawn_labels(fig):
    """The texts and arrow labels of a diagram: ``(texts, arrows)``, for checking what was drawn.

    Returns
    -------
    texts : list of str
        The text of every box and note.
    arrows : list of str
        The label of every arrow, "start -> end".
    """
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    arrows = [p.get_label() for p in ax.patches if isinstance(p, FancyArrowPatch)]
    return texts, arrows
