"""attn.efficient: chunked, streaming and truncated attention equal the plain matrix form.

Correctness is tested here, and chunked_attention's working memory is bounded (tracemalloc).
Speed is measured by `make bench` (benchmarks/run.py), never in the test suite.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attn import band_mask, softmax
from attn.efficient import (
    attention_flops,
    attention_matrix_bytes,
    band_pairs,
    chunked_attention,
    matrix_attention,
    streaming_attention,
    truncated_attention,
)

FAST = settings(max_examples=40, deadline=None)


def reference(Q, K, V, scale=1.0, mask=None):
    """V softmax(scale K^T Q) per head in float64, written out with attn.softmax."""
    Q, K, V = (np.asarray(x, dtype=np.float64) for x in (Q, K, V))
    A = scale * np.einsum("...kj,...ki->...ji", K, Q)  # A[j, i] = scale k^j . q^i
    if mask is not None:
        A = np.where(mask, A, -np.inf)
    return V @ softmax(A, axis=-2)


@st.composite
def problems(draw, dtype=np.float64):
    """Random Q, K, V (with 0-2 head axes), a scale and block sizes that need not divide N."""
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    d_k, d_v = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    N_q, N_k = draw(st.integers(1, 40)), draw(st.integers(1, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    Q = rng.normal(size=lead + (d_k, N_q)).astype(dtype)
    K = rng.normal(size=lead + (d_k, N_k)).astype(dtype)
    V = rng.normal(size=lead + (d_v, N_k)).astype(dtype)
    scale = draw(st.sampled_from([1.0, 0.5, 1 / np.sqrt(d_k), 3.0]))
    block, key_block = draw(st.integers(1, 45)), draw(st.integers(1, 45))
    return Q, K, V, scale, block, key_block


@FAST
@given(problems())
def test_chunked_and_streaming_equal_the_matrix_form_float64(p):
    Q, K, V, scale, block, key_block = p
    R = reference(Q, K, V, scale)
    np.testing.assert_allclose(matrix_attention(Q, K, V, scale=scale), R, rtol=0, atol=1e-12)
    O = chunked_attention(Q, K, V, scale=scale, block=block)
    assert O.shape == R.shape and O.dtype == np.float64
    np.testing.assert_allclose(O, R, rtol=0, atol=1e-12)
    O = streaming_attention(Q, K, V, scale=scale, block=block, key_block=key_block)
    np.testing.assert_allclose(O, R, rtol=0, atol=1e-12)


@FAST
@given(problems(dtype=np.float32))
def test_chunked_and_streaming_equal_the_matrix_form_float32(p):
    Q, K, V, scale, block, key_block = p
    R = reference(Q, K, V, scale)  # float64 from the same float32 inputs
    for O in (chunked_attention(Q, K, V, scale=scale, block=block),
              streaming_attention(Q, K, V, scale=scale, block=block, key_block=key_block),
              matrix_attention(Q, K, V, scale=scale)):
        assert O.dtype == np.float32
        np.testing.assert_allclose(O, R, rtol=0, atol=1e-5)


@FAST
@given(problems(), st.integers(2, 5))
def test_chunked_with_threads_equals_one_thread_float64(p, threads):
    """The threaded path splits the queries between threads; every split gives the same O."""
    Q, K, V, scale, block, _ = p
    one = chunked_attention(Q, K, V, scale=scale, block=block)
    many = chunked_attention(Q, K, V, scale=scale, block=block, threads=threads)
    assert many.shape == one.shape and many.dtype == np.float64
    np.testing.assert_allclose(many, one, rtol=0, atol=1e-13)
    np.testing.assert_allclose(many, reference(Q, K, V, scale), rtol=0, atol=1e-12)


@FAST
@given(problems(dtype=np.float32), st.integers(2, 5))
def test_chunked_with_threads_float32(p, threads):
    Q, K, V, scale, block, _ = p
    O = chunked_attention(Q, K, V, scale=scale, block=block, threads=threads)
    assert O.dtype == np.float32
    np.testing.assert_allclose(O, reference(Q, K, V, scale), rtol=0, atol=1e-5)
    np.testing.assert_allclose(O, chunked_attention(Q, K, V, scale=scale, block=block), rtol=0, atol=1e-5)


def test_chunked_with_threads_at_benchmark_shapes_float32():
    """8 heads, d = 64, scale 1/8, N not a multiple of the block: the setting the benchmark times."""
    rng = np.random.default_rng(9)
    Q, K, V = (rng.standard_normal((8, 64, 700), dtype=np.float32) for _ in range(3))
    R = reference(Q, K, V, 1 / 8)
    for threads in (1, 2):
        O = chunked_attention(Q, K, V, scale=1 / 8, threads=threads)
        assert O.dtype == np.float32
        np.testing.assert_allclose(O, R, rtol=0, atol=1e-5)
    np.testing.assert_allclose(matrix_attention(Q, K, V, scale=1 / 8), R, rtol=0, atol=1e-5)


def test_chunked_with_threads_equals_self_attention():
    import attn

    rng = np.random.default_rng(10)
    I, W_q, W_k, W_v = rng.normal(size=(6, 41)), rng.normal(size=(4, 6)), rng.normal(size=(4, 6)), rng.normal(size=(3, 6))
    O, _ = attn.self_attention(I, W_q, W_k, W_v, scale=0.5)
    for threads in (2, 3):
        np.testing.assert_allclose(chunked_attention(W_q @ I, W_k @ I, W_v @ I, scale=0.5, block=8, threads=threads),
                                   O, rtol=0, atol=1e-12)
    O32 = chunked_attention(*(x.astype(np.float32) for x in (W_q @ I, W_k @ I, W_v @ I)), scale=0.5, threads=2)
    np.testing.assert_allclose(O32, O, rtol=0, atol=1e-5)


@FAST
@given(st.integers(1, 30), st.integers(1, 30), st.integers(1, 12), st.integers(1, 12),
       st.sampled_from([1e3, 1e6]), st.integers(0, 2**32 - 1))
def test_extreme_logits(N_q, N_k, block, key_block, offset, seed):
    """Scores of +-1e6 and more: every score exact (small integers), the softmax must not overflow."""
    rng = np.random.default_rng(seed)
    Q = rng.integers(-3, 4, size=(2, 3, N_q)).astype(np.float64)
    K = rng.integers(-3, 4, size=(2, 3, N_k)).astype(np.float64)
    Q[:, 0] = offset  # every score of query i gets +offset * k_0: huge positive and negative logits
    K[:, 0] = rng.integers(-2, 3, size=(2, N_k))
    V = rng.normal(size=(2, 4, N_k))
    scale = 1024.0  # a power of two keeps the scores exact
    R = reference(Q, K, V, scale)
    assert np.isfinite(R).all()
    np.testing.assert_allclose(chunked_attention(Q, K, V, scale=scale, block=block), R, rtol=0, atol=1e-12)
    np.testing.assert_allclose(streaming_attention(Q, K, V, scale=scale, block=block, key_block=key_block),
                               R, rtol=0, atol=1e-12)
    O32 = streaming_attention(Q.astype(np.float32), K.astype(np.float32), V.astype(np.float32),
                              scale=scale, block=block, key_block=key_block)
    np.testing.assert_allclose(O32, R, rtol=0, atol=1e-5)


def test_streaming_with_single_key_blocks_is_exact():
    """key_block = 1: the online softmax rescales after every single key."""
    rng = np.random.default_rng(3)
    Q, K, V = rng.normal(size=(4, 17)), rng.normal(size=(4, 17)), rng.normal(size=(2, 17))
    np.testing.assert_allclose(streaming_attention(Q, K, V, block=5, key_block=1), reference(Q, K, V), atol=1e-12)


def test_single_head_equals_self_attention():
    import attn

    rng = np.random.default_rng(4)
    I, W_q, W_k, W_v = rng.normal(size=(5, 23)), rng.normal(size=(3, 5)), rng.normal(size=(3, 5)), rng.normal(size=(4, 5))
    O, _ = attn.self_attention(I, W_q, W_k, W_v, scale=0.5)
    np.testing.assert_allclose(chunked_attention(W_q @ I, W_k @ I, W_v @ I, scale=0.5, block=4), O, atol=1e-12)


@FAST
@given(st.integers(1, 50), st.integers(0, 60), st.integers(1, 20), st.integers(0, 2**32 - 1))
def test_truncated_attention_equals_the_masked_matrix_form(N, width, block, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.normal(size=(2, 3, N)), rng.normal(size=(2, 3, N)), rng.normal(size=(2, 2, N))
    mask = band_mask(N, width)
    R = reference(Q, K, V, 0.5, mask)
    np.testing.assert_allclose(truncated_attention(Q, K, V, width=width, scale=0.5, block=block), R, atol=1e-12)
    np.testing.assert_allclose(matrix_attention(Q, K, V, scale=0.5, mask=mask), R, atol=1e-12)
    assert band_pairs(N, width) == mask.sum()


def test_truncated_attention_with_a_wide_band_is_full_attention():
    rng = np.random.default_rng(5)
    Q, K, V = rng.normal(size=(3, 12)), rng.normal(size=(3, 12)), rng.normal(size=(2, 12))
    np.testing.assert_allclose(truncated_attention(Q, K, V, width=11), reference(Q, K, V), atol=1e-12)


def test_counts():
    assert attention_matrix_bytes(100) == 80_000
    assert attention_matrix_bytes(500, dtype=np.float32) == 1_000_000
    assert attention_matrix_bytes(4, N_k=3, heads=2) == 2 * 3 * 4 * 8
    assert attention_flops(10, d_k=4, d_v=2, heads=3) == 2 * 3 * 100 * 6
    assert band_pairs(1, 5) == 1
    assert band_pairs(10, 0) == 10
    assert band_pairs(1000, 3) == 1000 * 7 - 12  # linear in N


def test_chunked_agrees_with_torch_sdpa(torch):
    """Cross-check against an implementation nobody here wrote (PyTorch's rows: Q_r = Q^T)."""
    rng = np.random.default_rng(6)
    Q, K, V = rng.normal(size=(2, 8, 30)), rng.normal(size=(2, 8, 30)), rng.normal(size=(2, 5, 30))
    rows = [torch.from_numpy(np.ascontiguousarray(x.swapaxes(-1, -2))) for x in (Q, K, V)]
    out = torch.nn.functional.scaled_dot_product_attention(*rows, scale=0.3).numpy().swapaxes(-1, -2)
    np.testing.assert_allclose(chunked_attention(Q, K, V, scale=0.3, block=7), out, atol=1e-12)
    np.testing.assert_allclose(streaming_attention(Q, K, V, scale=0.3, block=7, key_block=4), out, atol=1e-12)


GOOD = np.ones((2, 3))


@pytest.mark.parametrize("fn", [chunked_attention, streaming_attention, matrix_attention])
@pytest.mark.parametrize("args, match", [
    ((np.ones((2, 3)), np.ones((4, 3)), GOOD), r"Q has shape \(2, 3\) and K has shape \(4, 3\)"),
    ((GOOD, np.ones((2, 5)), GOOD), r"K has shape \(2, 5\) and V has shape \(2, 3\)"),
    ((np.ones(3), GOOD, GOOD), r"Q must have at least 2 axes .* shape \(3,\)"),
    ((np.ones((2, 2, 3)), np.ones((3, 2, 3)), np.ones((2, 2, 3))), r"leading .* Q \(2, 2, 3\), K \(3, 2, 3\)"),
    ((np.ones((2, 0)), GOOD, GOOD), r"Q has shape \(2, 0\)"),
    ((GOOD, np.full((2, 3), np.nan), GOOD), r"K must be finite"),
    ((GOOD, GOOD, np.array([["a", "b", "c"]])), r"V must hold real numbers"),
])
def test_bad_input_names_the_shapes(fn, args, match):
    with pytest.raises(ValueError, match=match):
        fn(*args)


def test_bad_parameters():
    with pytest.raises(ValueError, match="block must be an integer >= 1, got 0"):
        chunked_attention(GOOD, GOOD, GOOD, block=0)
    with pytest.raises(ValueError, match="threads must be an integer >= 1, got 0"):
        chunked_attention(GOOD, GOOD, GOOD, threads=0)
    with pytest.raises(ValueError, match="threads must be an integer >= 1, got 1.5"):
        chunked_attention(GOOD, GOOD, GOOD, threads=1.5)
    with pytest.raises(ValueError, match="key_block must be an integer >= 1, got 2.5"):
        streaming_attention(GOOD, GOOD, GOOD, key_block=2.5)
    with pytest.raises(ValueError, match="scale must be finite"):
        chunked_attention(GOOD, GOOD, GOOD, scale=np.inf)
    with pytest.raises(ValueError, match=r"as many keys as queries \(4 != 3\)"):
        truncated_attention(GOOD, np.ones((2, 4)), np.ones((2, 4)), width=1)
    with pytest.raises(ValueError, match="width must be an integer >= 0, got -1"):
        truncated_attention(GOOD, GOOD, GOOD, width=-1)
    with pytest.raises(ValueError, match=r"mask has shape \(3, 3\) but there are 4 keys and 3 queries"):
        matrix_attention(GOOD, np.ones((2, 4)), np.ones((2, 4)), mask=np.ones((3, 3), bool))
    with pytest.raises(ValueError, match="mask column 1 is all False"):
        matrix_attention(GOOD, GOOD, GOOD, mask=np.eye(3, dtype=bool) & np.array([True, False, True]))
    with pytest.raises(ValueError, match="N must be an integer >= 1"):
        attention_matrix_bytes(0)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(8)
    Q, K, V = (rng.normal(size=(2, 3, 9)).astype(np.float32) for _ in range(3))
    copies = [x.copy() for x in (Q, K, V)]
    chunked_attention(Q, K, V, scale=2.0, block=4)
    chunked_attention(Q, K, V, scale=2.0, block=4, threads=2)
    matrix_attention(Q, K, V, scale=2.0)
    streaming_attention(Q, K, V, scale=2.0, block=4, key_block=2)
    truncated_attention(Q, K, V, width=2, scale=2.0, block=4)
    for x, c in zip((Q, K, V), copies):
        np.testing.assert_array_equal(x, c)


@FAST
@given(problems(dtype=np.float32), st.integers(1, 9), st.sampled_from([None, 1, 2, 3]))
def test_chunked_over_key_tiles_float32(p, tile, threads):
    """Tiles of the keys smaller than N_k (and not dividing it): the same O, whatever the threads."""
    import attn.efficient as eff

    Q, K, V, scale, block, _ = p
    kept = eff.KEY_TILE
    eff.KEY_TILE = tile
    try:
        O = chunked_attention(Q, K, V, scale=scale, block=block, threads=threads)
    finally:
        eff.KEY_TILE = kept
    assert O.dtype == np.float32 and O.shape == V.shape[:-1] + (Q.shape[-1],)
    np.testing.assert_allclose(O, reference(Q, K, V, scale), rtol=0, atol=1e-5)


@FAST
@given(problems(), st.integers(1, 9))
def test_chunked_over_key_tiles_float64(p, tile):
    import attn.efficient as eff

    Q, K, V, scale, block, _ = p
    kept = eff.KEY_TILE
    eff.KEY_TILE = tile
    try:
        O = chunked_attention(Q, K, V, scale=scale, block=block)
    finally:
        eff.KEY_TILE = kept
    np.testing.assert_allclose(O, reference(Q, K, V, scale), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("spread", [1.0, 40.0, 400.0])
def test_chunked_float32_when_the_scores_lie_far_below_the_bound(seed, spread):
    """Peaked attention: scores far below the float32 shift |scale q^i| max_j |k^j|, so that rows
    are computed again with their maximum. It is as accurate as the float32 matrix form."""
    rng = np.random.default_rng(seed)
    Q, K, V = (rng.standard_normal((2, 64, 600), dtype=np.float32) for _ in range(3))
    Q *= np.float32(spread)
    K[:, :, 0] *= 4  # one long key raises every query's bound
    R = reference(Q, K, V, 1 / 8)
    scores = np.einsum("hkj,hki->hij", K.astype(np.float64), Q.astype(np.float64)) / 8
    bound = np.linalg.norm(Q, axis=1) / 8 * np.linalg.norm(K, axis=1).max(axis=1, keepdims=True)
    gap = bound - scores.max(axis=2)
    if spread > 1:
        assert gap.max() > 60 * np.log(2)  # the recomputed rows exist in this data
    error = np.abs(chunked_attention(Q, K, V, scale=1 / 8) - R).max()
    error_matrix_form = np.abs(matrix_attention(Q, K, V, scale=1 / 8) - R).max()
    assert error <= max(2 * error_matrix_form, 1e-5), (error, error_matrix_form)


def test_chunked_float32_extreme_logits():
    """Scores of about 1e9 that float32 holds exactly: the same answer as the float64 reference."""
    rng = np.random.default_rng(11)
    Q = rng.integers(-3, 4, size=(2, 3, 50)).astype(np.float32)
    K = rng.integers(-3, 4, size=(2, 3, 70)).astype(np.float32)
    Q[:, 0] = 1e6
    K[:, 0] = rng.integers(-2, 3, size=(2, 70))
    V = rng.normal(size=(2, 4, 70)).astype(np.float32)
    O = chunked_attention(Q, K, V, scale=1024.0, block=16)
    assert np.isfinite(O).all()
    np.testing.assert_allclose(O, reference(Q, K, V, 1024.0), rtol=0, atol=1e-5)


def test_default_call_at_benchmark_shapes_float32():
    """The call a reader makes, no options: 8 heads, d = 64, scale 1/8, N no multiple of any tile."""
    rng = np.random.default_rng(12)
    Q, K, V = (rng.standard_normal((8, 64, 1100), dtype=np.float32) for _ in range(3))
    O = chunked_attention(Q, K, V, scale=1 / 8)
    assert O.dtype == np.float32
    np.testing.assert_allclose(O, reference(Q, K, V, 1 / 8), rtol=0, atol=1e-5)


def test_default_call_leaves_the_blas_threads_as_they_were():
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return [lib["num_threads"] for lib in threadpoolctl.threadpool_info() if lib["user_api"] == "blas"]

    before = blas_threads()
    Q = np.ones((3, 4, 20), dtype=np.float32)
    chunked_attention(Q, Q, Q, threads=2)
    chunked_attention(Q, Q, Q)
    assert blas_threads() == before


def test_default_call_memory_at_N_16384():
    """The default call at N = 16384 holds far less than 1/8 of one head's N x N float32 matrix (1 GiB).

    tracemalloc sees numpy's allocations: the peak during the call, minus the output every
    method must return, is the call's working memory (score tiles, [K; 1], [V^T, 1], blocks).
    """
    import tracemalloc

    N, heads = 16384, 2
    rng = np.random.default_rng(13)
    Q, K, V = (rng.standard_normal((heads, 64, N), dtype=np.float32) for _ in range(3))
    one_matrix = N * N * 4
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        O = chunked_attention(Q, K, V, scale=1 / 8)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    extra = peak - O.nbytes
    assert extra <= one_matrix / 8, f"{extra / 2**20:.1f} MiB"
    assert O.shape == (heads, 64, N) and np.isfinite(O).all()
    # the answer is still attention: a few queries against the float64 reference
    cols = [0, 4097, N - 1]
    np.testing.assert_allclose(O[..., cols], reference(Q[..., cols], K, V, 1 / 8), rtol=0, atol=1e-5)


@pytest.mark.parametrize("threads", [16, 32])
def test_memory_at_N_16384_whatever_the_threads(threads):
    """Many threads: the working memory stays below 1/8 of one head's N_k x N_k float32 matrix.

    The threads share one head's [K; 1] and [V^T, 1] at a time, so adding threads adds only
    their small score tiles. Threads that each held their own copies would need 16 x 8.5 MB
    here, more than the bound. Few queries (256) against N_k = 16384 keys keep the run short.
    """
    import tracemalloc

    N_k, N_q, heads = 16384, 256, 8
    rng = np.random.default_rng(14)
    Q = rng.standard_normal((heads, 64, N_q), dtype=np.float32)
    K, V = (rng.standard_normal((heads, 64, N_k), dtype=np.float32) for _ in range(2))
    one_matrix = N_k * N_k * 4
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        O = chunked_attention(Q, K, V, scale=1 / 8, threads=threads)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    extra = peak - O.nbytes
    assert extra <= one_matrix / 8, f"{extra / one_matrix:.3f} of one N x N matrix"
    assert O.shape == (heads, 64, N_q)
    cols = [0, 100, N_q - 1]
    np.testing.assert_allclose(O[..., cols], reference(Q[..., cols], K, V, 1 / 8), rtol=0, atol=1e-5)
