package scripted

import (
	"strings"
	"testing"
)

func TestDemoScript(t *testing.T) {
	s := Demo()
	if len(s.Turns) != 4 {
		t.Fatalf("demo has %d turns", len(s.Turns))
	}
	// The manifest's match pattern comes from the capture_page result the model saw last.
	got := expand(`{{grab:"url":"(https?://[^/"]+)}}/*`, `{"url":"https://news.example/a/b","title":"x"}`)
	if got != "https://news.example/*" {
		t.Errorf("match pattern = %q", got)
	}
	if !strings.Contains(string(s.Turns[2].ToolCalls[0].Arguments), "grab:") {
		t.Error("the demo's write_remixlet does not take the site from the page")
	}
}
