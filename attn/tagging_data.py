"""A toy tagging task that no fixed window can solve (chapter 10).

Sentences are made of words from a small vocabulary. Most words always take the
same tag ("the" is DET, "dog" is N). Four words are ambiguous, like the lecture's
"saw" in "I saw a saw": "saw", "watch", "book" and "fly" can be a noun (N) or a
verb (V). Every sentence holds exactly one cue word, placed anywhere, which
decides the reading of all its ambiguous words:

* "yesterday" makes them verbs ("yesterday ... saw" is the past of *see*);
* "sold" makes them nouns (things that were sold).

The cue can stand at any distance from an ambiguous word, so a tagger that only
sees a window of neighbours must guess whenever the cue is outside the window.

A sentence is a pair ``(tokens, tags)`` of int arrays of shape (N,): word ids into
:data:`VOCAB` and tag ids into :data:`TAGS`. Randomness only comes from
``np.random.default_rng(seed)``.
"""

import numpy as np

TAGS = ("DET", "ADJ", "N", "V", "PRON", "ADV")

PAD = "<pad>"
FILLERS = {
    "the": "DET", "a": "DET",
    "old": "ADJ", "red": "ADJ", "big": "ADJ",
    "man": "N", "dog": "N", "tree": "N",
    "I": "PRON", "she": "PRON", "they": "PRON",
    "ran": "V", "ate": "V",
    "slowly": "ADV",
}
AMBIGUOUS = ("saw", "watch", "book", "fly")
CUES = {"yesterday": ("ADV", "V"), "sold": ("V", "N")}  # cue -> (its own tag, the reading it imposes)

VOCAB = (PAD, *FILLERS, *AMBIGUOUS, *CUES)
WORD_ID = {w: k for k, w in enumerate(VOCAB)}
TAG_ID = {t: k for k, t in enumerate(TAGS)}
PAD_ID = WORD_ID[PAD]
AMBIGUOUS_IDS = np.array([WORD_ID[w] for w in AMBIGUOUS])
CUE_IDS = np.array([WORD_ID[w] for w in CUES])


def _check_int(name, value, minimum):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_tokens(tokens, name="tokens"):
    """Return ``tokens`` as an int array of word ids, or raise ValueError.

    Parameters
    ----------
    tokens : (N,) or (B, N) array_like of int
        Word ids, each in ``range(len(VOCAB))``.
    name : str
        The argument's name for error messages.

    Returns
    -------
    ndarray of int
    """
    arr = np.asarray(tokens)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer word ids, got dtype {arr.dtype}")
    if arr.ndim not in (1, 2) or arr.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (N,) or (B, N) with N > 0, got shape {arr.shape}")
    if arr.min() < 0 or arr.max() >= len(VOCAB):
        raise ValueError(f"{name} holds ids outside 0..{len(VOCAB) - 1}: min {arr.min()}, max {arr.max()}")
    return arr.astype(np.intp)


def encode(words):
    """Turn a list of words into an int array of word ids.

    Parameters
    ----------
    words : sequence of str
        Words from :data:`VOCAB`.

    Returns
    -------
    tokens : (N,) ndarray of int

    Examples
    --------
    >>> decode(encode(["yesterday", "I", "saw", "a", "dog"]))
    ['yesterday', 'I', 'saw', 'a', 'dog']
    """
    unknown = [w for w in words if w not in WORD_ID]
    if unknown or len(words) == 0:
        raise ValueError(f"words must be a non-empty list from VOCAB; unknown: {unknown}")
    return np.array([WORD_ID[w] for w in words], dtype=np.intp)


def decode(tokens):
    """Word ids back to words: ``(N,)`` int array -> list of N str."""
    return [VOCAB[k] for k in check_tokens(tokens).ravel()]


def true_tags(tokens):
    """The correct tag ids of a sentence.

    Parameters
    ----------
    tokens : (N,) ndarray of int
        One sentence holding exactly one cue word.

    Returns
    -------
    tags : (N,) ndarray of int
        Fixed tags for fillers and cues; for the ambiguous words, the reading that the cue imposes.
    """
    pos = cue_position(tokens)
    words = decode(tokens)
    reading = CUES[words[pos]][1]
    tags = [FILLERS.get(w) or (CUES[w][0] if w in CUES else reading) for w in words]
    return np.array([TAG_ID[t] for t in tags], dtype=np.intp)


def cue_position(tokens):
    """Index of the one cue word of a sentence ((N,) int array -> int)."""
    tokens = check_tokens(tokens)
    where = np.flatnonzero(np.isin(tokens, CUE_IDS))
    if tokens.ndim != 1 or len(where) != 1:
        raise ValueError(f"tokens (shape {tokens.shape}) must be one sentence with exactly one cue, found {len(where)}")
    return int(where[0])


