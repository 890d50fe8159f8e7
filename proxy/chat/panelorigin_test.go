package chat

import "testing"

// TestPanelOriginRefusal: a panel socket opens its session only when the panel names the
// session's origin as the page it is shown in; the confirmation window names none.
func TestPanelOriginRefusal(t *testing.T) {
	tests := []struct {
		name           string
		confirm        bool
		frame, session string
		refused        bool
	}{
		{"the session's own page", false, "https://shop.test", "https://shop.test", false},
		{"another site's page", false, "https://evil.test", "https://shop.test", true},
		{"another origin of the site", false, "https://www.shop.test", "https://shop.test", true},
		{"the other scheme", false, "http://shop.test", "https://shop.test", true},
		{"opened by hand (no frame)", false, "", "https://shop.test", true},
		{"the confirmation window", true, "", "https://shop.test", false},
	}
	for _, tt := range tests {
		why := panelOriginRefusal(tt.confirm, tt.frame, tt.session)
		if (why != "") != tt.refused {
			t.Errorf("%s: refusal %q, want refused=%v", tt.name, why, tt.refused)
		}
		if len(why) > 123 {
			t.Errorf("%s: the reason is %d bytes, more than a close reason holds", tt.name, len(why))
		}
	}
}
