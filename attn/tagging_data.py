"""Two toy tagging tasks for chapter 10: one no fixed window can solve, one no set of words can.

Sentences are made of words from a small vocabulary. Most words always take the
same tag ("the" is DET, "dog" is N). Four words are ambiguous, like the lecture's
"saw" in "I saw a saw": "saw", "watch", "book" and "fly" can be a noun (N) or a
verb (V). Every sentence holds exactly one cue word, placed anywhere, which
decides the reading of all its ambiguous words:

* "yesterday" makes them verbs ("yesterday ... saw" is the past of *see*);
* "sold" makes them nouns (things that were sold).

The cue can stand at any distance from an ambiguous word, so a tagger that only
sees a window of neighbours must guess whenever the cue is outside the window.

The **order task** (:func:`make_order_sentences`) turns the lecture's "I saw a saw" into
data: there is no cue, and an ambiguous word is a verb right after a pronoun ("I saw") and a
noun right after a determiner ("a saw"). Every ambiguous word comes with one determiner
and one pronoun in its sentence, one of them just before it and the other elsewhere, so the
*set* of words is the same whichever reading holds: only the order decides.

A sentence is a pair ``(tokens, tags)`` of int arrays of shape (N,): word ids into
:data:`VOCAB` and tag ids into :data:`TAGS`. Randomness only comes from
``np.random.default_rng(seed)``.
"""

from fractions import Fraction

import numpy as np

from ._checks import check_count

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
DETERMINERS = ("a", "the")
PRONOUNS = ("I", "she", "they")
ORDER_READING = {"DET": "N", "PRON": "V"}  # tag of the word before -> reading of an ambiguous word
AMBIGUOUS_IDS = np.array([WORD_ID[w] for w in AMBIGUOUS])
CUE_IDS = np.array([WORD_ID[w] for w in CUES])
_IS_AMBIGUOUS = np.isin(np.arange(len(VOCAB)), AMBIGUOUS_IDS)  # lookup by word id: faster than np.isin per call
_IS_CUE = np.isin(np.arange(len(VOCAB)), CUE_IDS)


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
    where = np.flatnonzero(_IS_CUE[tokens])
    if tokens.ndim != 1 or len(where) != 1:
        raise ValueError(f"tokens (shape {tokens.shape}) must be one sentence with exactly one cue, found {len(where)}")
    return int(where[0])


def is_ambiguous(tokens):
    """Boolean mask of the ambiguous words (same shape as ``tokens``)."""
    return _IS_AMBIGUOUS[check_tokens(tokens)]


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
    n = check_count("n", n, 1)
    min_len = check_count("min_len", min_len, 2)
    max_len = check_count("max_len", max_len, min_len)
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
    batch_size = check_count("batch_size", batch_size, 1)
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
    if len(sentences) == 0:
        raise ValueError("sentences is empty")
    return np.concatenate(_cue_distances_each(sentences))


def _cue_distances_each(sentences):
    """One array of |i - cue| per sentence, for its ambiguous words."""
    return [np.abs(np.flatnonzero(is_ambiguous(t)) - cue_position(t)) for t, _ in sentences]


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
    half_width = check_count("half_width", half_width, 0)
    n_tokens = sum(len(t) for t, _ in sentences)
    if n_tokens == 0:
        raise ValueError("sentences is empty")
    blind = int(np.sum(cue_distances(sentences) > half_width))
    return (n_tokens - 0.5 * blind) / n_tokens


