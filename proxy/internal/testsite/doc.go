// Package testsite holds the test sites that the tests of more than one package of proxy/ put
// behind the proxy or one of its clients, so each is written once: the API hosts rmx.fetch's
// tests call (fetchapi.go) and the site the agent navigation guard's tests navigate on
// (navsite.go).
//
// Only tests import it, and it imports nothing of proxy/, so the tests of every layer may use
// it; proxy/layers_test.go refuses it in a package's own code.
package testsite
