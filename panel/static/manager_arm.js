/*
 * remixproxy manager: the arming of its buttons, the manager's only script
 * (https://remix.proxy/manager/arm.js, under the manager's "script-src 'self'").
 *
 * Any page can open or navigate a window to a manager page, and a page that asks for a double
 * click can make its second click land on a manager button: a popup that closes on the first
 * click with the manager loaded behind it, or the manager loaded under the pointer
 * (double-click-jacking). So, as in the confirmation window (confirm.js), a button takes a click
 * only once this window has had the focus for ARM_MS without a break and, for a pointer click,
 * after the pointer moved over the page since then; a keyboard activation (detail 0) needs the
 * focus time alone. The page shows its state in <html data-armed>. Without this script
 * the buttons work as before: it only ever holds a click back.
 */
(function () {
  'use strict';

  var ARM_MS = 800;
  var focusedAt = 0; // since when the window has had the focus without a break (0: not focused)
  var moved = false; // the pointer moved over the page after the focus time

  function now() {
    return performance.now();
  }

  function focusedLongEnough() {
    return focusedAt > 0 && now() - focusedAt >= ARM_MS;
  }

  // data-armed: "true" when a click counts, "move" when the pointer has yet to move, "false".
  function update() {
    document.documentElement.setAttribute('data-armed', !focusedLongEnough() ? 'false' : moved ? 'true' : 'move');
  }

  function setFocus(has) {
    if (has && focusedAt === 0) {
      focusedAt = now();
      setTimeout(update, ARM_MS + 10);
    } else if (!has) {
      focusedAt = 0;
      moved = false;
    }
    update();
  }

  var note = null;
  function tell(text) {
    if (note === null) {
      note = document.createElement('p');
      note.className = 'banner warn';
      note.setAttribute('role', 'status');
      var main = document.querySelector('main') || document.body;
      main.insertBefore(note, main.firstChild);
    }
    note.textContent = text;
  }

  window.addEventListener('focus', function () { setFocus(true); });
  window.addEventListener('blur', function () { setFocus(false); });
  document.addEventListener('visibilitychange', function () {
    setFocus(document.visibilityState === 'visible' && document.hasFocus());
  });
  document.addEventListener('pointermove', function (ev) {
    if (ev.isTrusted === true && focusedLongEnough() && !moved) {
      moved = true;
      update();
    }
  }, true);
  document.addEventListener('click', function (ev) {
    if (ev.isTrusted !== true) {
      return;
    }
    var b = ev.target && ev.target.closest ? ev.target.closest('button, input[type=submit], input[type=image]') : null;
    if (b === null || !b.form) {
      return;
    }
    if (focusedLongEnough() && (ev.detail === 0 || moved)) {
      return;
    }
    ev.preventDefault();
    ev.stopImmediatePropagation();
    tell(focusedLongEnough() ? 'Move the pointer onto the button, then click.' : 'This page has just been shown: click again in a moment.');
  }, true);

  setFocus(document.visibilityState === 'visible' && document.hasFocus());
})();
