// Records what the render check (tests/test_docs_render.py) reads, once MathJax has typeset the page,
// as attributes of <html>:
//   data-pemath-height    the page's height (px)
//   data-pemath-overflow  how many px the page is wider than the window
//   data-pemath-broken    the images that did not load (space-separated sources; empty when all did)
//   data-pemath-raw-tex   how many text nodes still hold TeX delimiters \( \[ or $$, or a MathJax error
//   data-pemath-clipped   how many code blocks (<pre>) are wider than their box (a reader would have to scroll)
//   data-pemath-clipped-tables  how many of those are recorded tables of figures (div.pemath-output), which
//                               keep their lines and may scroll on a phone
(function () {
  function rawTex() {
    var count = document.querySelectorAll("mjx-merror, [data-mjx-error]").length;
    var walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, null);
    var node;
    while ((node = walker.nextNode())) {
      var parent = node.parentElement;
      if (parent && parent.closest("script, style, pre, code, textarea")) continue;
      if (/\\\(|\\\[|\$\$/.test(node.nodeValue)) count += 1;
    }
    return count;
  }
  function measure() {
    var el = document.documentElement;
    var broken = [];
    document.querySelectorAll("img").forEach(function (img) {
      if (!img.complete || img.naturalWidth === 0) broken.push(img.getAttribute("src"));
    });
    el.setAttribute("data-pemath-height", String(el.scrollHeight));
    el.setAttribute("data-pemath-overflow", String(Math.max(0, el.scrollWidth - el.clientWidth)));
    el.setAttribute("data-pemath-broken", broken.join(" "));
    el.setAttribute("data-pemath-raw-tex", String(rawTex()));
    var clipped = 0, tables = 0;
    document.querySelectorAll("pre").forEach(function (pre) {
      if (pre.scrollWidth > pre.clientWidth + 1) {
        clipped += 1;
        if (pre.closest("div.pemath-output")) tables += 1;
      }
    });
    el.setAttribute("data-pemath-clipped", String(clipped));
    el.setAttribute("data-pemath-clipped-tables", String(tables));
  }
  window.addEventListener("load", function () {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(measure, measure);
    } else {
      measure();
    }
  });
})();
