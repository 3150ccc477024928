// Sets the cookie that its own <script> element carries in data-cookie (lnlab.ui.claims writes
// the element). A file rather than an inline script, so that a content security policy without
// 'unsafe-inline' (HAProxy's, lnlab.serving.haproxy) lets it run.
(() => {
  const cookie = document.currentScript && document.currentScript.dataset.cookie;
  if (cookie) {
    document.cookie = cookie + (location.protocol === "https:" ? "; Secure" : "");
  }
})();
