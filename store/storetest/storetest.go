// Package storetest holds helpers for tests of code that reads the store: remixlet versions
// saved and made active the way the person's own click makes them active (request an
// approval, approve it, activate), so a test needs one line for it. Only tests import it.
package storetest

import (
	"context"
	"testing"

	"github.com/remixproxy/remixproxy/store"
)

// Activate saves files as a new version of the remixlet id, written by the person, and makes
// it the active version through an approval the person gave. It fails the test on any error.
func Activate(t testing.TB, st *store.Store, id string, files store.Files) store.Version {
	t.Helper()
	ctx := context.Background()
	v, err := st.SaveVersion(ctx, id, files, store.AuthorPerson, "activated by a test")
	if err != nil {
		t.Fatalf("saving a version of %s: %v", id, err)
	}
	a, err := st.RequestApproval(ctx, v.ID, "")
	if err != nil {
		t.Fatalf("requesting approval of %s version %d: %v", id, v.ID, err)
	}
	if err := st.Approve(ctx, a.ID); err != nil {
		t.Fatalf("approving %s version %d: %v", id, v.ID, err)
	}
	if err := st.ActivateApproved(ctx, a.ID); err != nil {
		t.Fatalf("activating %s version %d: %v", id, v.ID, err)
	}
	return v
}

// Create creates a remixlet called name and activates files as its first version (Activate).
func Create(t testing.TB, st *store.Store, name string, files store.Files) (store.Remixlet, store.Version) {
	t.Helper()
	rx, err := st.CreateRemixlet(context.Background(), name)
	if err != nil {
		t.Fatalf("creating remixlet %q: %v", name, err)
	}
	return rx, Activate(t, st, rx.ID, files)
}
