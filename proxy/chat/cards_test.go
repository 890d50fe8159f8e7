package chat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
)

// TestActivationCardShowsRulesRuleByRule (red-team pass 5b): rules.json written on one line
// (as JSON often is) was shown as one line of the diff, cut after MaxCardDiffLineChars: a
// redirect after many harmless rules was out of sight. The card shows one rule a line, so every
// rule is read.
func TestActivationCardShowsRulesRuleByRule(t *testing.T) {
	var rules []string
	for i := 1; i <= 40; i++ {
		rules = append(rules, fmt.Sprintf(`{"id":%d,"action":{"type":"block"},"condition":{"urlFilter":"||ads%d.shop.test^"}}`, i, i))
	}
	rules = append(rules, `{"id":99,"action":{"type":"redirect","redirect":{"url":"https://shop.test/evil.js"}},"condition":{"urlFilter":"||shop.test/app.js"}}`)
	next := map[string][]byte{sandbox.ManifestFile: []byte(`{}`), sandbox.RulesFile: []byte("[" + strings.Join(rules, ",") + "]")}
	it := activationCard(&cardRemixlet{Name: "x"}, nil, nil, next)
	var shown []string
	for _, d := range it.Diff {
		if d.File != sandbox.RulesFile {
			continue
		}
		if d.Cut != 0 {
			t.Errorf("rules.json: %d lines cut", d.Cut)
		}
		for _, l := range d.Lines {
			shown = append(shown, l.Text)
		}
	}
	text := strings.Join(shown, "\n")
	if !strings.Contains(text, `{"id":99,"action":{"type":"redirect","redirect":{"url":"https://shop.test/evil.js"}}`) {
		t.Errorf("the card's rules.json does not show the redirect:\n%s", text)
	}
	if strings.Contains(text, "more characters of this line are not shown") {
		t.Errorf("the card's rules.json is cut:\n%s", text)
	}
}
