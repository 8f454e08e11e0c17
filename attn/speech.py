"""Speech as a sequence (chapter 1): a 16 kHz signal cut into 25 ms frames every 10 ms, optionally turned
into log mel filter-bank vectors. Each frame is one column of ``I`` (d, N), as everywhere in :mod:`attn`.
"""

import numpy as np

from ._checks import as_array, check_count, check_positive_number


def ms_to_samples(ms, sample_rate=16000):
    """How many samples ``ms`` milliseconds hold at ``sample_rate`` Hz (must be a whole number).

    >>> ms_to_samples(25), ms_to_samples(10)
    (400, 160)
    """
    ms = check_positive_number("ms", ms)
    sample_rate = check_count("sample_rate", sample_rate, 1)
    n = ms * sample_rate / 1000.0
    if abs(n - round(n)) > 1e-9:
        raise ValueError(f"{ms} ms at {sample_rate} Hz is {n} samples, not a whole number")
    return int(round(n))


def frame_count(n_samples, window=400, hop=160):
    """Number of full frames of ``window`` samples, one every ``hop`` samples.

    Parameters
    ----------
    n_samples : int
        Length of the signal (0 allowed).
    window, hop : int
        Frame length and shift in samples (400 and 160 are 25 ms and 10 ms at 16 kHz).

    Returns
    -------
    int
        ``1 + (n_samples - window) // hop`` when the signal holds one frame, else 0.

    Examples
    --------
    >>> frame_count(16000)   # one second at 16 kHz
    98
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 0:
        raise ValueError(f"n_samples must be a non-negative integer, got {n_samples!r}")
    window = check_count("window", window, 1)
    hop = check_count("hop", hop, 1)
    return 0 if n_samples < window else 1 + (int(n_samples) - window) // hop


def frame_signal(x, sample_rate=16000, window_ms=25, shift_ms=10):
    """Cut a signal into overlapping frames, one frame per column.

    Parameters
    ----------
    x : (n_samples,) ndarray
        The waveform.
    sample_rate : int
        Samples per second.
    window_ms, shift_ms : float
        Frame length and the shift between frame starts, in milliseconds.

    Returns
    -------
    frames : (window, T) ndarray
        Column t is ``x[t * hop : t * hop + window]``; T = :func:`frame_count`.
        Only full frames are kept (no padding at the end).

    Notes
    -----
    Lecture part 上, slide 4: 25 ms windows every 10 ms, so one second gives about
    100 frame vectors (98 full ones at 16 kHz) and a minute about 6000.
    """
    x = as_array("x", x, ndim=1)
    window = ms_to_samples(window_ms, sample_rate)
    hop = ms_to_samples(shift_ms, sample_rate)
    T = frame_count(x.shape[0], window, hop)
    if T == 0:
        raise ValueError(f"x has shape {x.shape}: shorter than one frame of {window} samples ({window_ms} ms)")
    starts = hop * np.arange(T)
    return x[starts[None, :] + np.arange(window)[:, None]]  # (window, 1) + (1, T) -> (window, T) indices


def chirp(duration_s=1.0, sample_rate=16000, f_start=200.0, f_end=4000.0, amplitude=0.5):
    """A synthetic test signal: a sine whose frequency rises linearly from f_start to f_end.

    Parameters
    ----------
    duration_s : float
    sample_rate : int
    f_start, f_end : float
        Start and end frequency in Hz; both below sample_rate / 2.
    amplitude : float

    Returns
    -------
    (n_samples,) ndarray
        n_samples = round(duration_s * sample_rate).
    """
    duration_s = check_positive_number("duration_s", duration_s)
    sample_rate = check_count("sample_rate", sample_rate, 1)
    for name, f in (("f_start", f_start), ("f_end", f_end)):
        f = check_positive_number(name, f)
        if f >= sample_rate / 2:
            raise ValueError(f"{name} = {f} Hz is not below the Nyquist frequency {sample_rate / 2} Hz")
    amplitude = check_positive_number("amplitude", amplitude)
    t = np.arange(int(round(duration_s * sample_rate))) / sample_rate
    phase = 2 * np.pi * (f_start * t + (f_end - f_start) * t**2 / (2 * duration_s))
    return amplitude * np.sin(phase)


def hz_to_mel(f):
    """The mel scale, 2595 log10(1 + f / 700): equal steps sound about equally far apart."""
    f = as_array("f", f)
    if np.any(f < 0):
        raise ValueError("f must be non-negative frequencies in Hz")
    return 2595.0 * np.log10(1.0 + f / 700.0)


def mel_to_hz(m):
    """Inverse of :func:`hz_to_mel`."""
    m = as_array("m", m)
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def mel_filterbank(n_filters=80, n_fft=512, sample_rate=16000):
    """Triangular filters equally spaced on the mel scale, from 0 Hz to sample_rate / 2.

    Parameters
    ----------
    n_filters : int
    n_fft : int
        FFT length; the power spectrum has n_fft // 2 + 1 bins.
    sample_rate : int

    Returns
    -------
    F : (n_filters, n_fft // 2 + 1) ndarray
        Row m is filter m's weight on each frequency bin; peaks at 1.
    """
    n_filters = check_count("n_filters", n_filters, 1)
    n_fft = check_count("n_fft", n_fft, 1)
    sample_rate = check_count("sample_rate", sample_rate, 1)
    bins = np.arange(n_fft // 2 + 1) * sample_rate / n_fft  # bin centre frequencies in Hz
    edges = mel_to_hz(np.linspace(0.0, float(hz_to_mel(sample_rate / 2)), n_filters + 2))
    lower, centre, upper = edges[:-2, None], edges[1:-1, None], edges[2:, None]  # (n_filters, 1) each
    rising = (bins - lower) / (centre - lower)
    falling = (upper - bins) / (upper - centre)
    return np.maximum(0.0, np.minimum(rising, falling))


def log_mel_features(frames, n_filters=80, n_fft=512, sample_rate=16000):
    """Turn raw frames into log mel filter-bank vectors (the lecture's 80-dim filter bank).

    Parameters
    ----------
    frames : (window, T) ndarray
        Raw frames as columns, e.g. from :func:`frame_signal`; window <= n_fft.
    n_filters, n_fft, sample_rate : int

    Returns
    -------
    (n_filters, T) ndarray
        Column t is log(F |FFT(hamming * frame_t)|^2 + 1e-10).

    Notes
    -----
    Steps per frame: taper with a Hamming window, power spectrum, sum the energy in
    each mel triangle (:func:`mel_filterbank`), take the log. A 39-dim MFCC vector
    goes on from here: a DCT of the log energies keeps 13 coefficients, and their
    first and second differences across frames add 13 + 13.
    """
    frames = as_array("frames", frames, ndim=2)
    n_fft = check_count("n_fft", n_fft, 1)
    if frames.shape[0] > n_fft:
        raise ValueError(f"frames has shape {frames.shape}: frames of {frames.shape[0]} samples need n_fft >= that, got {n_fft}")
    tapered = frames * np.hamming(frames.shape[0])[:, None]
    power = np.abs(np.fft.rfft(tapered, n=n_fft, axis=0)) ** 2  # (n_fft // 2 + 1, T)
    F = mel_filterbank(n_filters, n_fft, sample_rate)
    return np.log(F @ power + 1e-10)  # (n_filters, bins) x (bins, T) -> (n_filters, T)
