package remixlet

import (
	"context"
	"encoding/json"
)

// The rmx.* services a remixlet's sandbox can call, beyond keep, page and storage (which the
// Host answers itself, remixlets_host.go). Each is answered by the function in the file named
// for it, after the standing checks (checkStanding) passed; each must check its own permission
// against h.manifest. This table is the one list: a method not in it does not exist.

// rmxService answers one rmx.* method.
type rmxService func(ctx context.Context, h *remixletHost, args []json.RawMessage) (json.RawMessage, error)

// rmxServices are the services, by method name.
var rmxServices = map[string]rmxService{
	"clipboard.write":    rmxClipboardWrite,    // rmx_clipboard.go
	"notify":             rmxNotify,            // rmx_notify.go
	"menu.add":           rmxMenuAdd,           // rmx_menu.go
	"menu.remove":        rmxMenuRemove,        // rmx_menu.go
	"storage.onChange":   rmxStorageOnChange,   // rmx_storage_events.go
	"fetch":              rmxFetch,             // rmx_fetch.go
	"network.responses":  rmxNetworkResponses,  // rmx_observe.go
	"network.onResponse": rmxNetworkOnResponse, // rmx_observe.go
	"schedule.every":     rmxScheduleEvery,     // schedule.go
	"schedule.at":        rmxScheduleAt,        // schedule.go
	"schedule.cancel":    rmxScheduleCancel,    // schedule.go
	"onMessage":          rmxOnMessage,         // schedule.go
}
