"""The Chinese editions' catalogs: complete, faithful to the source's maths, code, links and numbers, and in the
right script. zh_TW is translated by hand; zh_CN is derived from it by tools/editions.py and must not drift.

A changed English sentence makes its message untranslated (or fuzzy) after `sphinx-intl update`, and these tests
fail until it is translated again (CONTRIBUTING.md says how).
"""

import re
from collections import Counter

import pytest
from babel.messages.pofile import read_po

from book_site import ROOT, TRANSLATIONS

LOCALES = ROOT / "locales"
LANGS = TRANSLATIONS
PAGES = sorted(p.relative_to(LOCALES / "zh_TW" / "LC_MESSAGES") for p in (LOCALES / "zh_TW" / "LC_MESSAGES").rglob("*.po"))

MATH = re.compile(r"\$\$.*?\$\$|\$[^$\n]+\$", re.S)
# A MyST role ({ref}`target`) or an inline code span, read left to right so that `{ref}` in code stays code.
ROLE_OR_CODE = re.compile(r"\{(\w+)\}`([^`]*)`|(`[^`]+`)")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def catalog(lang, page):
    with (LOCALES / lang / "LC_MESSAGES" / page).open("rb") as f:
        return read_po(f)


def messages(lang, page):
    return [m for m in catalog(lang, page) if m.id]


def invariants(text):
    """What a translation must keep: maths, inline code, link targets and citation keys, and the numbers."""
    roles, code = [], []
    for name, body, span in ROLE_OR_CODE.findall(text):
        if span:
            code.append(span)
        else:  # {doc}`text <target>` keeps its target; {cite}`key` and {numref}`label` keep all
            target = re.search(r"<([^<>]+)>$", body)
            roles.append((name, target.group(1) if target else body))
    rest = ROLE_OR_CODE.sub(" ", text)
    math = MATH.findall(rest)
    rest = MATH.sub(" ", rest)
    return Counter(math), Counter(code), Counter(roles), Counter(NUMBER.findall(rest))


def test_both_editions_have_every_page():
    assert PAGES, "locales/zh_TW holds no catalog"
    for lang in LANGS:
        for page in PAGES:
            assert (LOCALES / lang / "LC_MESSAGES" / page).exists(), f"{lang} has no catalog for {page}"


def test_catalogs_cover_every_page_of_the_book():
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    entries = re.findall(r"^\s*-?\s*(?:file|root):\s*(\S+)", toc, flags=re.M)
    for entry in entries:
        assert (LOCALES / "zh_TW" / "LC_MESSAGES" / f"{entry}.po").exists(), f"{entry} has no zh_TW catalog"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES, ids=str)
def test_every_message_is_translated_and_none_fuzzy(lang, page):
    for m in messages(lang, page):
        assert m.string.strip(), f"{lang}/{page}: untranslated: {m.id[:80]!r}"
        assert not m.fuzzy, f"{lang}/{page}: fuzzy (the English changed): {m.id[:80]!r}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES, ids=str)
def test_translation_keeps_maths_code_links_and_numbers(lang, page):
    for m in messages(lang, page):
        if not m.string:
            continue
        source, translation = invariants(m.id), invariants(m.string)
        for what, a, b in zip(("maths", "inline code", "links", "numbers"), source, translation):
            assert a == b, f"{lang}/{page}: the {what} differ in {m.id[:60]!r}: lost {dict(a - b)}, added {dict(b - a)}"


@pytest.mark.parametrize("page", PAGES, ids=str)
def test_zh_tw_reads_as_chinese(page):
    # A message with words in it is translated, not copied; maths, code and names may stay as they are.
    for m in messages("zh_TW", page):
        if m.id.startswith("\n"):
            continue  # a display-maths block: nothing to translate
        text = re.sub(r"\\[A-Za-z]+(\{[^}]*\})?", " ", MATH.sub(" ", ROLE_OR_CODE.sub(" ", m.id)))
        words = re.sub(r"[^A-Za-z ]", " ", text)
        if len(re.findall(r"[A-Za-z]{3,}", words)) >= 4:
            assert re.search(r"[\u4e00-\u9fff]", m.string), f"zh_TW/{page}: not translated: {m.id[:80]!r}"


def test_zh_cn_is_what_zh_tw_derives():
    from editions import LOCALES as derived_root, derive

    assert derived_root == LOCALES
    for rel, text in derive().items():
        path = LOCALES / "zh_CN" / "LC_MESSAGES" / rel
        assert path.read_text(encoding="utf-8") == text, f"zh_CN/{rel} is stale: run `python tools/editions.py derive`"


@pytest.mark.parametrize("page", PAGES, ids=str)
def test_zh_cn_holds_no_traditional_only_character(page):
    opencc = pytest.importorskip("opencc")
    t2s = opencc.OpenCC("t2s")
    for m in messages("zh_CN", page):
        converted = t2s.convert(m.string)
        assert converted == m.string, f"zh_CN/{page}: Traditional characters in {m.string[:80]!r}"


def test_row_and_column_swap_between_the_editions():
    from editions import to_simplified

    # Taiwan: 列 = row, 行 = column; the mainland the other way round. 序列 (sequence) is neither.
    assert to_simplified("第 2 列是一個列向量，第 3 行是一個行向量；序列") == "第 2 行是一个行向量，第 3 列是一个列向量；序列"
    assert to_simplified("查詢向量") == "查询向量"  # OpenCC's tw2sp alone writes 查找矢量
