"""The Chinese editions: derive the Simplified (zh_CN) catalogs from the Traditional (zh_TW) ones, and check them.

English is the only source. Translations live in gettext catalogs, ``locales/<lang>/LC_MESSAGES/<page>.po``;
zh_TW is translated by hand, zh_CN is derived from it here:

1. Words that contain 列 or 行 without meaning row or column (序列, 執行, ...) are set aside.
2. Row and column swap: Taiwan writes a row 列 and a column 行, the mainland 行 and 列.
3. The glossary's own pairs (查詢 -> 查询, 批次 -> 批量, ...) and the project's term table are set aside too, so
   that OpenCC cannot turn them into something else (its ``tw2sp`` writes 查詢向量 as 查找矢量).
4. OpenCC ``tw2sp`` converts the rest: characters and Taiwan's everyday words (記憶體 -> 内存, 程式碼 -> 代码).

Usage: ``python tools/editions.py derive`` rewrites locales/zh_CN from locales/zh_TW; ``check`` only compares;
``build LANG`` builds edition LANG into _build/html/LANG (strict, as the English one); ``sphinx-conf`` writes the
conf.py that build uses (Jupyter Book's translation of _config.yml).
"""

import re
import sys
from pathlib import Path

from book_site import ROOT, TRANSLATIONS

LOCALES = ROOT / "locales"

