package sandbox

import _ "embed"

//go:embed api.d.ts
var apiDeclarations string

// APIDeclarations returns the TypeScript declarations of the remixlet script API (api.d.ts):
// every global, dom.* and rmx.* call a script can use, each with a one-line doc and an example.
// The agent uses it as its reference; DOMMethods and RMXMethods match it (checked by a test).
func APIDeclarations() string { return apiDeclarations }
