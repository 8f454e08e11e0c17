// Runs in the book's root page (tools/print_pdf.py): replaces its article by the articles of every page of the
// table of contents, in order, with a contents list; typesets the maths; reports what a printed book must not have.
// Ids get the page's key as a prefix so that they stay unique, and links between pages become links inside the
// document. Called by Playwright's page.evaluate with {pages: [{url, key, part}], contentsTitles: {lang: title}}.
async ({pages, contentsTitles}) => {
  const lang = document.documentElement.lang || "en";
  const contentsTitle = contentsTitles[lang] || contentsTitles[lang.split("-")[0]] || contentsTitles.en;
  const keyOf = {};                                   // absolute page URL (no fragment) -> its key
  for (const page of pages) { keyOf[new URL(page.url, location.href).href] = page.key; }
  const local = (url, key) => {                      // a link into the book -> a fragment of this document
    const target = new URL(url);
    const page = keyOf[target.origin + target.pathname];
    if (page === undefined) { return null; }
    const fragment = decodeURIComponent(target.hash.slice(1));
    return "#" + (fragment ? page + "--" + fragment : page);
  };
  const book = document.createElement("div");
  const contents = document.createElement("section");
  contents.className = "print-book-contents";
  contents.id = "print-book-contents";
  contents.innerHTML = "<h1></h1><ol></ol>";
  contents.querySelector("h1").textContent = contentsTitle;
  const list = contents.querySelector("ol");
  let part = null;
  const titles = [];
  for (const page of pages) {
    const response = await fetch(page.url);
    if (!response.ok) { throw new Error(page.url + ": HTTP " + response.status); }
    const html = new DOMParser().parseFromString(await response.text(), "text/html");
    const article = html.querySelector("article.bd-article");
    if (!article) { throw new Error(page.url + ": no article.bd-article"); }
    const base = new URL(page.url, location.href).href;
    for (const el of article.querySelectorAll("[id]")) { el.id = page.key + "--" + el.id; }
    for (const el of article.querySelectorAll("img[src], source[src]")) {
      el.setAttribute("src", new URL(el.getAttribute("src"), base).href);
      el.removeAttribute("loading");
    }
    for (const el of article.querySelectorAll("a[href]")) {
      const href = el.getAttribute("href");
      const absolute = new URL(href, base).href;
      const inside = local(absolute);
      if (inside) { el.setAttribute("href", inside); }
      else if (absolute.startsWith(location.origin)) { el.removeAttribute("href"); }  // the print server is gone
      else { el.setAttribute("href", absolute); }
    }
    const section = document.createElement("section");
    section.className = "print-book-page";
    section.id = page.key;
    section.append(...article.childNodes);
    book.append(section);

    const h1 = section.querySelector("h1");
    const title = h1 ? h1.textContent.replace(/[#¶]\s*$/, "").trim() : page.key;
    titles.push(title);
    if (page.part !== part && page.part) {
      const item = document.createElement("li");
      item.className = "print-book-part";
      item.textContent = page.part;
      list.append(item);
    }
    part = page.part;
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = "#" + page.key;
    if (h1) {  // the heading's own nodes, so that maths in a title is typeset there too
      const copy = h1.cloneNode(true);
      copy.querySelectorAll(".headerlink").forEach(el => el.remove());
      copy.querySelectorAll("[id]").forEach(el => el.removeAttribute("id"));
      link.append(...copy.childNodes);
    } else {
      link.textContent = title;
    }
    const number = document.createElement("span");  // the page number, filled in once the book is laid out
    number.className = "print-book-page-number";
    number.dataset.key = page.key;
    item.append(link, number);
    list.append(item);
  }
  const article = document.querySelector("article.bd-article");
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
    MathJax.typesetClear();
  }
  article.replaceChildren(contents, ...book.childNodes);
  // The theme's print-only header (the root page's title and its own table of contents) is not the book's.
  document.querySelectorAll("#jb-print-docs-body").forEach(el => el.remove());
  document.title = document.querySelector("meta[property='og:site_name']")?.content || document.title;
  if (!window.MathJax || !MathJax.typesetPromise) { throw new Error("MathJax is not loaded on the root page"); }
  await MathJax.typesetPromise([article]);
  const images = Array.from(article.querySelectorAll("img"));
  await Promise.all(images.map(img => img.complete ? null :
      new Promise(done => { img.addEventListener("load", done); img.addEventListener("error", done); })));
  await document.fonts.ready;
  const maths = Array.from(article.querySelectorAll(".math"));
  // Each heading as plain text, for the PDF's outline: typeset maths as the text MathJax gives screen readers.
  const headings = Array.from(article.querySelectorAll("h1, h2, h3, h4, h5, h6")).filter(h => h.checkVisibility())
      .map(h => {
        const copy = h.cloneNode(true);
        copy.querySelectorAll(".headerlink").forEach(el => el.remove());
        copy.querySelectorAll("mjx-container").forEach(el => {
          const spoken = el.querySelector("mjx-assistive-mml");
          el.replaceWith(spoken ? spoken.textContent : "");
        });
        return copy.textContent.replace(/\s+/g, " ").trim();
      });
  return {
    site_title: (document.querySelector(".logo__title") || {}).textContent?.trim() || "",
    titles,
    headings,
    math_total: maths.length,
    math_untypeset: maths.filter(el => !el.querySelector("mjx-container")).map(el => el.textContent.slice(0, 80)),
    math_errors: maths.filter(el => el.querySelector("mjx-merror")).map(el => el.textContent.slice(0, 80)),
    broken_images: images.filter(img => !(img.naturalWidth > 0)).map(img => img.src),
  };
}