# Words in which 列 or 行 mean neither row nor column; they are the same on both sides of the strait.
NOT_ROW_OR_COLUMN = [
    "序列", "排列", "陣列", "列出", "列舉", "並列", "列表", "列為",
    "執行", "進行", "運行", "平行", "並行", "行為", "可行", "實行", "自行", "行動", "流行", "同行",
]
# zh_TW -> zh_CN terms OpenCC gets wrong for this field, beyond the glossary's own pairs.
TERM_TABLE = {
    "向量": "向量",  # OpenCC: 矢量; in machine learning both sides say 向量
    "序列": "序列",  # OpenCC: 串行 (serial)
    "查詢": "查询",  # OpenCC: 查找
    "投影片": "幻灯片",  # OpenCC: 投视频
    "程式行": "代码行",
    "行程式碼": "行代码",  # a line of code (一行程式碼), not a column
    "列印": "打印",  # to print, not a row
    "印出來": "打印出来", "印出的": "打印出的",
    "zip 檔": "zip 文件",
    "正規化": "归一化",  # OpenCC: 范式
    "儲存格": "单元格",  # OpenCC: 保存格
    "變異數": "方差",
    "純量": "标量",
    "個人檔案": "个人资料",
    "儲存庫": "仓库",
    "社群網路": "社交网络",
    "連鎖律": "链式法则",
    "偵測": "检测",
    "鑑別器": "判别器",
    "串流": "流式",
    "傳回": "返回",
    "辨識": "识别",
    "範例": "示例",
    "實作": "实现",
    "堆疊": "堆叠",  # OpenCC: 堆栈 (the data structure)
    "全域": "全局",
    "依循": "遵循",
    "作業本身的資料": "作业本身的材料",  # the homework's handouts, not its data
    "每個批次 16 段": "每批 16 段", "不同的批次（": "不同的分批（", "不同的批次順序": "不同的批次顺序",
    "選用套件": "可选包",
    "數學式": "数学公式",
    "用猜的": "靠猜",
    "參考資料": "参考资料",  # here 资料 (documents) is right
    "資料集": "数据集",
    "訓練資料": "训练数据",
    "測試資料": "测试数据",
    "資料": "数据",
    # OpenCC reads 線上 as "online" (在线) even inside a line: 對角線上 would become 对角在线.
    "對角線上": "对角线上", "虛線上": "虚线上", "直線上": "直线上", "曲線上": "曲线上", "點線上": "点线上",
    "的線上升": "的线上升",
    "建立在": "建立在",  # OpenCC: 创建在 (built on)
    # A graph's links are 连接 (OpenCC: 链接, a web link); the page's own links stay 链接.
    "連結": "连接", "章節間連結": "章节间链接", "顯示為連結": "显示为链接", "超連結": "超链接",
    # 平行 is geometry (平行直線); parallel computation is 并行 on the mainland.
    "平行計算": "并行计算", "平行執行": "并行执行", "平行進行": "并行进行", "平行運作": "并行运行",
    "平行步數": "并行步数", "平行形式": "并行形式", "平行處理": "并行处理",
    "平行前綴掃描": "并行前缀扫描", "平行做法": "并行做法", "平行輪數": "并行轮数", "與它平行執行": "与它并行执行",
    "沿著鍵串流": "沿键分块流式计算",
    # A frame of speech: 98 帧, not 98 个帧.
    "這個音框": "这一帧", "每個音框": "每帧", "一個個音框": "一帧帧", "個音框": "帧", "音框": "帧",
    # Taiwan's words for the mainland's.
    "雜訊": "噪声", "預設": "默认", "回傳": "返回", "建置": "构建", "建構": "构建", "透過": "通过", "量測": "测量",
    "實務上": "在实践中", "在實務上": "在实践中", "最小平方法": "最小二乘法", "最小平方": "最小二乘", "相依圖": "依赖图", "相依": "依赖",
    "循序": "串行", "單一個": "单个", "依序": "依次",
    "區塊": "块", "Transformer 區塊": "Transformer 模块", "這種區塊": "这种模块", "解答區塊": "解答部分",
    "分群": "聚类", "彈性": "灵活性", "語者": "说话人", "主詞": "主语", "代名詞": "代词", "語意": "语义",
    "文法": "语法", "碼表": "秒表", "碼錶": "秒表", "指令": "命令", "測試套件": "测试套件", "額外套件組": "额外依赖组", "套件": "包", "印成": "打印成", "筆電": "笔记本电脑",
    "身分": "身份", "帳號": "账号", "座標": "坐标", "分頁": "标签页", "交叉參照": "交叉引用", "印出": "打印",
    "離線": "离线",  # OpenCC: 脱机
    "成長": "增长", "份量": "分量", "灰階": "灰度",
    # 行 as a line (of code, of output), not a column; 真實行 is not 實行 (to implement) but the real columns.
    "十幾行": "十几行", "行得通": "行得通", "行不行得通": "行不行得通", "（下面最後一行）": "（下面最后一行）", "最後一行在": "最后一行在",
    "真實行": "真实列",
    "訊息": "信息",  # OpenCC: 消息 (news)
    "往回傳": "反向传递",  # not 往 + 返回
    "計算機": "计算器",  # a pocket calculator (OpenCC: 计算机, a computer)
    # 建立 for a relation or a baseline stays; building a model's form is 构建 (OpenCC: 创建).
    "以自注意力建立": "以自注意力建立", "建立一個比較基準": "建立一个比较基准", "建立 N": "构建 N",
    "要建立的": "要构建的", "章建立的": "章构建的",
    # A processor's cores are 核心 (OpenCC: 内核, a kernel); the fused kernels stay 内核.
    "爭用核心": "争用核心", "與核心數": "与核心数", "處理器、核心": "处理器、核心", "只鎖定核心": "只锁定内核",
    "行程": "进程",  # an operating system's process (not 列程)
    "建出": "构建", "印在": "打印在", "印為": "打印为", "水準": "水平", "紀錄": "记录", "產生器": "生成器",
    "產生出來的": "生成的", "勝過用猜的": "胜过随机猜测", "就像用猜的一樣": "就像随机猜测一样", "都用猜的": "都随机猜测的", "有多常": "以多大比例",
    "說話者": "说话人", "在電腦上": "在计算机上", "逐位元": "逐位", "複製": "复制", "函式庫": "库", "平手": "平局",
    "條狀散布圖": "条带图", "自注意力區塊": "自注意力模块", "這樣儲存它們": "这样存储它们",
    "文字": "文本", "以文字說明": "以文字说明",  # text as data is 文本; prose explanation stays 文字
    "融合核心": "融合内核", "橘色": "橙色", "面板": "子图", "散布圖": "散点图", "長條圖": "条形图",
    # A frame's hop is 帧移 in mainland speech processing; to produce a signal is 生成.
    "每次位移 10 ms": "帧移 10 ms", "每次位移 160 個樣本": "帧移为 160 个样本", "自己產生一個": "自己生成一个",
    # Words the reviews found Taiwanese, or broken by a shorter entry above (碼表 inside 編碼表示, 數位 inside 數位置).
    "編碼表示": "编码表示", "開始數位置": "开始数位置", "梅爾倒頻譜係數": "梅尔频率倒谱系数", "倒頻譜": "倒谱",
    "餘弦轉換": "余弦变换", "來摘要": "来概括", "被摘要成": "被概括成", "群集": "簇", "加總成": "相加得到", "加總": "求和",
    "壓縮檔": "压缩包", "略過": "跳过", "丟出": "抛出", "最大值取得的": "最大值算出的", "取得": "获取",
    "核心（kernel）": "内核（kernel）", "直覺做法": "直观做法", "但書": "补充说明",
    "實務步驟": "实际操作步骤", "實務": "实践", "電腦存放正在處理之陣列": "计算机存放正在处理的数组",
    "電腦": "计算机", "第幾行": "第几行", "資料夾": "文件夹", "拷貝": "复制",
    # Round-2 review, reference pages and chapters 1-2. 行 as lines of code, 下列 as "listed below".
    "短短幾行": "短短几行", "寫有下列步驟的": "写有以下步骤的", "圖與圖說": "图与图注",
    # 依循 / 依 read as Taiwan's "follow" and "by".
    "本書依循它的": "本书沿用它的", "本書依循的情況": "本书讨论的情况", "都依循第一種情況": "都采用第一种情况",
    "本書依循 N": "本书讨论 N", "依主題分用": "按主题分配", "條目依英文術語": "条目按英文术语",
    "每個值依其權重按比例貢獻": "每个值按其权重成比例地贡献", "依照輸出的形式把任務分類": "按输出的形式对任务分类",
    "採嚴格模式": "采用严格模式", "示範詞彙表": "示例词汇表", "分成幾群的": "分成几簇的",
    "出現了區塊": "出现了块状结构", "個亮的區塊": "个亮块", "儲存上的問題": "存储层面的问题",
    "再將結果對應成一個數字": "再将结果映射为一个数", "視窗對應到": "窗口映射到", "沿著連結做的": "沿着边做的",
    "用來印出中文術語的": "用来显示中文术语的", "離線產生 PDF": "离线生成 PDF", "取代 `ADDRESS`": "替换 `ADDRESS`",
    "複製（clone）": "克隆（clone）", "印出一則訊息": "输出一条提示信息", "套件本身 `attn` ": "`attn` 包本身",
    "（練習與解答區塊）": "（练习与解答框）", "單一層就有": "仅一层就有", "批次版本的": "批处理版本的",
    "切成一個個音框": "切分成若干帧",
    # Round-2 review, chapters 3-7. A layout is 布局 (OpenCC's 配置 is a configuration); storing is 存储.
    "框架的配置": "框架的布局", "以一種配置儲存的權重被用另一種配置讀取時": "按一种布局存储的权重被按另一种布局读取时",
    "使用本章的配置": "使用本章的输入布局", "以列儲存的": "按行存储的", "分開保存三個矩陣": "分别存储三个矩阵",
    "儲存就需要": "存储就需要",
    # plain (dot product) is 普通; 個別 as 分别 / 单独.
    "單純的內積": "普通的内积", "單純內積": "普通内积", "單純的自注意力": "普通的自注意力", "和單純把": "和仅仅把",
    "以相同的權重*個別*轉換每個位置": "以相同的权重*分别*变换每个位置", "同時又能被個別處理": "同时又能被单独处理",
    "FC 層則個別處理每個位置": "FC 层则逐个位置单独处理",
    "經驗談": "轶事", "走遍所有的鍵": "遍历所有的键",
    "隨機、單位變異數的查詢對上 $N = 8$ 個鍵": "随机的单位方差查询与 $N = 8$ 个键计算分数",
    "分數的散布程度": "分数的离散程度", "略為上升": "略有上升",
    "的鍵相符": "的键匹配", "相符時的分數": "匹配时的分数", "相符的鍵": "匹配的键", "打分數": "打分",
    # Counting from 0 or 1.
    "從 0 起算": "从 0 开始计数", "從 1 起算": "从 1 开始编号", "內文中": "正文中",
    # A frame is 帧, not 个.
    "的視窗，每 10 ms 一個": "的窗口，每 10 ms 一帧", "每秒 100 個": "每秒 100 帧", "每秒 100 個向量": "每秒 100 个向量",
    "每秒 100 個音框": "每秒 100 帧",
    "乘上": "乘以",
    "托普利茲": "托普利茨", "梅爾頻譜音框": "梅尔频谱帧", "低解析度": "低分辨率", "解析度": "分辨率",
    # Round-2 review, chapters 8-11. To report is 报告, a reward 回报 (OpenCC's own).
    "並回報": "并报告", "回報的誤差": "报告的误差", "呈現的是它的回報": "展示的是它带来的回报",
    "最多相隔 11 個）": "最多相隔 11 帧）", "靜音占其餘 $N - 4$ 個": "静音占其余 $N - 4$ 帧", "任何 3 個連續的音框": "任何连续 3 帧",
    "分散程度": "离散程度", "依序讀取記憶體": "按顺序连续读取内存", "留在晶片上的快速記憶體中": "留在片上高速存储器中",
    "單一執行緒": "单线程", "單一學習率訓練": "统一学习率的训练", "深色的 3 × 3 區塊外都是白色；該區塊": "深色的 3 × 3 方块外都是白色；该方块",
    "訓練歷程": "训练历史（history）", "以親手寫的程式碼實作": "用手写代码实现",
    # Round-3 review, chapters 8-11. Measured values are 测得的; 依 as "by" is 按; 親手 as 手写 / 手工.
    "量到的": "测得的", "量得的": "测得的",
    "依該頭": "按该头", "只依相對位置": "只按相对位置", "依所用的技巧將這些": "按所用的技巧对这些",
    "依它們所用的技巧": "按它们所用的技巧", "依打亂的順序把所有批次走過一遍": "按打乱后的顺序把所有批量遍历一遍",
    "依與線索的距離": "按与线索的距离", "依其線索的距離": "按其线索的距离", "依輸出的形式為任務分類": "按输出的形式对任务分类",
    "先依本章訓練時的大小": "先按本章训练时的规模", "依語者可能的": "按说话人可能采用的",
    "用課程的 softmax 親手寫出來，是這樣的": "用课程中的 softmax 手写实现，如下", "親手分塊時": "手工分块时",
    "親手寫出的分塊注意力": "手写的分块注意力",
    # Round-3 review. 套用 (apply) by context; 套用公式 stays.
    "套用 tanh": "经过 tanh", "套用連鎖律": "应用链式法则", "對每個向量單獨套用的全連接層": "单独作用于每个向量的全连接层",
    "拆法套用在": "拆法应用于", "把它套用到": "把它应用到", "在套用它學到的": "在应用它学到的", "再套用 $W^O$": "再应用 $W^O$",
    "遞推式套用在": "递推式应用于", "分別套用在每個位置上": "分别作用于每个位置上", "套用 FC 網路": "应用 FC 网络",
    "在每個位置上套用": "在每个位置上应用", "上套用同一個": "上应用同一个",
    # 位在 (to be located) is 位于.
    "位在哪裡": "位于何处", "位在": "位于",
    "單純的序列所不帶有的資訊": "普通序列本身不包含的信息",
    # An equation, mathematics: 公式.
    "寫成方程式": "写成公式", "數學式和課程一樣": "数学公式中和课程一样", "呈現各章的數學式": "渲染各章的数学公式",
    "前向的方程式": "前向的公式",
    "再依目錄的順序": "再按目录顺序",
}
# zh_CN messages written for the mainland reader rather than derived: {(catalog, msgid): zh_CN msgstr}.
# tests/test_editions.py checks that each msgid still exists (an override of a changed message is stale).
ZH_CN_OVERRIDES = {
    ("glossary.po", "The examples the weights are learned from. On the mainland 资料 means documents, so data is 数据 "
                    "there."):
        "用来学习权重的样本。台湾地区把 data 称为“资料”；本书写作“数据”（在中国大陆，“资料”多指文献、材料）。",
    ("glossary.po", "A vector written vertically, the lecture's convention. Careful: Taiwan calls a column 行 and a row "
                    "列, the mainland the other way round."):
        "直向书写的向量，也就是课程采用的惯例。注意：中国大陆把 row 称为“行”、column 称为“列”，台湾地区正好相反。",
    # The derivation would swap the note's 列 and 行 and name each side's word wrongly.
    ("chapters/04_matrix_form.po",
     "PyTorch and most papers (the Transformer paper included) store each vector as a **row** (a row vector, 列向量 / "
     "行向量: Taiwan calls a row 列, the mainland 行). The sequence becomes $X = I^T$, of shape $(N, d)$, and the "
     "weights multiply from the right:"):
        "PyTorch 和多数论文（包括 Transformer 的论文）把每个向量存成一**行**（也就是行向量，row vector；台湾地区把 row "
        "称为“列”，中国大陆称为“行”，正好相反）。序列变成形状为 $(N, d)$ 的 $X = I^T$，权重则从右边相乘：",
    ("ui.po", "Link to this heading"): "链接到此标题",  # derived, 連結 would read as a graph's 连接
    ("ui.po", "Link to this image"): "链接到此图片",
    ("ui.po", "Skip to main content"): "跳转到主要内容",  # derived: 跳至主要内容
    ("ui.po", "Back to top"): "返回顶部",  # derived: 回到页首
}
# The book's title in each edition (the English one is _config.yml's). "Column" is 行 in Taiwan, 列 on the mainland.
TITLES = {"zh_TW": "自注意力機制，一行一行算"}
SEARCH_TEXT = {"zh_TW": "搜尋本書……"}
# Words of the page frame that come from configuration, not from a page: the footer's author line, the toggle of a
# folded code cell (myst-nb's prompts) and the hint of a dropdown (sphinx-togglebutton's). zh_CN derives from zh_TW
# unless it is given here.
SETTINGS = {
    "zh_TW": {"author": "本書作者群", "nb_code_prompt_show": "顯示程式碼", "nb_code_prompt_hide": "隱藏程式碼",
              "togglebutton_hint": "點擊顯示", "togglebutton_hint_hide": "點擊隱藏"},
    "zh_CN": {"author": "本书作者"},
}
_SWAP = str.maketrans({"列": "行", "行": "列"})


