// The one place the page agent starts, after every file has declared its names and captured what
// it needs. Nothing starts without a token, in a frame, or in a browser that lacks what the agent
// needs. The order is the order of the original single file: the page tools' password watch,
// navigation reports, the back/forward cache, the launcher, then the socket.

function start() {
  if (token === '' || !capturesComplete()) {
    return;
  }
  adoptFirstSheets();
  useToken();
  watchPasswordFields();
  watchRevealedPasswords();
  startNavigationReports();
  startReadinessReports();
  startBackForwardCache();
  startLauncher();
  connect();
}
start();
