// Make the sidebar buttons a reader can see work, on phones and on desktops.
//
// Why: pydata-sphinx-theme 0.17 adds its own hidden ".primary-toggle" button to the top navbar and attaches
// the open-the-sidebar handler only to the first ".primary-toggle" in the page (document.querySelector),
// which is that hidden one. The visible buttons sphinx-book-theme 1.3 draws in the article header never get
// a handler, so on a phone the table of contents cannot be opened at all (pydata-sphinx-theme issue #2451).
// The fix: a click on any later ".primary-toggle" / ".secondary-toggle" is passed on to the first one, whose
// handlers (the themes' own) open the sidebar as a dialog on narrow screens and fold it away on wide ones.
// tests/test_browser.py::test_phone_menu_opens_the_table_of_contents checks it. Remove this file once the
// pinned themes fix the bug (the test will then still pass without it).
document.addEventListener("DOMContentLoaded", () => {
  for (const selector of [".primary-toggle", ".secondary-toggle"]) {
    const [handled, ...unhandled] = document.querySelectorAll(selector);
    for (const button of unhandled) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopPropagation();
        handled.click();
      });
    }
  }
});
