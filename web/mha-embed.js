// mha-embed.js: sizes the mha-lab iframes of a course page to their content; the mha-lab page,
// opened with embed=1 inside an iframe, loads the same file to report its height. Copy it beside the
// course page and load it with <script src="mha-embed.js"></script> (a file of the page's own
// origin: it runs under a strict CSP, script-src 'self'). Every <iframe data-mha-embed> whose
// page was opened with embed=1 reports its content's height as a message
// {type: 'mha-lab:height', height: CSS px}; this script sets that iframe's height to it, so no
// button is clipped and no empty band is left. A message is used only when it comes from one of
// those iframes' windows (event.source): a message from any other window, or of another shape, is
// ignored. The sender's origin is not compared, since a page opened from file:// has origin
// "null"; the source check alone ties each message to its iframe. See docs/embedding.md.
(function () {
  'use strict';
  var html = document.documentElement;
  if (html.classList.contains('embed') && window.parent !== window) {
    // Loaded by the mha-lab page itself, opened with embed=1 in an iframe: report the content's
    // height (CSS px) whenever it changes. Any origin may read it (a file:// parent's is "null").
    new ResizeObserver(function () {
      window.parent.postMessage(
        { type: 'mha-lab:height', height: Math.ceil(html.getBoundingClientRect().height) },
        '*',
      );
    }).observe(html);
    return;
  }
  var MAX_HEIGHT = 100000;
  window.addEventListener('message', function (event) {
    var data = event.data;
    if (!data || data.type !== 'mha-lab:height' || typeof data.height !== 'number') return;
    if (!(data.height >= 0 && data.height <= MAX_HEIGHT)) return;
    var frames = document.querySelectorAll('iframe[data-mha-embed]');
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow === event.source) {
        var frame = frames[i];
        var style = getComputedStyle(frame);
        // A border-box iframe (a page's "* { box-sizing: border-box }") adds its border and padding.
        var extra =
          style.boxSizing !== 'border-box'
            ? 0
            : ['borderTopWidth', 'borderBottomWidth', 'paddingTop', 'paddingBottom'].reduce(
                function (sum, k) {
                  return sum + (parseFloat(style[k]) || 0);
                },
                0,
              );
        frame.style.height = Math.ceil(data.height) + extra + 'px';
        return;
      }
    }
  });
})();