def glossary_pairs(path=ROOT / "glossary.md"):
    """The glossary's (Traditional, Simplified) term pairs, from its lines ``... · 繁 (简)``."""
    pairs = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.search(r" · ([^()]+?)(?: \(([^()]+)\))?$", line)
        if m and re.search(r"[\u4e00-\u9fff]", m.group(1)):
            tw, cn = m.group(1).strip(), (m.group(2) or m.group(1)).strip()
            pairs[tw] = cn
    return pairs


def _protect(text, table, start=0, mark="\ue000\ue001"):
    """Replace each key of ``table`` (longest first) by a private-use placeholder; return text and the values.

    Placeholders are numbered from ``start``, so that the values of several calls can be restored together;
    ``mark`` holds the two characters around the number (one pair per kind of placeholder).
    """
    saved = []
    for word in sorted(table, key=len, reverse=True):
        if word in text:
            text = text.replace(word, f"{mark[0]}{start + len(saved)}{mark[1]}")
            saved.append(table[word])
    return text, saved


def _restore(text, saved, mark="\ue000\ue001"):
    return re.sub(f"{mark[0]}(\\d+){mark[1]}", lambda m: saved[int(m.group(1))], text)


def swap_rows_and_columns(text):
    """Taiwan's 列 (row) and 行 (column) as the mainland writes them, leaving 序列, 執行 ... alone."""
    text, kept = _protect(text, {w: w for w in NOT_ROW_OR_COLUMN}, mark="\ue002\ue003")
    return _restore(text.translate(_SWAP), kept, mark="\ue002\ue003")


