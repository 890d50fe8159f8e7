package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// --live: every remixproxy target starts with a remixlet on, for every *.bench.test page, as a
// person who uses remixproxy has: a stylesheet (carried in the bootstrap tag's first frame), a
// script, and network rules (50 block rules for addresses the bench never asks for, so every
// request is matched against them and none is blocked). So the pipeline's remixlet paths run
// on every request: the network rules' matching, the runner's first-frame stylesheets and
// sandbox preparation at injection. What a page-less bench cannot bring about stays on its fast
// path: no page agent connects, so no remixlet writes an address or names a site (the
// remixlets' redirect, opened-document and named-site guards), and no chat acts (the agent's
// navigation and send guards). Those slow paths are measured in process by
// BenchmarkRemixletGuards (proxy/remixlet) and BenchmarkChatGuards (proxy/chat).
var live = flag.Bool("live", false, "start every remixproxy target with a remixlet on for the bench's pages (stylesheet, script, 50 network rules that block nothing the bench asks for)")

// liveRemixlet is the remixlet --live stores.
func liveRemixlet() store.Files {
	var rules []string
	for i := 1; i <= 50; i++ {
		rules = append(rules, fmt.Sprintf(`{"id": %d, "action": {"type": "block"}, "condition": {"urlFilter": "/never-asked-%d/", "resourceTypes": ["main_frame", "image", "script", "xmlhttprequest"]}}`, i, i))
	}
	return store.Files{
		sandbox.ManifestFile: []byte(`{"name": "bench-live", "description": "the bench's live remixlet", "api": 1, "matches": ["https://*.bench.test/*"], "permissions": [{"name": "netrules", "reason": "the bench measures rule matching"}]}`),
		sandbox.StyleFile:    []byte("p { margin: 0 0 .5em; }\n.promoted, .ad { display: none !important; }\n"),
		sandbox.ScriptFile:   []byte("rmx.log('bench-live');\n"),
		sandbox.RulesFile:    []byte("[" + strings.Join(rules, ",\n") + "]"),
	}
}

// seedLive stores liveRemixlet in the data directory dataDir and makes it active as the
// person's own click would (saved, approved, activated), before the proxy starts.
func seedLive(dataDir string) error {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("seeding the live remixlet: %w", err)
	}
	st, err := store.Open(filepath.Join(dataDir, "remixproxy.db"), store.Options{
		NeedsApproval: func(active, next store.Files, chatHost string) (bool, string) {
			return sandbox.FilesNeedApproval(active, next, chatHost)
		},
	})
	if err != nil {
		return fmt.Errorf("seeding the live remixlet: opening the store: %w", err)
	}
	defer st.Close()
	ctx := context.Background()
	files := liveRemixlet()
	if _, probs := sandbox.CheckFiles(files); len(probs) > 0 {
		return fmt.Errorf("seeding the live remixlet: its files do not pass the save-time checks: %v", probs)
	}
	rx, err := st.CreateRemixlet(ctx, "bench-live")
	if err != nil {
		return fmt.Errorf("seeding the live remixlet: %w", err)
	}
	v, err := st.SaveVersion(ctx, rx.ID, files, store.AuthorPerson, "the bench's live remixlet")
	if err != nil {
		return fmt.Errorf("seeding the live remixlet: saving: %w", err)
	}
	a, err := st.RequestApproval(ctx, v.ID, "")
	if err != nil {
		return fmt.Errorf("seeding the live remixlet: requesting approval: %w", err)
	}
	if err := st.Approve(ctx, a.ID); err != nil {
		return fmt.Errorf("seeding the live remixlet: approving: %w", err)
	}
	if err := st.ActivateApproved(ctx, a.ID); err != nil {
		return fmt.Errorf("seeding the live remixlet: activating: %w", err)
	}
	return nil
}
