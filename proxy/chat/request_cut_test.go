package chat

import (
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/proxy/fetch"
	"github.com/remixproxy/remixproxy/proxy/internal/redact"
)

// TestRequestResultCutHidesTheCard: http_request's answer is cut at maxRequestResult
// characters before the redaction reads it. Wherever the cut falls in a card number the body
// shows, the model sees at most nine of its digits: the cut mark starts with "…", which the
// card rule reads as a cut (redact/cards.go). A bare "\n[truncated" left up to fifteen digits,
// and the Luhn check gives the sixteenth.
func TestRequestResultCutHidesTheCard(t *testing.T) {
	const card = "4111111111111111"
	red := redact.New(nil)
	for at := 1; at < len(card); at++ {
		body := strings.Repeat("x", maxRequestResult-at-1) + " " + card + " and more text after it"
		if got := len([]rune(body[:strings.Index(body, card)])); got != maxRequestResult-at {
			t.Fatalf("set-up: card at %d, want %d", got, maxRequestResult-at)
		}
		out := red.RedactPage(requestResult("GET", &fetch.Result{Status: 200, StatusText: "OK", URL: "https://example.com/a", Text: &body}))
		if shown := longestDigitRun(out); shown >= 10 {
			t.Errorf("cut after %d digits of the card: the model sees %d digits in a row (…%s)", at, shown, tail(out, 80))
		}
	}
}

func longestDigitRun(s string) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

func tail(s string, n int) string {
	i := strings.Index(s, "[truncated")
	if i < 0 {
		i = len(s)
	}
	return s[max(0, i-n):min(len(s), i+12)]
}
