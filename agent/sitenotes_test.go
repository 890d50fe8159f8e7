package agent

import (
	"strings"
	"testing"
)

func TestSiteNoteMatchers(t *testing.T) {
	tests := []struct {
		note  string
		match []string
		miss  []string
	}{
		{"github",
			[]string{"github.com", "gist.github.com", "www.github.com"},
			[]string{"example.github.io", "notgithub.com", "github.com.evil.test"}},
		{"gmail",
			[]string{"mail.google.com"},
			[]string{"google.com", "docs.google.com", "mail.google.com.evil.test"}},
		{"amazon",
			[]string{"amazon.com", "www.amazon.com", "www.amazon.co.uk", "smile.amazon.de", "amazon.com.au"},
			[]string{"aws.amazon.com", "console.aws.amazon.com", "amazonaws.com", "amazon.evil-shop.com", "notamazon.com"}},
		{"stripe",
			[]string{"dashboard.stripe.com"},
			[]string{"stripe.com", "checkout.stripe.com", "dashboard.stripe.com.evil.test"}},
		{"finance",
			[]string{"www.bankofamerica.com", "online.mybank.example", "example.bank", "www.paypal.com", "paypal.com",
				"secure.chase.com", "www.coinbase.com", "checkout.stripe.com", "pay.example.com", "billing.shop.test", "navyfederalcreditunion.org"},
			[]string{"example.com", "pay.test", "paypal.com.evil.test", "news.example.com", "checkouts.example.com"}},
	}
	byName := map[string]func(string) bool{}
	for _, n := range siteNotes {
		byName[n.name] = n.match
	}
	for _, tt := range tests {
		match := byName[tt.note]
		if match == nil {
			t.Fatalf("no site note %q", tt.note)
		}
		for _, h := range tt.match {
			if !match(h) {
				t.Errorf("%s note: %s does not match, want it to", tt.note, h)
			}
		}
		for _, h := range tt.miss {
			if match(h) {
				t.Errorf("%s note: %s matches, want it not to", tt.note, h)
			}
		}
	}
}

// TestSiteNotesEmbedded: every note is embedded, short, and the high-stakes ones say so first.
func TestSiteNotesEmbedded(t *testing.T) {
	for _, n := range siteNotes {
		b, err := siteNoteFiles.ReadFile("sitenotes/" + n.name + ".md")
		if err != nil {
			t.Errorf("%s: %v", n.name, err)
			continue
		}
		if len(b) > 1600 {
			t.Errorf("%s: %d bytes; keep a note under 1600 (it is in every prompt on that site)", n.name, len(b))
		}
	}
	for url, banner := range map[string]string{
		"https://www.paypal.com/myaccount":      "[FINANCE / HIGH-STAKES",
		"https://dashboard.stripe.com/payments": "[HIGH-STAKES",
	} {
		if _, text := SiteNote(url); !strings.HasPrefix(text, banner) {
			t.Errorf("%s: note starts %.40q, want the %s banner", url, text, banner)
		}
	}
}

// TestSystemPromptSiteNote: exactly one note, the first match, on a matching page; none elsewhere.
func TestSystemPromptSiteNote(t *testing.T) {
	const heading = "Notes for this site ("
	tests := []struct{ url, want string }{
		{"https://github.com/remixproxy/remixproxy/issues", "github"},
		{"https://mail.google.com/mail/u/0/#inbox", "gmail"},
		{"https://www.amazon.de/dp/B000", "amazon"},
		{"https://dashboard.stripe.com/test/payments", "stripe"},
		{"https://secure.chase.com/web/auth", "finance"},
		{"https://bank.github.com/", "github"}, // both github and finance match: the first wins
		{"https://example.com/", ""},
		{"about:blank", ""},
		{"", ""},
	}
	for _, tt := range tests {
		for _, mode := range []Mode{ModeAsk, ModeBuild, ModeAct} {
			p := SystemPrompt(mode, PageInfo{URL: tt.url})
			n := strings.Count(p, heading)
			if tt.want == "" {
				if n != 0 {
					t.Errorf("%s (%s): %d site notes, want none", tt.url, mode, n)
				}
				continue
			}
			if n != 1 || !strings.Contains(p, heading+tt.want+")") {
				t.Errorf("%s (%s): %d site notes, want exactly the %s one", tt.url, mode, n, tt.want)
			}
		}
	}
	// The page-dependent part comes last, so the fixed part is a shared prefix.
	a := SystemPrompt(ModeBuild, PageInfo{URL: "https://github.com/x"})
	b := SystemPrompt(ModeBuild, PageInfo{URL: "https://example.com/"})
	if i := strings.Index(a, "The page: "); i < 0 || a[:i] != b[:i] {
		t.Error("the prompts of two pages differ before the page line")
	}
}
