// lnlab's assist script: put into every page's HTML by the app's server (lnlab.ui.server.shell), before
// Streamlit's own code. It reads what the app draws for it (lnlab.ui.assist) and does, for
// keyboards and screen readers, what Streamlit does not (WCAG 2.2):
// - presenter mode's CSS from the first paint when the address says present=1 (no layout
//   shift when the app's first run sends it): the class lnlab-present on <html>;
// - the page's content shown once the first run is drawn, not piece by piece as Streamlit's
//   lazily loaded widgets replace their placeholders, each taller than the placeholder
//   and as its fonts arrive (layout shifts of 0.1 to 0.2): the class lnlab-loading on <html>
//   until then (charts, whose placeholders already have the chart's height, and placeholders
//   below the first screen, which move nothing in view, are not waited for), a lesson drawn in
//   the page included;
// - one polite live region (role status) that speaks a slot's text when it changes (4.1.3);
// - the focus kept where the user is after an action that redraws or removes the focused
//   control, or put where the action asked (lnlab.ui.assist.land) (2.4.3);
// - every table that scrolls sideways made a tab stop, so a keyboard can scroll it, with its
//   arrow keys kept from the lesson's Previous and Next shortcuts (2.1.1).
// - formulas drawn as MathML (lnlab.teach.mathml): st.html's sanitizer keeps HTML only, so a
//   formula arrives as a span with its MathML in data-mathml, put in place here as the span
//   arrives, before the page paints it.
// It changes nothing else on the page and asks no server for anything.
(() => {
  "use strict";
  const root = document.documentElement;
  const FOCUSABLE =
    'button, a[href], input, textarea, select, summary, [tabindex]:not([tabindex="-1"])';

  function presenting() {
    const value = new URLSearchParams(location.search).get("present");
    return value === "1" || value === "true";
  }
  root.classList.toggle("lnlab-present", presenting());

  // ---------------------------------------------------------------- the first paint
  const SHOW_BY_MS = 30000; // whatever happens, the page shows this long after it started
  const started = performance.now();
  root.classList.add("lnlab-loading");

  function drawn() {
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app) return false;
    const connection = app.getAttribute("data-test-connection-state");
    const script = app.getAttribute("data-test-script-state");
    if (connection === "DISCONNECTED_FOREVER" || script === "compilationError") return true;
    if (connection !== "CONNECTED" || script !== "notRunning") return false;
    if (document.fonts && document.fonts.status !== "loaded") return false; // text reflows
    // a placeholder below the first screen moves nothing in view when its widget arrives
    for (const el of document.querySelectorAll('[data-testid="stSkeleton"]')) {
      if (el.closest('[class*="st-key-chart_"]')) continue;
      if (!inView.has(el)) {
        inView.set(el, null); // not known until the observer says
        placeholders.observe(el);
      }
      if (inView.get(el) !== false) return false;
    }
    // a lesson drawn in the page (lnlab.ui.live) once its code has drawn it, or once Python
    // draws its own lesson under it (the browser's was slow)
    const under = document.querySelector(".st-key-lnlab_live_fallback");
    const lessons = [...document.querySelectorAll(".st-key-lnlab_live")];
    return Boolean(under) || lessons.every((el) => el.querySelector(".lnlab-live:not([hidden])"));
  }

  // whether a placeholder is in view, as an observer says after each layout (measuring it here
  // would lay the page out again on every change while it loads)
  const inView = new WeakMap();
  const placeholders = new IntersectionObserver((entries) => {
    for (const entry of entries) inView.set(entry.target, entry.isIntersecting);
    soon();
  });

  function reveal() {
    if (!root.classList.contains("lnlab-loading")) return;
    if (drawn() || performance.now() - started > SHOW_BY_MS) {
      root.classList.remove("lnlab-loading");
      placeholders.disconnect();
    }
  }

  // ---------------------------------------------------------------- the live region
  let region = null;
  let heard = new Map(); // slot -> the text it last had
  let page = location.pathname;

  function speak(text) {
    // emptied first, then filled on the next frame: a screen reader hears a new text
    region.textContent = "";
    requestAnimationFrame(() => {
      region.textContent = text;
    });
  }

  function live(el) {
    return el.isConnected && !el.closest('[data-stale="true"]');
  }

  function listen() {
    const news = [];
    for (const el of document.querySelectorAll(".lnlab-say")) {
      if (!live(el)) continue;
      const slot = el.dataset.slot;
      const text = el.textContent.trim();
      if (heard.has(slot) && heard.get(slot) !== text && text) news.push(text);
      heard.set(slot, text);
    }
    if (news.length) speak(news.join(" "));
  }

  // ---------------------------------------------------------------- the focus
  let last = null; // {el, keys}: what had the focus, and its st-key-* containers inside out
  const done = new Set(); // focus requests carried out (their data-n)

  function keysOf(el) {
    const keys = [];
    for (let node = el; node && node !== document.body; node = node.parentElement) {
      for (const name of node.classList || []) if (name.startsWith("st-key-")) keys.push(name);
    }
    return keys;
  }

  function usable(el) {
    return live(el) && !el.disabled && el.getClientRects().length > 0;
  }

  function firstControl(box) {
    return [...box.querySelectorAll(FOCUSABLE)].find(usable) || null;
  }

  function put(el) {
    if (!el.matches(FOCUSABLE)) el.setAttribute("tabindex", "-1");
    el.focus();
    last = { el, keys: keysOf(el) };
  }

  function keyed(key) {
    return [...document.getElementsByClassName(key)].find(live) || null;
  }

  function requested() {
    for (const el of document.querySelectorAll(".lnlab-land")) {
      const n = el.dataset.n;
      if (done.has(n) || !live(el)) continue;
      const box = keyed(`st-key-${el.dataset.key}`);
      if (!box) continue; // not drawn yet: the next change looks again
      done.add(n);
      put(el.dataset.itself === "1" ? box : firstControl(box) || box);
    }
  }

  function lost() {
    const now = document.activeElement;
    if (now && now !== document.body && !now.disabled) return false;
    return last !== null && !usable(last.el);
  }

  function keep() {
    if (!lost()) return;
    for (const key of last.keys) {
      const box = keyed(key);
      if (!box) continue;
      const control = box.matches(FOCUSABLE) ? (usable(box) ? box : null) : firstControl(box);
      if (control) return put(control);
    }
  }

  document.addEventListener(
    "focusin",
    (event) => {
      last = { el: event.target, keys: keysOf(event.target) };
    },
    true,
  );

  // ---------------------------------------------------------------- popovers
  // Streamlit draws a popover's content at the end of the page and leaves the focus on its
  // button, so Tab went on to the next control and a keyboard never reached the choices of a
  // menu (lnlab.ui.inputs.menu): the focus goes into a popover as it opens, to its chosen
  // option or its first control (Escape closes it and gives the focus back to its button).
  function opened() {
    const button = document.activeElement;
    if (!button || button.getAttribute("aria-expanded") !== "true") return;
    if (!button.closest('[data-testid="stPopover"]')) return;
    const body = [...document.querySelectorAll('[data-testid="stPopoverBody"]')].find(live);
    if (!body || body.dataset.lnlabEntered) return;
    const target = body.querySelector("input:checked") || firstControl(body);
    if (!target) return; // not drawn yet: the next change looks again
    body.dataset.lnlabEntered = "1";
    put(target);
  }

  // ---------------------------------------------------------------- tables
  // In a table that scrolls, the arrow keys scroll it: they do not reach the lesson's Previous
  // and Next shortcuts (the browser's own scrolling still happens).
  window.addEventListener(
    "keydown",
    (event) => {
      const arrow = event.key === "ArrowLeft" || event.key === "ArrowRight";
      if (arrow && event.target.matches?.('.lnlab-table-wrap[tabindex="0"]')) {
        event.stopImmediatePropagation();
      }
    },
    true,
  );

  // Each table and its wrap measured when its size changes, by an observer that runs after
  // layout (measuring every table on every change laid the page out again each time); not in a
  // lesson's view kept hidden for later (static/lnlab/live_lesson.mjs)
  const sized = new WeakSet();
  const sizes = new ResizeObserver((entries) => {
    for (const entry of entries) {
      const wrap = entry.target.closest(".lnlab-table-wrap");
      if (!wrap || wrap.closest(".lnlab-live-kept")) continue;
      const scrolls = wrap.scrollWidth > wrap.clientWidth + 1;
      if (scrolls && wrap.getAttribute("tabindex") !== "0") wrap.setAttribute("tabindex", "0");
      if (!scrolls && wrap.hasAttribute("tabindex")) wrap.removeAttribute("tabindex");
    }
  });

  function scrollable() {
    for (const wrap of document.querySelectorAll(".lnlab-table-wrap")) {
      for (const el of [wrap, wrap.firstElementChild]) {
        if (el && !sized.has(el)) {
          sized.add(el);
          sizes.observe(el);
        }
      }
    }
  }

  // ---------------------------------------------------------------- formulas
  // what lnlab.teach.mathml wrote (checked there), checked again: MathML in its two spans only
  const MATHML = "http://www.w3.org/1998/Math/MathML";

  function formulas() {
    for (const span of document.querySelectorAll(".lnlab-math[data-mathml]:not([data-drawn])")) {
      const drawn = document.createElement("template");
      drawn.innerHTML = span.dataset.mathml;
      for (const el of drawn.content.querySelectorAll("*")) {
        const wrapper = el.localName === "span" && el.parentNode === drawn.content;
        if (el.namespaceURI !== MATHML && !wrapper) el.remove();
        for (const a of [...el.attributes]) {
          if (/^on|href|src/i.test(a.name)) el.removeAttribute(a.name);
        }
      }
      span.replaceChildren(drawn.content);
      span.setAttribute("data-drawn", "");
    }
  }

  // ---------------------------------------------------------------- on every change
  let queued = false;

  function tick() {
    queued = false;
    root.classList.toggle("lnlab-present", presenting());
    if (location.pathname !== page) {
      page = location.pathname; // a new page: its first words are not news
      heard = new Map();
    }
    reveal();
    listen();
    requested();
    keep();
    scrollable();
    opened();
  }

  function soon() {
    if (!queued) {
      queued = true;
      requestAnimationFrame(tick);
    }
  }

  function start() {
    region = document.createElement("div");
    region.id = "lnlab-status";
    region.className = "lnlab-sr-only";
    region.setAttribute("role", "status");
    region.setAttribute("aria-live", "polite");
    region.setAttribute("aria-atomic", "true");
    document.body.appendChild(region);
    new MutationObserver(() => {
      formulas(); // at once: a formula's text is never painted
      soon();
    }).observe(document.body, {
      childList: true,
      subtree: true,
      characterData: true,
      attributes: true,
      attributeFilter: ["disabled", "data-stale", "data-test-script-state", "hidden"],
    });
    setTimeout(soon, SHOW_BY_MS + 100);
    if (document.fonts) document.fonts.addEventListener("loadingdone", soon);
    window.addEventListener("resize", soon);
    window.addEventListener("focusout", soon);
    soon();
  }

  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
