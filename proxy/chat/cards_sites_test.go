package chat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
)

// TestActivationCardBoundsItsSites (OPEN-ITEMS 34): a new remixlet matching 60 hosts got a
// "Run on sites other than this page's" row naming all 60. The row names the first five and
// "and 55 more"; the list in full goes with the card's diff, which the confirmation window
// shows line by line before Allow is taken. A row of five sites or fewer is as before.
func TestActivationCardBoundsItsSites(t *testing.T) {
	manifest := func(n int) []byte {
		var ms []string
		for i := range n {
			ms = append(ms, fmt.Sprintf(`"https://s%02d.test/*"`, i))
		}
		return []byte(`{"name": "many", "api": 1, "matches": [` + strings.Join(ms, ", ") + `]}`)
	}
	for _, c := range []struct {
		n        int
		row      string
		wantList bool
	}{
		{60, "Run on sites other than this page's: s00.test, s01.test, s02.test, s03.test, s04.test and 55 more (the window where you allow lists every one)", true},
		{5, "Run on sites other than this page's: s00.test, s01.test, s02.test, s03.test, s04.test", false},
	} {
		next := map[string][]byte{sandbox.ManifestFile: manifest(c.n), sandbox.ScriptFile: []byte("rmx.log(1)")}
		it := activationCard(&cardRemixlet{Name: "many"}, sandbox.FilesApprovalReasons(nil, next, "shop.test"), nil, next)
		if len(it.Rows) != 1 || it.Rows[0] != c.row {
			t.Errorf("%d sites: rows %q, want [%q]", c.n, it.Rows, c.row)
		}
		var list *panel.CodeDiff
		for i := range it.Diff {
			if it.Diff[i].File == sitesFile {
				list = &it.Diff[i]
			}
		}
		if (list != nil) != c.wantList {
			t.Fatalf("%d sites: list of sites in the diff %v, want %v", c.n, list != nil, c.wantList)
		}
		if list == nil {
			continue
		}
		var shown []string
		for _, l := range list.Lines {
			if l.Op == panel.DiffAdded {
				shown = append(shown, l.Text)
			}
		}
		if len(shown) != c.n || list.Added != c.n || list.Cut != 0 || shown[59] != "s59.test" {
			t.Errorf("%d sites: the list shows %d (added %d, cut %d): %q", c.n, len(shown), list.Added, list.Cut, shown)
		}
	}
}
