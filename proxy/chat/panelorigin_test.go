package chat

import (
	"strings"
	"testing"
)

// TestPanelOriginRefusal: a panel socket opens its session only when the panel names the
// session's origin as the page it is shown in; the confirmation window names none. A refusal
// says what to do: open the chat from the page's own button (and, on another origin's page,
// reload it).
func TestPanelOriginRefusal(t *testing.T) {
	tests := []struct {
		name           string
		confirm        bool
		frame, session string
		refused        bool
		advice         []string // what a refusal must tell the person to do
	}{
		{"the session's own page", false, "https://shop.test", "https://shop.test", false, nil},
		{"another site's page", false, "https://evil.test", "https://shop.test", true, []string{"reload the page", "open the chat from its remixproxy button"}},
		{"another origin of the site", false, "https://www.shop.test", "https://shop.test", true, []string{"reload the page", "open the chat from its remixproxy button"}},
		{"the other scheme", false, "http://shop.test", "https://shop.test", true, []string{"reload the page", "open the chat from its remixproxy button"}},
		{"opened by hand (no frame)", false, "", "https://shop.test", true, []string{"open the chat from the page's remixproxy button"}},
		{"the confirmation window", true, "", "https://shop.test", false, nil},
	}
	for _, tt := range tests {
		why := panelOriginRefusal(tt.confirm, tt.frame, tt.session)
		if (why != "") != tt.refused {
			t.Errorf("%s: refusal %q, want refused=%v", tt.name, why, tt.refused)
		}
		for _, advice := range tt.advice {
			if !strings.Contains(why, advice) {
				t.Errorf("%s: refusal %q does not say %q", tt.name, why, advice)
			}
		}
		if len(why) > 123 {
			t.Errorf("%s: the reason is %d bytes, more than a close reason holds", tt.name, len(why))
		}
	}
}
