package sandbox

import (
	"strings"
	"testing"
)

// TestApprovalNamesSuffixWildcards (red-team pass 5b): a match pattern on a whole public suffix
// ("*.com", "*.co.uk", "*.github.io") runs on every site under it. A card that wrote it as the
// pattern read like one host; it says what the pattern covers.
func TestApprovalNamesSuffixWildcards(t *testing.T) {
	for _, tt := range []struct{ pattern, want string }{
		{"https://*.com/*", "every site under .com"},
		{"*://*.co.uk/*", "every site under .co.uk"},
		{"https://*.github.io/*", "every site under .github.io"},
		{"https://*.test/*", "every site under .test"},
	} {
		for _, c := range []Change{
			{Next: manifest([]string{tt.pattern}), ChatHost: "shop.example.org"},
			{Active: manifest([]string{"https://shop.example.org/*"}), Next: manifest([]string{"https://shop.example.org/*", tt.pattern})},
			{Active: manifest([]string{"https://shop.example.org/*", tt.pattern}), Next: manifest([]string{"https://shop.example.org/*", tt.pattern}), ChatHost: "shop.example.org", CodeChanged: true},
		} {
			_, reasons := NeedsApproval(c)
			var texts []string
			for _, r := range reasons {
				texts = append(texts, r.Text)
			}
			if got := strings.Join(texts, "; "); !strings.Contains(got, tt.want) {
				t.Errorf("%s (active %v): the reasons read %q, want them to say %q", tt.pattern, c.Active != nil, got, tt.want)
			}
		}
	}
	for _, h := range []string{"*.news.test", "*.example.co.uk", "shop.com", "com.evil.test"} {
		if got := SiteText(h); got != h {
			t.Errorf("SiteText(%q) = %q, want it as it is", h, got)
		}
	}
}
