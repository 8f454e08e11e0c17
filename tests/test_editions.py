"""The Chinese editions' catalogs: complete, faithful to the source's maths, code, links and numbers, and in the
right script. zh_TW is translated by hand; zh_CN is derived from it by tools/editions.py and must not drift.

A changed English sentence makes its message untranslated (or fuzzy) after `sphinx-intl update`, and these tests
fail until it is translated again (CONTRIBUTING.md says how).
"""

import re
from collections import Counter
from pathlib import Path

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
# A count in millions, as English writes it ("36 million", "9, 30 and 90 million", "0.44 M") and as Chinese does
# (3600 萬, 3 億, 44 萬).
MILLIONS = re.compile(r"((?:\d+(?:\.\d+)?, )*\d+(?:\.\d+)?(?:,? and \d+(?:\.\d+)?)?) million\b"
                      r"|(\d+(?:\.\d+)?) M\b")
CHINESE_COUNT = re.compile(r"(\d+(?:\.\d+)?) ?([萬万億亿])")
# A number with its thousands set apart by spaces or commas, as the English text writes them: 16 000, 60 000,
# 768,000 (one separator throughout; a list "5, 30" has a space after its comma and stays two numbers).
THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}([ ,])\d{3}(?:\1\d{3})*(?!\d|[.,]\d)")
SCALE = {"萬": 10**4, "万": 10**4, "億": 10**8, "亿": 10**8}


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
    # Counts in millions become plain numbers, so that "36 million" and "3600 萬" keep the same number.
    rest = MILLIONS.sub(lambda m: " ".join(_plain(float(n) * 10**6) for n in NUMBER.findall(m.group(1) or m.group(2))),
                        rest)
    rest = CHINESE_COUNT.sub(lambda m: _plain(float(m.group(1)) * SCALE[m.group(2)]), rest)
    rest = THOUSANDS.sub(lambda m: m.group(0).replace(m.group(1), ""), rest)  # "60 000", "768,000": one number
    return Counter(math), Counter(code), Counter(roles), Counter(NUMBER.findall(rest))


def _plain(value):
    return f"{value:.0f}" if value == int(value) else f"{value:g}"


def test_counts_in_millions_are_compared_by_value():
    assert invariants("36 million entries")[3] == invariants("3600 萬個元素")[3]
    assert invariants("9, 30 and 90 million images")[3] == invariants("900 萬、3000 萬與 9000 萬張")[3]
    assert invariants("1.3 million")[3] == invariants("130 萬")[3] != invariants("1.3 百萬")[3]
    assert invariants("300 million")[3] == invariants("3 億張")[3] != invariants("300 萬")[3]
    assert invariants("16 000 samples, 60 000 vectors")[3] == invariants("1.6 萬個樣本，6 萬個向量")[3]
    assert invariants("768,000 numbers, 4,160 and 1,000,000")[3] == invariants("76.8 萬個數字、4160 與 100 萬")[3]
    assert invariants("5,800, 11,600 and 16,400")[3] == invariants("5800、1.16 萬與 1.64 萬")[3]
    assert invariants("sizes 5, 30 and 90")[3] == invariants("大小 5、30 與 90")[3] != invariants("大小 530 與 90")[3]
    assert invariants("needs 0.44 M; about 479 M")[3] == invariants("需要 44 萬；約 4.79 億")[3]
    assert invariants("0.44 M at r = 5 and 479 M at r = 5997")[3] == invariants("r = 5 時 44 萬，r = 5997 時 4.79 億")[3]


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


def _prose(text):
    """A message without its maths, inline code and roles (where English words are allowed to stay)."""
    return MATH.sub(" ", ROLE_OR_CODE.sub(" ", text))


def taiwan_only_words(path=ROOT / "tools" / "taiwan_only.txt"):
    """The Taiwan-only words (compiled patterns) that the zh_CN catalogs must not hold."""
    words = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            words.append(re.compile(line[3:].strip() if line.startswith("re:") else re.escape(line)))
    return words


