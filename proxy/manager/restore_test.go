package manager

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/store"
)

// TestRestoreTargetErrors: the restore's first steps (restoreTarget, shared by the restore page
// and the restore) name the step in their errors and wrap the store's: a version that is not
// there stays ErrNotFound (a 404), and a store that fails says it was the restore that failed.
func TestRestoreTargetErrors(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "s.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rx := store.Remixlet{ID: "rx_test"}
	r := httptest.NewRequest("GET", "/manager/r/rx_test/restore/7", nil)
	r.SetPathValue("vid", "7")
	if _, _, err := restoreTarget(context.Background(), st, r, rx); !errors.Is(err, store.ErrNotFound) || !strings.HasPrefix(err.Error(), "restore: read the version: ") {
		t.Errorf("a version not there: %v; want ErrNotFound, named", err)
	}
	st.Close()
	if _, _, err := restoreTarget(context.Background(), st, r, rx); err == nil || errors.Is(err, store.ErrNotFound) || !strings.HasPrefix(err.Error(), "restore: read the version: ") {
		t.Errorf("a closed store: %v; want the store's error, named", err)
	}
}
