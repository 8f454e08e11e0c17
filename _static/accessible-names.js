// Accessible names that hold the text a control shows (WCAG 2.1, 2.5.3 "Label in Name"), in the page's language.
//
// - The search field button shows its placeholder text and Ctrl+K but is labelled "Search": the label goes, so the
//   name is the text shown. (A folded code cell's toggle is built without its mismatching label:
//   tools/accessible_names.py.)
// - The colour-mode button shows one icon, whose title names the current mode, and is labelled "Color mode" (in
//   English in every edition): it is named "<colour mode>: <current mode>" in the page's language, and renamed
//   whenever the mode changes. The theme's own translations are kept where it has them (its Chinese catalog has
//   "Light" and "Dark"); the words it lacks come from the table below, keyed on <html lang>.
// - The printed table of contents of a page (sphinx-book-theme's #jb-print-toc) is a <nav> labelled "Page", in
//   English in every edition: it is labelled in the page's language.
(() => {
  "use strict";

  const WORDS = {
    "zh-TW": { colorMode: "顏色模式", light: "亮色", dark: "暗色", auto: "跟隨系統設定", pageContents: "本頁目錄" },
    "zh-CN": { colorMode: "颜色模式", light: "亮色", dark: "暗色", auto: "跟随系统设置", pageContents: "本页目录" },
  };
  const lang = document.documentElement.lang || "en";
  const words = WORDS[lang] || WORDS[lang.split("-")[0]] || null;

  function nameFromContent(selector) {
    for (const el of document.querySelectorAll(selector)) {
      if (el.textContent.trim()) {
        el.removeAttribute("aria-label");
      }
    }
  }

  // An icon's title: its title attribute, or, once Font Awesome has swapped the <i> for an <svg>, the <title> inside.
  function iconTitle(icon) {
    const inner = icon.querySelector("title");
    return inner ? inner.textContent : icon.getAttribute("title") || "";
  }

  function setIconTitle(icon, text) {
    const inner = icon.querySelector("title");
    if (inner && inner.textContent !== text) {
      inner.textContent = text;
    } else if (!inner && icon.getAttribute("title") !== text) {
      icon.setAttribute("title", text);
    }
  }

  function nameColorModeButtons() {
    const mode = document.documentElement.dataset.mode || "auto";
    for (const button of document.querySelectorAll(".theme-switch-button")) {
      const label = words ? words.colorMode : button.getAttribute("data-bs-title") || "Color mode";
      const icons = Array.from(button.querySelectorAll("[data-mode]"));
      for (const icon of icons) {
        if (words && words[icon.dataset.mode]) {
          setIconTitle(icon, words[icon.dataset.mode]);
        }
      }
      // The icon the stylesheet shows is the one of <html data-mode>; failing that, whichever is displayed.
      const shownIcon = icons.find((icon) => icon.dataset.mode === mode)
        || icons.find((icon) => getComputedStyle(icon).display !== "none");
      const shown = shownIcon ? iconTitle(shownIcon) : "";
      const name = shown ? `${label}: ${shown}` : label;
      if (button.getAttribute("aria-label") !== name) {
        button.setAttribute("aria-label", name);
      }
    }
  }

  function start() {
    nameFromContent(".search-button-field[aria-label]");
    nameColorModeButtons();
    if (words) {
      for (const nav of document.querySelectorAll("#jb-print-toc nav[aria-label]")) {
        nav.setAttribute("aria-label", words.pageContents);
      }
    }
    // The theme sets <html data-mode> when the reader switches; Font Awesome replaces the icons after loading.
    new MutationObserver(nameColorModeButtons).observe(document.documentElement,
      { attributes: true, attributeFilter: ["data-mode"] });
    for (const button of document.querySelectorAll(".theme-switch-button")) {
      new MutationObserver(nameColorModeButtons).observe(button, { childList: true, subtree: true });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