def to_simplified(text, converter=None, pairs=None):
    """zh_TW text -> zh_CN text (see the module docstring for the steps)."""
    if converter is None:
        import opencc

        converter = opencc.OpenCC("tw2sp")
    if pairs is None:
        pairs = glossary_pairs()
    text, terms = _protect(text, TERM_TABLE)  # first, so that 程式行 is not read as a row
    text = swap_rows_and_columns(text)
    # A glossary pair such as 列向量 (行向量) reads, after the swap, as the mainland form already.
    text, glossary = _protect(text, {swap_rows_and_columns(tw): cn for tw, cn in pairs.items()}, start=len(terms))
    return mainland_quotes(_restore(converter.convert(text), terms + glossary))


_CODE_OR_MATHS = re.compile(r"(`+)[^`]*?\1|\$\$.*?\$\$|\$[^$]*\$", re.S)
_QUOTES = str.maketrans({"「": "\u201c", "」": "\u201d", "『": "\u2018", "』": "\u2019"})


def mainland_quotes(text):
    """Taiwan's corner quotes 「」『』 as the mainland's “” ‘’, outside inline code and maths."""
    parts, last = [], 0
    for m in _CODE_OR_MATHS.finditer(text):
        parts += [text[last:m.start()].translate(_QUOTES), m.group(0)]
        last = m.end()
    return "".join(parts + [text[last:].translate(_QUOTES)])


