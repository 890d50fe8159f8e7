package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/remixproxy/remixproxy/store"
)

// TestCreateAndActivate: the helpers leave the given files active, a second version replacing
// the first.
func TestCreateAndActivate(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	manifest := []byte(`{"name": "a", "description": "t", "api": 1, "matches": ["https://site.test/*"], "permissions": []}`)
	rx, v1 := Create(t, st, "a", store.Files{"manifest.json": manifest, "script.js": []byte("1")})
	v2 := Activate(t, st, rx.ID, store.Files{"manifest.json": manifest, "script.js": []byte("2")})
	active, ok, err := st.Active(ctx, rx.ID)
	if err != nil || !ok {
		t.Fatalf("Active: got (%v, %v), want the active version", ok, err)
	}
	if active.ID != v2.ID || active.ID == v1.ID || string(active.Files["script.js"]) != "2" {
		t.Errorf("got active version %d with script %q, want version %d with script \"2\"", active.ID, active.Files["script.js"], v2.ID)
	}
}
