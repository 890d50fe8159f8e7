// Package certs is the proxy's local certificate authority: an ECDSA P-256 root created on first
// run (key file 0600, unique per install), leaf certificates issued on demand for the hosts the
// browser connects to (bounded cache, single-flight generation), and installing or removing the
// root in the operating system's and browsers' trust stores.
//
// Data flow: proxy/ asks for a *tls.Certificate for each TLS client hello it terminates; the CLI
// asks for trust changes.
//
// It must never: use a built-in or shared CA key (goproxy ships a public one), write the key with
// permissions wider than 0600, issue leaves that outlive browsers' limits, or report a trust store
// as updated when it was skipped.
package certs
