package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/remixproxy/remixproxy/store"
)

// TestSeedLive: --live leaves one remixlet, active, with the files liveRemixlet says, in the
// store a proxy started on the data directory opens.
func TestSeedLive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := seedLive(dir); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "remixproxy.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	rs, err := st.ListRemixlets(ctx)
	if err != nil || len(rs) != 1 {
		t.Fatalf("remixlets = %v, %v; want the live one only", rs, err)
	}
	v, ok, err := st.Active(ctx, rs[0].ID)
	if err != nil || !ok {
		t.Fatalf("the live remixlet is not active: %v, %v", ok, err)
	}
	for name, want := range liveRemixlet() {
		if !bytes.Equal(v.Files[name], want) {
			t.Errorf("active %s = %q, want %q", name, v.Files[name], want)
		}
	}
}
