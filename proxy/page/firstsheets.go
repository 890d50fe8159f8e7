package page

import (
	"strconv"
	"strings"
)

// The first-frame sheets: the remixlet stylesheets the proxy put into a page's bootstrap tag
// (panel.FirstSheet), which the page agent adopted before the first paint. The page agent lists
// the ones it still holds as adopted, untouched since, in its socket's address (?s=ID:VERSION,…);
// the runner takes them as already in the page and does not send them again. The list is the
// page's word: a page that lies only loses a stylesheet it could remove anyway, and the runner
// sends every other stylesheet (and empties every listed one that is not current) as before.

// maxFirstSheets bounds the pairs read from one socket address.
const maxFirstSheets = 64

// parseFirstSheets reads the ?s= list: remixlet ID → version. Malformed pairs are skipped.
func parseFirstSheets(raw string) map[string]int64 {
	if raw == "" {
		return nil
	}
	out := map[string]int64{}
	for _, pair := range strings.Split(raw, ",") {
		if len(out) == maxFirstSheets {
			break
		}
		id, ver, ok := strings.Cut(pair, ":")
		if !ok || !validRemixletID(id) {
			continue
		}
		v, err := strconv.ParseInt(ver, 10, 64)
		if err != nil || v <= 0 {
			continue
		}
		out[id] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// validRemixletID reports whether id has the shape of a remixlet ID: "rx_" and 32 lowercase hex
// digits.
func validRemixletID(id string) bool {
	hex, ok := strings.CutPrefix(id, "rx_")
	if !ok || len(hex) != 32 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		c := hex[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// FirstSheets returns the first-frame sheets the page agent said it holds when it connected
// (remixlet ID → version; nil for none). The caller may not change the map.
func (s *Session) FirstSheets() map[string]int64 { return s.firstSheets }
