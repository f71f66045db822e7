// Records the page's size once MathJax has typeset it, for the render check (tests/test_docs_render.py):
// data-pemath-height (px) and data-pemath-overflow (px the page is wider than the window) on <html>.
(function () {
  function measure() {
    var el = document.documentElement;
    el.setAttribute("data-pemath-height", String(el.scrollHeight));
    el.setAttribute("data-pemath-overflow", String(Math.max(0, el.scrollWidth - el.clientWidth)));
  }
  window.addEventListener("load", function () {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(measure, measure);
    } else {
      measure();
    }
  });
})();