def derive(lang_from="zh_TW", lang_to="zh_CN"):
    """Every catalog of ``lang_from`` converted; returns {relative path: new file text}."""
    from babel.messages.pofile import read_po, write_po
    import io
    import opencc

    converter, pairs = opencc.OpenCC("tw2sp"), glossary_pairs()
    out = {}
    for po in sorted((LOCALES / lang_from / "LC_MESSAGES").rglob("*.po")):
        with po.open("rb") as f:
            catalog = read_po(f, locale=lang_from)
        catalog.locale = lang_to
        rel = po.relative_to(LOCALES / lang_from / "LC_MESSAGES").as_posix()
        for message in catalog:
            if message.id and (rel, message.id) in ZH_CN_OVERRIDES:
                message.string = ZH_CN_OVERRIDES[rel, message.id]
            elif message.id and message.string:
                message.string = to_simplified(message.string, converter, pairs)
        catalog.obsolete.clear()  # zh_TW's retired translations (#~) would stay Traditional; zh_CN needs none
        buffer = io.BytesIO()
        write_po(buffer, catalog, width=0, omit_header=False, sort_output=False, include_previous=False)
        out[po.relative_to(LOCALES / lang_from / "LC_MESSAGES")] = buffer.getvalue().decode("utf-8")
    return out


