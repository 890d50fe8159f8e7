// The one place the page agent starts, after every file has declared its names and captured what
// it needs. Nothing starts without a token, in a frame, or in a browser that lacks what the agent
// needs. The order is the order of the original single file: the page tools' password watch,
// navigation reports, the back/forward cache, the launcher, then the socket (at once where
// remixlets run or a chat follows the tab, after the page's load elsewhere).

function start() {
  if (token === '' || !capturesComplete()) {
    return;
  }
  adoptFirstSheets();
  useToken();
  watchPasswordFields();
  watchRevealedPasswords();
  watchMirrors(); // rx_mirrors.js: two capture listeners, an observer only while a secret is typed
  startNavigationReports();
  startPersonNavReports(); // person_nav.js: before any page script, like every listener here
  startPersonInputReports(); // person_input.js: the same, for the send guard
  startActLeaveWatch(); // tool_act.js: a new page an action's handlers start
  startReadinessReports();
  startBackForwardCache();
  startLauncher();
  // Where remixlets run or a chat follows the tab to this page (the proxy says so in the tag:
  // data-remixproxy-now) the socket opens at once: the remixlets act while the page loads, the
  // chat moves on without waiting for the load. Elsewhere it opens after the load, in a
  // task after the launcher's: nothing needs it sooner there, and opening it puts the
  // WebSocket's set-up (1.5 ms of main thread, a TLS handshake, the hello) on the page's load
  // otherwise (NOTES, 2026-12-02, second session). A remixlet switched on for the page
  // meanwhile runs when it connects.
  if (connectNow) {
    connect();
  } else {
    afterLoad(connect);
  }
}
start();
