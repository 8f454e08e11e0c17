"""attn.diagrams: the two schematic figures draw the boxes and arrows the lecture's pictures have."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from attn import diagrams  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.mark.parametrize("N", [2, 4, 6])
def test_b1_diagram_draws_every_step(N):
    texts, arrows = diagrams.drawn_labels(diagrams.b1_diagram(N))
    for i in range(1, N + 1):
        for label in (f"$a^{i}$", f"$k^{i}$", f"$v^{i}$", rf"$\alpha_{{1,{i}}}$", rf"$\alpha'_{{1,{i}}}$"):
            assert label in texts, f"N = {N}: no box {label}"
        for arrow in (f"a^{i} -> k^{i}", f"a^{i} -> v^{i}", f"k^{i} -> alpha_1,{i}", f"q^1 -> alpha_1,{i}",
                      f"alpha_1,{i} -> softmax", f"softmax -> alpha'_1,{i}", f"v^{i} -> times"):
            assert arrow in arrows, f"N = {N}: no arrow {arrow}"
    assert "$q^1$" in texts and "$q^2$" not in texts  # only query 1 is drawn
    assert "a^1 -> q^1" in arrows
    assert sum(t.startswith("softmax") for t in texts) == 1  # one softmax over all the scores
    assert arrows.count("times -> b^1") == N
    assert any(t.startswith("$b^1") for t in texts)


def test_b1_diagram_rejects_sizes_that_do_not_fit():
    with pytest.raises(ValueError, match="N = 7"):
        diagrams.b1_diagram(7)
    with pytest.raises(ValueError, match="N"):
        diagrams.b1_diagram(1)


def test_multi_head_diagram_keeps_the_heads_apart():
    texts, arrows = diagrams.drawn_labels(diagrams.multi_head_diagram())
    for p in "ij":
        for name in "qkv":
            for m in (1, 2):
                assert f"${name}^{{{p},{m}}}$" in texts
                assert f"{name}^{p} -> {name}^{p},{m}" in arrows
    for m in (1, 2):
        into_head = [a.split(" -> ")[0] for a in arrows if a.endswith(f"-> head {m}")]
        assert sorted(into_head) == sorted([f"q^i,{m}", f"k^i,{m}", f"v^i,{m}", f"k^j,{m}", f"v^j,{m}"])
        assert f"head {m} -> b^i,{m}" in arrows and f"b^i,{m} -> W^O" in arrows
    assert "W^O -> b^i" in arrows and "$W^O$" in texts and "$b^i$" in texts


def test_diagrams_fit_the_book_width():
    for fig in (diagrams.b1_diagram(), diagrams.multi_head_diagram()):
        width, height = fig.get_size_inches()
        assert width <= 10 and height <= 8


@pytest.mark.parametrize("N", [2, 4, 6])
def test_b1_diagram_routes_the_values_around_the_softmax(N):
    """The values do not pass through the softmax: no point of a value's route lies inside the softmax box."""
    import numpy as np
    from matplotlib.patches import FancyBboxPatch

    ax = diagrams.b1_diagram(N).axes[0]
    (soft,) = [p for p in ax.patches if isinstance(p, FancyBboxPatch) and p.get_label() == "softmax"]
    x0, y0 = soft.get_x(), soft.get_y()
    x1, y1 = x0 + soft.get_width(), y0 + soft.get_height()
    routes = {line.get_label(): line for line in ax.lines if line.get_label().endswith(" route")}
    assert sorted(routes) == sorted(f"v^{j} route" for j in range(1, N + 1))
    for label, line in routes.items():
        xs, ys = line.get_xdata(), line.get_ydata()
        assert ys[0] < y0 and ys[-1] > y1, f"{label} must start below the softmax box and end above it"
        for (xa, ya), (xb, yb) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
            t = np.linspace(0, 1, 200)
            px, py = xa + t * (xb - xa), ya + t * (yb - ya)
            inside = (px > x0) & (px < x1) & (py > y0) & (py < y1)
            assert not inside.any(), f"{label} crosses the softmax box"
