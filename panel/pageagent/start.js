// The one place the rest of the page agent starts, after every file of the rest has declared its
// names; the boot has started (boot.js startBoot) and handed them over. The order is the order
// of the original single file: the page tools' password watch, navigation and readiness reports,
// the back/forward cache, the launcher, then the socket.

function startRest() {
  useToken();
  watchPasswordFields();
  startNavigationReports();
  onEarly('ready', sendReady);
  startBackForwardCache();
  startLauncher();
  connect();
}