def sphinx_conf():
    """Write conf.py from _config.yml (Jupyter Book's own translation) when it is missing or older."""
    import subprocess

    conf = ROOT / "conf.py"
    sources = [ROOT / "_config.yml", ROOT / "_toc.yml"]
    if not conf.exists() or conf.stat().st_mtime < max(p.stat().st_mtime for p in sources):
        subprocess.run([str(Path(sys.executable).parent / "jupyter-book"), "config", "sphinx", str(ROOT)],
                       check=True, stdout=subprocess.DEVNULL)
    return conf


def build(lang):
    """Build edition ``lang`` into _build/html/<lang>, warnings as errors; returns sphinx-build's exit code."""
    import logging

    import jieba
    from sphinx.cmd.build import build_main

    jieba.setLogLevel(logging.WARNING)  # Sphinx's Chinese search splitter; its start-up chatter is not news
    sphinx_conf()
    sys.path.insert(0, str(ROOT / "tools"))  # where _config.yml's local_extensions live (conf.py omits it)
    title = TITLES.get(lang) or to_simplified(TITLES["zh_TW"])
    search = SEARCH_TEXT.get(lang) or to_simplified(SEARCH_TEXT["zh_TW"])
    settings = {key: SETTINGS.get(lang, {}).get(key) or to_simplified(value) for key, value in SETTINGS["zh_TW"].items()}
    # smartquotes off: it writes the prime of N' and A' as a closing quote, which a Chinese font draws as 』 (zh_TW)
    # or ’; Chinese prose here uses full-width quotes 「」 and “” typed as such, so nothing is lost.
    options = ["-D", "smartquotes=0", *[a for key, value in settings.items() for a in ("-D", f"{key}={value}")]]
    # A new or removed entry of references.bib renumbers the citation anchors every citing page links to, but Sphinx
    # rewrites only the pages whose sources changed: then the edition is built afresh (-E).
    bib, built = ROOT / "references.bib", ROOT / "_build" / "doctrees" / f"references.bib.{lang}.built"
    fresh = ["-E"] if not built.exists() or built.read_bytes() != bib.read_bytes() else []
    status = build_main(["-b", "html", "-W", "-n", "--keep-going", "-q", *fresh, "-D", f"language={lang}", *options,
                         "-D", f"html_title={title}", "-D", f"project={title}",
                         "-D", f"html_theme_options.search_bar_text={search}",
                         "-d", str(ROOT / "_build" / "doctrees" / lang),
                         str(ROOT), str(ROOT / "_build" / "html" / lang)])
    if status == 0:
        built.parent.mkdir(parents=True, exist_ok=True)
        built.write_bytes(bib.read_bytes())
    return status


