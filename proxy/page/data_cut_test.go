package page

import (
	"strings"
	"testing"
)

// TestRecordedBodyCutHidesTheCard: read_page_data's bodies are cut at maxRecordedBody bytes
// before the redaction reads them. Wherever the cut falls in a card number, the cut body ends
// with "…" right after the digits, which the card rule reads as a cut and so hides the first
// ten digits or more (redact's TestRedactCardCuts; this package may not import redact). At a
// bare end up to fifteen digits showed, the cut only marked by "truncated": true.
func TestRecordedBodyCutHidesTheCard(t *testing.T) {
	const card = "4111111111111111"
	for at := 1; at < len(card); at++ {
		raw := []byte(`{"note":"` + strings.Repeat("x", maxRecordedBody-at-10) + " " + card + ` and more"}`)
		body, truncated, ok := recordedBody(raw, "", true)
		if !ok || !truncated {
			t.Fatalf("a body of %d bytes: ok %v, truncated %v; want a cut text", len(raw), ok, truncated)
		}
		if want := " " + card[:at] + "…"; !strings.HasSuffix(body, want) {
			t.Errorf("cut after %d digits of the card, the body ends %q; want %q (the cut mark right after the digits)", at, body[len(body)-20:], want)
		}
	}
	if body, truncated, _ := recordedBody([]byte(`{"a":1}`), "", false); !truncated || body != `{"a":1}…` {
		t.Errorf("a body that did not arrive whole: %q, truncated %v; want the cut mark", body, truncated)
	}
	if body, truncated, _ := recordedBody([]byte(`{"a":1}`), "", true); truncated || body != `{"a":1}` {
		t.Errorf("a whole body: %q, truncated %v; want it unchanged", body, truncated)
	}
}
