// firstframe's probe: installed with Page.addScriptToEvaluateOnNewDocument, it runs in every new
// document before the page's scripts and the page agent. In every animation-frame callback (the
// start of a rendering update, before its style, layout and paint) it records the time, whether
// <body> exists, and the state of the page's first <h1>: 0 not in the document, 1 in view
// without the remixlet's effect, 2 with the effect, 3 without it but out of view (the viewport
// does not show it). MODE is "css" (the effect: the remixlet's red outline) or "hidden" (the
// effect: the <h1> is not visible). It also keeps the Paint Timing entries. It changes nothing
// in the page: it only reads, and keeps its record on a non-enumerable window property that
// firstframe reads after the load.
(() => {
  const MODE = '%MODE%';
  const query = Document.prototype.querySelector;
  const computed = window.getComputedStyle;
  const raf = window.requestAnimationFrame;
  const now = performance.now.bind(performance);
  const rec = { frames: [], paints: [], dcl: 0, responseStart: 0 };
  Object.defineProperty(window, '__firstframe', { value: rec });
  const state = () => {
    const h1 = query.call(document, 'h1');
    if (!h1 || !h1.isConnected) return 0;
    if (MODE === 'css') {
      const cs = computed(h1);
      if (cs.outlineStyle === 'solid' && cs.outlineColor === 'rgb(255, 0, 0)' && cs.outlineWidth === '3px') return 2;
    } else if (!h1.checkVisibility({ visibilityProperty: true, opacityProperty: true })) {
      return 2;
    }
    const r = h1.getBoundingClientRect();
    return r.bottom <= 0 || r.top >= window.innerHeight ? 3 : 1;
  };
  const sample = () => {
    rec.frames.push([now(), document.body ? 1 : 0, state()]);
    if (rec.frames.length < 2000) raf(sample);
  };
  raf(sample);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      rec.paints.push({ name: e.name, startTime: e.startTime, paintTime: typeof e.paintTime === 'number' ? e.paintTime : -1 });
    }
  }).observe({ type: 'paint', buffered: true });
  document.addEventListener('DOMContentLoaded', () => {
    const n = performance.getEntriesByType('navigation')[0];
    rec.dcl = n ? n.domContentLoadedEventStart : now();
    rec.responseStart = n ? n.responseStart : 0;
  });
})();
