// The Class page's "Copy the teacher link" (lnlab.ui.classroom.teacher_link_copy): copies the
// link its button carries, never shows it, and says in the status line what happened. A file
// the app serves (lnlab.ui.server.shell), not an inline script, for the content security policy.
(() => {
  const button = document.getElementById('lnlab-copy-teacher');
  const status = document.getElementById('lnlab-copy-status');
  if (!button || button.dataset.ready) return;
  button.dataset.ready = '1';
  button.addEventListener('click', async () => {
    const link = button.dataset.link;
    let copied = false;
    try { await navigator.clipboard.writeText(link); copied = true; } catch (e) {
      const box = document.createElement('textarea');
      box.value = link; box.setAttribute('readonly', '');
      box.style.position = 'fixed'; box.style.opacity = '0';
      document.body.appendChild(box); box.select();
      try { copied = document.execCommand('copy'); } catch (e2) { copied = false; }
      box.remove();
    }
    status.textContent = copied
      ? 'Copied. Open it on the other device; keep it private: it can run this class.'
      : 'This browser did not let the page copy. Open the Class page on the other device '
        + 'while signed in here, or start there and end this class.';
  });
})();
