/*
 * remixproxy confirmation window (https://remix.proxy/panel/confirm#TOKEN.CARD).
 *
 * The panel is an iframe inside the page, and a page can cover or disguise an iframe (a
 * translucent layer with pointer-events: none passes clicks through, and browsers' visibility
 * checks do not see it). So "Allow" on a card is confirmed here, in a top-level window of
 * remix.proxy that the page cannot frame, cover or script: the panel opens it with window.open
 * when the person clicks Allow. This window:
 *   - takes the panel token and the card ID from its fragment and removes them from the address;
 *   - opens wss://remix.proxy/panel/ws?t=TOKEN&role=confirm (the proxy takes "allow" only from a
 *     confirmation window's connection) and shows that one card, with the proxy's fixed texts,
 *     and, apart from them as data, a request's body or the diff of the code an activation
 *     would apply;
 *   - arms its buttons only while this window has the focus and has had it for ARM_MS since the
 *     card appeared, and then, for a mouse click, after the pointer moved over the card — so a
 *     click meant for the page cannot land here as the window opens;
 *   - sends {type:'decide', id, allow}, shows the outcome and closes itself.
 * Text only ever goes in through textContent.
 */
(function () {
  'use strict';

  var ARM_MS = 800;
  var CLOSE_AFTER_MS = 1200;
  var DIFF_CLASSES = { '+': 'diff-add', '-': 'diff-del', ' ': 'diff-ctx', '~': 'diff-gap' };

  function byId(id) {
    return document.getElementById(id);
  }
  var statusEl = byId('status');
  var card = byId('card');
  var allow = byId('allow');
  var deny = byId('deny');
  var note = byId('note');

  var parts = location.hash.replace(/^#/, '').split('.');
  var token = '';
  var cardID = '';
  try {
    token = decodeURIComponent(parts[0] || '');
    cardID = decodeURIComponent(parts.slice(1).join('.'));
  } catch (e) { /* a malformed fragment: nothing to confirm */ }
  if (history.replaceState) {
    history.replaceState(null, '', location.pathname);
  }

  var sock = null;
  var shownAt = 0;     // when the card was shown (0: not yet)
  var focusedAt = 0;   // since when the window has had the focus without a break (0: not focused)
  var moved = false;   // the pointer moved over the card after arming
  var decided = false;

  function now() {
    return performance.now();
  }

  function armed() {
    var t = now();
    return !decided && shownAt > 0 && focusedAt > 0 && t - shownAt >= ARM_MS && t - focusedAt >= ARM_MS &&
      sock !== null && sock.readyState === 1;
  }

  function update() {
    var on = armed();
    allow.disabled = !on;
    deny.disabled = !on;
    card.setAttribute('data-armed', on ? 'true' : 'false');
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

  function show(item) {
    var rows = Array.isArray(item.rows) ? item.rows : [];
    var rx = item.remixlet && typeof item.remixlet === 'object' ? item.remixlet : {};
    byId('card-title').textContent = typeof item.title === 'string' && item.title !== '' ? item.title : 'Allow this?';
    byId('card-name').textContent = typeof rx.name === 'string' ? rx.name : '';
    byId('card-remixlet-label').textContent = rx.new === true ? 'New remixlet' : 'Remixlet';
    byId('card-made').textContent = typeof rx.made === 'string' && rx.made !== '' ? ' (' + rx.made + ')' : '';
    var ul = byId('card-rows');
    ul.textContent = '';
    rows.forEach(function (r) {
      if (typeof r === 'string') {
        var li = document.createElement('li');
        li.textContent = r;
        ul.appendChild(li);
      }
    });
    // What a request card would send, shown as data (never parsed).
    var data = byId('card-data');
    data.textContent = typeof item.data === 'string' ? item.data : '';
    data.hidden = data.textContent === '';
    showDiff(Array.isArray(item.diff) ? item.diff : []);
    allow.textContent = typeof item.allow === 'string' && item.allow !== '' ? item.allow : 'Allow';
    deny.textContent = typeof item.deny === 'string' && item.deny !== '' ? item.deny : 'Not now';
    if (card.hidden) {
      card.hidden = false;
      statusEl.textContent = '';
      shownAt = now();
      setTimeout(update, ARM_MS + 10);
    }
    if (item.state !== 'pending') {
      finish(item.state === 'allowed' ? 'Allowed.' : item.state === 'denied' ? 'Not allowed.' :
        item.state === 'stale' ? 'Allowed, but not applied: another version became active first.' : 'This request is no longer open.');
    }
    update();
  }

  // showDiff shows an activation's change of code, line by line, as data: each file with its
  // counts, added lines marked "+", removed "-", unchanged context " ", and the runs of
  // unchanged lines left out, then how many changed lines the card's bound left out.
  function showDiff(diffs) {
    var box = byId('card-diff');
    box.textContent = '';
    diffs.forEach(function (d) {
      if (!d || typeof d !== 'object') {
        return;
      }
      var file = document.createElement('p');
      file.className = 'diff-file';
      file.textContent = asText(d.file) + ' (' + asCount(d.added) + ' added, ' + asCount(d.removed) + ' removed)';
      box.appendChild(file);
      var pre = document.createElement('pre');
      pre.className = 'diff-lines';
      (Array.isArray(d.lines) ? d.lines : []).forEach(function (l) {
        if (!l || typeof l !== 'object' || !DIFF_CLASSES[l.op]) {
          return;
        }
        var line = document.createElement('span');
        line.className = DIFF_CLASSES[l.op];
        line.textContent = (l.op === '~' ? '\u22ef ' + asText(l.text) : l.op + ' ' + asText(l.text));
        pre.appendChild(line);
      });
      box.appendChild(pre);
      if (asCount(d.cut) > 0) {
        var cut = document.createElement('p');
        cut.className = 'diff-cut';
        cut.textContent = asCount(d.cut) + ' changed lines are not shown here, or not in full: the remixlet\u2019s history in the manager has the whole change.';
        box.appendChild(cut);
      }
    });
    byId('card-diff-label').hidden = box.textContent === '';
    box.hidden = box.textContent === '';
  }

  function asText(v) {
    return typeof v === 'string' ? v : '';
  }

  function asCount(v) {
    return typeof v === 'number' && isFinite(v) && v >= 0 ? v : 0;
  }

  function finish(text) {
    decided = true;
    card.setAttribute('data-state', 'done');
    note.textContent = text;
    update();
    setTimeout(function () {
      window.close();
    }, CLOSE_AFTER_MS);
  }

  function decide(yes, ev) {
    if (!ev || ev.isTrusted !== true || !armed()) {
      update();
      return;
    }
    if (ev.detail !== 0 && !moved) {
      note.textContent = 'Move the pointer onto the button, then click.';
      return;
    }
    decided = true;
    update();
    note.textContent = 'Sending your decision\u2026';
    sock.send(JSON.stringify({ type: 'decide', id: cardID, allow: yes }));
  }

  allow.addEventListener('click', function (ev) { decide(true, ev); });
  deny.addEventListener('click', function (ev) { decide(false, ev); });
  card.addEventListener('pointermove', function (ev) {
    if (ev.isTrusted === true && armed()) {
      moved = true;
    }
  });
  window.addEventListener('focus', function () { setFocus(true); });
  window.addEventListener('blur', function () { setFocus(false); });
  document.addEventListener('visibilitychange', function () {
    setFocus(document.visibilityState === 'visible' && document.hasFocus());
  });

  if (token === '' || cardID === '') {
    statusEl.textContent = 'Nothing to confirm here. Open this window from the remixproxy panel.';
    return;
  }
  setFocus(document.hasFocus());
  var base = (location.protocol === 'https:' ? 'wss' : 'ws') + '://remix.proxy/panel/ws?role=confirm&t=';
  sock = new WebSocket(base + encodeURIComponent(token));
  var found = false;
  sock.addEventListener('open', update);
  sock.addEventListener('message', function (ev) {
    var m;
    try {
      m = JSON.parse(ev.data);
    } catch (e) {
      return;
    }
    if (!m || typeof m !== 'object') {
      return;
    }
    if (m.type === 'item' && m.item && m.item.id === cardID && m.item.kind === 'card') {
      found = true;
      show(m.item);
    } else if (m.type === 'state' && typeof m.url === 'string') {
      // Only the page's origin: its path and query are the page's own words (pushState), and
      // everything else in this window is the proxy's.
      var origin = '';
      try {
        origin = new URL(m.url).origin;
      } catch (e) { /* not an address: nothing to show */ }
      byId('card-page').textContent = origin !== '' && origin !== 'null' ? 'For the chat on ' + origin : '';
    } else if (m.type === 'error' && typeof m.message === 'string' && !decided) {
      note.textContent = m.message;
    }
  });
  sock.addEventListener('close', function () {
    sock = null;
    update();
    if (!decided) {
      statusEl.textContent = found ? '' : 'This request is no longer open.';
      if (found) {
        note.textContent = 'The page was closed, so this request is no longer open.';
      }
    }
  });
  setTimeout(function () {
    if (!found && !decided) {
      statusEl.textContent = 'This request is no longer open.';
    }
  }, 5000);
})();