def is_ambiguous(tokens):
    """Boolean mask of the ambiguous words (same shape as ``tokens``)."""
    return np.isin(check_tokens(tokens), AMBIGUOUS_IDS)


def make_sentences(n, seed, *, min_len=8, max_len=24, p_ambiguous=0.5):
    """Generate ``n`` random tagged sentences.

    Parameters
    ----------
    n : int
        Number of sentences.
    seed : int
        Seed of ``np.random.default_rng``; the same seed gives the same sentences.
    min_len, max_len : int
        Lengths are drawn uniformly from ``min_len..max_len`` (both included, ``min_len >= 2``).
    p_ambiguous : float
        Probability that a non-cue position holds an ambiguous word; every sentence has at least one.

    Returns
    -------
    list of (tokens, tags)
        ``tokens`` and ``tags`` are (N,) int arrays.

    Examples
    --------
    >>> tokens, tags = make_sentences(1, seed=0)[0]
    >>> tokens.shape == tags.shape
    True
    """
    n = _check_int("n", n, 1)
    min_len = _check_int("min_len", min_len, 2)
    max_len = _check_int("max_len", max_len, min_len)
    if not 0.0 <= p_ambiguous <= 1.0:
        raise ValueError(f"p_ambiguous must be in [0, 1], got {p_ambiguous!r}")
    rng = np.random.default_rng(seed)
    filler_ids = np.array([WORD_ID[w] for w in FILLERS])
    sentences = []
    for _ in range(n):
        N = int(rng.integers(min_len, max_len + 1))
        tokens = rng.choice(filler_ids, size=N)
        ambiguous = rng.random(N) < p_ambiguous
        ambiguous[rng.integers(N)] = True
        tokens[ambiguous] = rng.choice(AMBIGUOUS_IDS, size=int(ambiguous.sum()))
        free = np.flatnonzero(ambiguous)
        cue_at = int(rng.integers(N)) if len(free) > 1 else int(rng.choice(np.flatnonzero(~ambiguous)))
        tokens[cue_at] = rng.choice(CUE_IDS)
        tokens = tokens.astype(np.intp)
        sentences.append((tokens, true_tags(tokens)))
    return sentences


def length_batches(sentences, batch_size):
    """Group sentences of equal length into batches, so no padding is needed.

    Parameters
    ----------
    sentences : list of (tokens, tags)
    batch_size : int
        Largest number of sentences in a batch.

    Returns
    -------
    list of (tokens, tags)
        ``tokens`` and ``tags`` are (B, N) int arrays, B <= batch_size; sorted by N.
    """
    batch_size = _check_int("batch_size", batch_size, 1)
    if len(sentences) == 0:
        raise ValueError("sentences is empty")
    by_length = {}
    for tokens, tags in sentences:
        by_length.setdefault(len(tokens), []).append((tokens, tags))
    batches = []
    for N in sorted(by_length):
        group = by_length[N]
        for start in range(0, len(group), batch_size):
            chunk = group[start:start + batch_size]
            batches.append((np.stack([t for t, _ in chunk]), np.stack([g for _, g in chunk])))
    return batches


def cue_distances(sentences):
    """Distance |i - cue| from every ambiguous word to its sentence's cue.

    Returns
    -------
    (n_ambiguous,) ndarray of int
        One entry per ambiguous word, sentences in order.
    """
    out = [np.abs(np.flatnonzero(is_ambiguous(t)) - cue_position(t)) for t, _ in sentences]
    return np.concatenate(out)


def window_ceiling(sentences, half_width):
    """The best expected accuracy any tagger that sees only a window can reach.

    A tagger that sees the words ``i - half_width .. i + half_width`` knows the tag of a
    filler, a cue, and an ambiguous word whose cue is inside the window. When the cue
    is outside, both readings are equally likely (the two cues are drawn with equal
    probability, independently of everything else), so the best it can do is be right
    half the time.

    Parameters
    ----------
    sentences : list of (tokens, tags)
    half_width : int
        Words seen on each side of the position being tagged.

    Returns
    -------
    float
        Expected fraction of all tokens tagged correctly by the best window tagger.
    """
    half_width = _check_int("half_width", half_width, 0)
    n_tokens = sum(len(t) for t, _ in sentences)
    if n_tokens == 0:
        raise ValueError("sentences is empty")
    blind = int(np.sum(cue_distances(sentences) > half_width))
    return (n_tokens - 0.5 * blind) / n_tokens
