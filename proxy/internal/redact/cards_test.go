package redact

import (
	"strings"
	"testing"
)

// TestRedactCards: card numbers of each network, alone, grouped, in HTML, JSON and sentences,
// are replaced whole; numbers that fail Luhn, lack an issuer prefix, have the wrong length or
// are part of a longer word or number are kept.
func TestRedactCards(t *testing.T) {
	const m = "[redacted: card number]"
	for _, c := range []struct{ in, want string }{
		{"4111111111111111", m},
		{"Visa 4111 1111 1111 1111.", "Visa " + m + "."},
		{"card: 4111-1111-1111-1111, expires 12/29", "card: " + m + ", expires 12/29"},
		{`<input name="num" value="5555555555554444">`, `<input name="num" value="` + m + `">`},
		{`{"pan":"2223003122003222","n":5105105105105100}`, `{"pan":"` + m + `","n":` + m + `}`},
		{"Amex 3782 822463 10005 and Discover 6011111111111117", "Amex " + m + " and Discover " + m},
		{"JCB 3530111333300000, Diners 30569309025904, UnionPay 6200000000000005", "JCB " + m + ", Diners " + m + ", UnionPay " + m},
		{"two: 4111111111111111 4012888888881881", "two: " + m + " " + m},
		{"visa 4222222222222 (13 digits)", "visa " + m + " (13 digits)"},
		// Kept.
		{"4111111111111112", "4111111111111112"},                                   // Luhn fails
		{"order 1111111111111117", "order 1111111111111117"},                       // no issuer prefix
		{"1701000000000 ms", "1701000000000 ms"},                                   // a timestamp
		{"id a4111111111111111", "id a4111111111111111"},                           // part of a word
		{"hash 4111111111111111abc", "hash 4111111111111111abc"},                   // part of a word
		{"41111111111111111111111", "41111111111111111111111"},                     // too long
		{"4111111111111111.25 EUR", "4111111111111111.25 EUR"},                     // a decimal
		{"4111  1111 1111 1111", "4111  1111 1111 1111"},                           // two spaces: not one number
		{"phone +44 20 7946 0958", "phone +44 20 7946 0958"},                       // too few digits
		{"invoice 2024-000123-004411 paid", "invoice 2024-000123-004411 paid"},     // no issuer prefix, Luhn
		{"no digits here at all, just words", "no digits here at all, just words"}, // nothing
		{m + " 4111", m + " 4111"},                                                 // markers stay
	} {
		if got := redactCards(c.in); got != c.want {
			t.Errorf("redactCards(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestRedactPageTakesCardsRedactDoesNot: a tool result (RedactPage) loses card numbers and the
// known secrets; the person's own text (Redact) keeps a card number they wrote.
func TestRedactPageTakesCardsRedactDoesNot(t *testing.T) {
	r := New([]Secret{{Value: "hunter2-pass", Kind: KindPassword}})
	in := "pw hunter2-pass card 4111 1111 1111 1111"
	if got := r.RedactPage(in); strings.Contains(got, "4111") || strings.Contains(got, "hunter2") {
		t.Errorf("RedactPage(%q) = %q", in, got)
	}
	if got := r.Redact(in); !strings.Contains(got, "4111 1111 1111 1111") || strings.Contains(got, "hunter2") {
		t.Errorf("Redact(%q) = %q, want the card kept and the password gone", in, got)
	}
	var nilR *Redactor
	if got := nilR.RedactPage("4111111111111111"); got != "[redacted: card number]" {
		t.Errorf("a nil Redactor's RedactPage = %q", got)
	}
}

func BenchmarkRedactCardsNone(b *testing.B) {
	s := strings.Repeat("An ordinary page of text with order 12345 and a phone 020 7946 0958. ", 400)
	b.SetBytes(int64(len(s)))
	for i := 0; i < b.N; i++ {
		redactCards(s)
	}
}

// TestRedactPageCardsInJSONStrings: a card number inside a JSON string is found in the decoded
// text, so a line break before it ("\n" in the JSON text, a word's letter to the raw scan) or
// a \u escape does not hide it.
func TestRedactPageCardsInJSONStrings(t *testing.T) {
	const m = "[redacted: card number]"
	for _, c := range []struct{ in, want string }{
		{`{"text":"Saved card\n4111 1111 1111 1111\nexpires"}`, `{"text":"Saved card\n` + m + `\nexpires"}`},
		{`{"text":"card\t4111111111111111"}`, `{"text":"card\t` + m + `"}`},
		{`{"text":"\u0034111111111111111"}`, `{"text":"` + m + `"}`},
	} {
		if got := New(nil).RedactPage(c.in); got != c.want {
			t.Errorf("RedactPage(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestRedactCardCuts: the first ten digits or more of a card number cut at "…" or
// "[truncated" go; fewer, numbers without an issuer prefix, phone numbers and digits that end a
// JSON string (ids, not cuts) stay.
func TestRedactCardCuts(t *testing.T) {
	const m = "[redacted: card number]"
	for _, c := range []struct{ in, want string }{
		{"Saved card: Visa 4111 1111 1111 111…", "Saved card: Visa " + m + "…"},
		{"4111111111111…", m + "…"},
		{"card 5555-5555-55[truncated: 40 more]", "card " + m + "[truncated: 40 more]"},
		{`{"text":"Visa 4111 1111 1111 111…","truncated":true}`, `{"text":"Visa ` + m + `…","truncated":true}`},
		// Kept.
		{"Visa 4111 1111 1…", "Visa 4111 1111 1…"},                         // nine digits
		{"order 1111 1111 1111 111…", "order 1111 1111 1111 111…"},         // no issuer prefix
		{"call +44 20 7946 0958…", "call +44 20 7946 0958…"},               // a phone number
		{"id x4111111111111…", "id x4111111111111…"},                       // part of a word
		{`{"pixelId":"497430300356774"}`, `{"pixelId":"497430300356774"}`}, // an id, not a cut
	} {
		if got := New(nil).RedactPage(c.in); got != c.want {
			t.Errorf("RedactPage(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}