def window_ceiling_band(sentences, half_width, *, coverage=0.95):
    """The range in which a consistent guesser at the window ceiling lands on these sentences, cues redrawn.

    :func:`window_ceiling` is an expectation over the cues. Here the sentences are
    fixed (words and the position of each cue) and what is random is which of the two
    cue words each sentence holds: fair and independent from sentence to sentence, as
    :func:`make_sentences` draws it. The tagger is right on every filler, every cue and
    every ambiguous word whose cue is within ``half_width``; on the other, *blind*,
    ambiguous words it guesses one reading for the whole sentence (say, always V). A
    sentence's blind words then share one fate: all right (its cue imposes that reading)
    or all wrong, with probability 1/2 each. With ``b_s`` blind words in sentence ``s``
    and ``T`` tokens in all, the accuracy is::

        (T - sum_s b_s + sum_s X_s b_s) / T,   X_s independent, 0 or 1 with probability 1/2,

    whose mean is the ceiling. Its distribution is computed exactly, by counting the
    subsets of sentences whose blind words are right (no sampling).

    Every window tagger that is right on all the words it can see and tags each blind word
    N or V has the same mean, since such a word is right with probability 1/2 whatever the
    guess (a tagger that puts another tag there is always wrong on it). If it
    guesses V on ``k_s`` of the blind words of sentence ``s`` and N on the others, that
    sentence adds ``k_s`` or ``b_s - k_s`` right words: a variance of
    ``(b_s - 2 k_s)**2 / 4``, at most the consistent guesser's ``b_s**2 / 4``, and
    smaller as soon as its guesses differ within a sentence (they cancel in part, and
    fully when each reading gets half of every sentence's blind words). A tagger that flips
    a fair coin for each blind word has ``b_s / 4``, again at most ``b_s**2 / 4``. So the
    consistent guesser has the largest variance of all these taggers; the band below is
    for it, not for a tagger whose guesses differ word by word.

    Parameters
    ----------
    sentences : list of (tokens, tags)
        Kept fixed; each sentence holds exactly one cue.
    half_width : int
        Words seen on each side of the position being tagged.
    coverage : float
        Least probability the band holds, in (0, 1).

    Returns
    -------
    (float, float)
        Accuracies ``(low, high)``, both values the tagger can reach: ``low`` is the
        highest with P(accuracy < low) <= (1 - coverage) / 2, and ``high`` the lowest
        with P(accuracy > high) <= (1 - coverage) / 2, so P(low <= accuracy <= high) >=
        ``coverage``. The band is symmetric about the ceiling. ``(1.0, 1.0)`` when no
        word is blind.

    Examples
    --------
    >>> one = encode(["yesterday", "the", "saw", "a", "dog", "saw"])  # saws at distance 2 and 5 from the cue
    >>> window_ceiling_band([(one, true_tags(one))], 1, coverage=0.5)  # both saws blind: 2 or 0 of them right
    (0.6666666666666666, 1.0)
    """
    half_width = check_count("half_width", half_width, 0)
    if not 0.0 < coverage < 1.0:
        raise ValueError(f"coverage must be in (0, 1), got {coverage!r}")
    if len(sentences) == 0:
        raise ValueError("sentences is empty")
    n_tokens = sum(len(t) for t, _ in sentences)
    blind = [int(np.sum(far > half_width)) for far in _cue_distances_each(sentences)]
    total_blind = sum(blind)
    ways = np.zeros(total_blind + 1, dtype=object)  # ways[k]: subsets of sentences with k right blind words
    ways[0] = 1
    for b in blind:  # multiply the generating function by (1 + x**b), in exact integers
        ways[b:] = ways[b:] + ways[:total_blind + 1 - b]
    below = np.cumsum(ways)  # below[k]: subsets with at most k right blind words
    allowed = (1 - Fraction(str(coverage))) / 2 * 2 ** len(sentences)  # a tail's count; 0.95 read as 19/20
    low = int(np.flatnonzero((below > allowed).astype(bool))[0])  # least k with P(S <= k) > tail: P(S < k) <= tail
    high = total_blind - low  # the distribution of S is symmetric about total_blind / 2
    return (n_tokens - total_blind + low) / n_tokens, (n_tokens - total_blind + high) / n_tokens


# --- the order task ---------------------------------------------------------------------------------


