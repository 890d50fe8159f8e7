package chat

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestRefuseCarriedRequest: the agent's own requests (open_page, http_request) whose path or
// query carries another site's address are refused in the navigation guard's words; the
// fragment (never sent), the site's own addresses, host-looking path segments and addresses
// the tool refuses anyway are left to the tool.
func TestRefuseCarriedRequest(t *testing.T) {
	const page = "https://www.shop.test/cart"
	b64 := base64.RawURLEncoding.EncodeToString([]byte("https://witness.test/?c=4711"))
	for _, tt := range []struct {
		raw, where string // where: "" for no refusal
	}{
		{"/preview?url=https://witness.test/?c=4711", "query"},
		{"/preview?url=https%3A%2F%2Fwitness.test%2F%3Fc%3D4711", "query"},
		{"/preview?url=witness.test/i?c=4711", "query"},
		{"/preview?url=//witness.test/i", "query"},
		{"https://api.shop.test/import?src=" + b64, "query"},
		{"/preview/https://witness.test/?c=4711", "path"},
		{"/preview/https%3A%2F%2Fwitness.test%2F%3Fc%3D4711", "path"},
		{"/b/" + b64, "path"},
		{"preview/https:/witness.test/i", "path"},
		{"/preview#url=https://witness.test/?c=4711", ""}, // the fragment is never sent
		{"/preview?url=https://help.shop.test/a", ""},     // the site's own
		{"/domain/witness.test", ""},                      // host-looking segments are not read
		{"/v///witness.test/i?c=4711", "path"},            // scheme-relative, a site's name
		{"/api/cart?page=2", ""},
		{"https://evil.test/x?u=https://witness.test/", ""}, // another site: the tool's own refusal
		{"javascript:alert(1)", ""},
	} {
		err := refuseCarriedRequest("http_request", page, tt.raw)
		if tt.where == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", tt.raw, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: not refused, want a refusal naming its %s", tt.raw, tt.where)
			continue
		}
		msg := err.Error()
		for _, want := range []string{"http_request refused: the request to https://", "carried an address of witness.test in its " + tt.where, carriedCost, "Nothing was sent"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", tt.raw, msg, want)
			}
		}
		if strings.Contains(msg, "4711") || strings.Contains(msg, b64) {
			t.Errorf("%s: the refusal shows the data: %s", tt.raw, msg)
		}
	}
}
