// Package sandbox is the remixlet runtime: the save-time checks of a remixlet's files, and the
// goja sandbox that runs remixlet code with the dom and rmx bindings under hard limits.
//
// Data flow: a saved remixlet's files are checked here before the store accepts them; when a
// page agent connects, the proxy starts one sandbox per matching remixlet; dom.* calls are relayed
// to the page agent as data, rmx.* calls are checked in Go against the stored manifest.
//
// It must never: expose host objects, network, files, eval or function constructors to remixlet
// code, let one remixlet's loop, regex, memory or timer flood stall the proxy or another
// remixlet, or decide a permission from anything but the stored, approved manifest.
package sandbox