def order_tags(tokens):
    """The correct tag ids of an order-task sentence.

    Parameters
    ----------
    tokens : (N,) ndarray of int
        Every ambiguous word must directly follow a determiner or a pronoun.

    Returns
    -------
    tags : (N,) ndarray of int
        Fixed tags for the other words; an ambiguous word is N after a determiner
        ("a saw") and V after a pronoun ("I saw").

    Examples
    --------
    >>> [TAGS[k] for k in order_tags(encode(["I", "saw", "a", "saw"]))]
    ['PRON', 'V', 'DET', 'N']
    """
    tokens = check_tokens(tokens)
    if tokens.ndim != 1:
        raise ValueError(f"tokens must be one sentence of shape (N,), got shape {tokens.shape}")
    words = decode(tokens)
    tags = []
    for i, w in enumerate(words):
        if w in AMBIGUOUS:
            before = FILLERS.get(words[i - 1]) if i > 0 else None
            if before not in ORDER_READING:
                raise ValueError(f"the ambiguous word {w!r} at index {i} must follow a determiner or a pronoun, "
                                 f"got {words[i - 1] if i > 0 else 'the start of the sentence'!r}")
            tags.append(ORDER_READING[before])
        elif w in FILLERS:
            tags.append(FILLERS[w])
        else:
            raise ValueError(f"the order task has no cue words, got {w!r} at index {i}")
    return np.array([TAG_ID[t] for t in tags], dtype=np.intp)


def make_order_sentences(n, seed, *, min_len=4, max_len=8):
    """Generate ``n`` random sentences of the order task.

    A sentence of N words holds k = N // 3 ambiguous words. Each comes with a
    determiner and a pronoun: one of the two (either, with probability 1/2) stands just
    before it, the other anywhere else. The remaining N - 3k words are other fillers.
    The pieces are shuffled as units, so the multiset of words does not depend on the tags.

    Parameters
    ----------
    n : int
    seed : int
    min_len, max_len : int
        Lengths are drawn uniformly from ``min_len..max_len`` (both included, ``min_len >= 3``).

    Returns
    -------
    list of (tokens, tags)
    """
    n = check_count("n", n, 1)
    min_len = check_count("min_len", min_len, 3)
    max_len = check_count("max_len", max_len, min_len)
    rng = np.random.default_rng(seed)
    det_ids = np.array([WORD_ID[w] for w in DETERMINERS])
    pron_ids = np.array([WORD_ID[w] for w in PRONOUNS])
    other_ids = np.array([WORD_ID[w] for w in FILLERS if w not in DETERMINERS + PRONOUNS])
    sentences = []
    for _ in range(n):
        N = int(rng.integers(min_len, max_len + 1))
        k = N // 3
        units = []
        for _ in range(k):
            det, pron, word = int(rng.choice(det_ids)), int(rng.choice(pron_ids)), int(rng.choice(AMBIGUOUS_IDS))
            before, elsewhere = (det, pron) if rng.random() < 0.5 else (pron, det)
            units += [[before, word], [elsewhere]]
        units += [[int(w)] for w in rng.choice(other_ids, size=N - 3 * k)]
        tokens = np.array([w for u in (units[j] for j in rng.permutation(len(units))) for w in u], dtype=np.intp)
        sentences.append((tokens, order_tags(tokens)))
    return sentences


def set_ceiling(sentences):
    """The best expected accuracy of any tagger that sees a sentence only as a set of words.

    In the order task the multiset of words is the same for both readings of every
    ambiguous word, so such a tagger (self-attention without positions is one) can only
    guess them: right half the time. Every other word has a fixed tag.

    Parameters
    ----------
    sentences : list of (tokens, tags)

    Returns
    -------
    float
        (#tokens - #ambiguous / 2) / #tokens.
    """
    n_tokens = sum(len(t) for t, _ in sentences)
    if n_tokens == 0:
        raise ValueError("sentences is empty")
    n_ambiguous = sum(int(is_ambiguous(t).sum()) for t, _ in sentences)
    return (n_tokens - 0.5 * n_ambiguous) / n_tokens