def normalise_catalogs(folder, locales=LOCALES, lang="zh_TW"):
    """Make the catalogs in ``folder`` (templates ``.pot`` or catalogs ``.po``) independent of where and when the
    messages were extracted; returns the files changed.

    Sphinx writes each location relative to its output folder, so the ``#:`` comments' depth follows the build path,
    and it stamps ``POT-Creation-Date`` with the time of extraction; ``sphinx-intl update`` copies both into every
    catalog it rewrites, so a one-word change would rewrite every location and the header. Here each location becomes
    the source's path from the project root behind ``../../../`` (from ``locales/<lang>/LC_MESSAGES/`` up to the
    root), and a template's creation date stays the one the ``lang`` catalog of its page already has. ``make
    catalogs`` runs it (``python tools/editions.py normalise-catalogs FOLDER``) on the fresh templates before
    ``sphinx-intl update`` and on the updated catalogs after it.
    """
    folder, changed = Path(folder), []
    date = re.compile(r'^"POT-Creation-Date: [^"]*"$', re.M)
    for path in sorted([*folder.rglob("*.pot"), *folder.rglob("*.po")]):
        text = path.read_text(encoding="utf-8")
        new = re.sub(r"^#: .*$", lambda line: re.sub(r"(?<=[: ])(?:\.\./)+", "../../../", line.group(0)), text,
                     flags=re.M)
        po = locales / lang / "LC_MESSAGES" / path.relative_to(folder).with_suffix(".po")
        kept = path.suffix == ".pot" and po.exists() and date.search(po.read_text(encoding="utf-8"))
        if kept:
            new = date.sub(lambda _: kept.group(0), new, count=1)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


def main(argv):
    if len(argv) == 2 and argv[0] == "normalise-catalogs":
        normalise_catalogs(argv[1])
        return 0
    if len(argv) == 2 and argv[0] == "build" and argv[1] in TRANSLATIONS:
        return build(argv[1])
    if argv == ["sphinx-conf"]:
        sphinx_conf()
        return 0
    if len(argv) != 1 or argv[0] not in ("derive", "check"):
        print(__doc__)
        return 2
    target = LOCALES / "zh_CN" / "LC_MESSAGES"
    stale = []
    for rel, text in derive().items():
        path = target / rel
        if argv[0] == "derive":
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        elif not path.exists() or path.read_text(encoding="utf-8") != text:
            stale.append(str(rel))
    if stale:
        print("zh_CN differs from what zh_TW derives: run `python tools/editions.py derive`:", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