def test_the_taiwan_only_list_catches_what_it_lists():
    words = taiwan_only_words()
    assert len(words) >= 80
    found = lambda text: [w.pattern for w in words if w.search(text)]  # noqa: E731
    assert found("预设值") and found("平行计算") and found("对角在线") and found("98 个帧")
    assert not found("平行直线、测试套件、在线 softmax、放在线索上、个人资料、参考资料、对角线上")
    assert found("要不是在较粗的网格上，要不然就") and found("争用内核") and found("水准") and found("「资料」")
    assert not found("平行的带状纹、打印在下面、打印为、构建出、纪录片、水准仪、“资料”")


@pytest.mark.parametrize("page", PAGES, ids=str)
def test_zh_cn_holds_no_taiwan_only_word(page):
    words = taiwan_only_words()
    for m in messages("zh_CN", page):
        hits = [w.pattern for w in words if w.search(_prose(m.string))]
        assert not hits, f"zh_CN/{page}: Taiwan usage {hits} in {m.string[:80]!r} (extend TERM_TABLE, re-derive)"


def test_zh_cn_overrides_are_not_stale():
    from editions import ZH_CN_OVERRIDES

    for (page, msgid), text in ZH_CN_OVERRIDES.items():
        assert msgid in {m.id for m in messages("zh_TW", page)}, f"the zh_CN override of {page} {msgid[:60]!r} is stale"
        assert text in {m.string for m in messages("zh_CN", page)}, f"zh_CN/{page} does not hold its override"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES, ids=str)
def test_no_translation_reads_as_a_list(lang, page):
    # Sphinx parses each translation on its own: "1. 輸入與輸出" is a numbered list, and Sphinx then keeps the
    # English paragraph (the home page's chapter table). Write "1\\. " in the catalog.
    for m in messages(lang, page):
        assert not re.match(r"(\d+[.)]|[-*+]) ", m.string), f"{lang}/{page}: read as a list: {m.string[:60]!r}"


@pytest.mark.parametrize("page", PAGES, ids=str)
def test_zh_tw_uses_one_word_per_concept(page):
    for m in messages("zh_TW", page):
        if m.id.startswith("\n"):
            continue  # a display-maths block
        english, chinese = _prose(m.id), _prose(m.string)
        if re.search(r"\bbias", english):
            assert "偏差" not in chinese, f"zh_TW/{page}: a bias is 偏置 (偏差 is statistical bias): {m.string[:60]!r}"
        if re.search(r"\bmillion", english):
            assert "百萬" not in chinese, f"zh_TW/{page}: count in 萬 and 億, not 百萬: {m.string[:60]!r}"
        if re.search(r"\bmachine bound\b", english):
            assert "上限" not in chinese, f"zh_TW/{page}: t_min is the shortest time, 機器極限: {m.string[:60]!r}"
        if re.search(r"\btokens?\b", english):
            assert not re.search(r"\btokens?\b", chinese), f"zh_TW/{page}: a token is 詞元: {m.string[:60]!r}"
        assert "程式行" not in chinese, f"zh_TW/{page}: 一行程式碼, not 程式行: {m.string[:60]!r}"
        if re.search(r"\bcells?\b", english) and "程式碼區塊" in chinese:
            raise AssertionError(f"zh_TW/{page}: a notebook cell is 儲存格: {m.string[:60]!r}")


def test_every_figure_alt_text_is_a_translated_message():
    from edition_i18n import notebook_alt_texts

    notebooks = sorted((ROOT / "chapters").glob("*.ipynb"))
    assert notebooks
    count = 0
    for notebook in notebooks:
        page = Path("chapters") / notebook.with_suffix(".po").name
        translated = {m.id: m.string for m in messages("zh_TW", page)}
        for alt, _ in notebook_alt_texts(notebook):
            count += 1
            assert re.search(r"[\u4e00-\u9fff]", translated.get(alt, "")), f"zh_TW/{page}: alt text not translated: {alt[:60]!r}"
    assert count >= 30, f"only {count} alt texts in the chapters"


def test_zh_cn_quotes_are_the_mainland_ones_outside_code_and_maths():
    from editions import mainland_quotes

    assert mainland_quotes("稱為「資料」與『例』") == "稱為\u201c資料\u201d與\u2018例\u2019"
    assert mainland_quotes("`print(\"「x」\")` 與 $「$") == "`print(\"「x」\")` 與 $「$"
