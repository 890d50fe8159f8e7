package agent

import (
	"embed"
	"net/url"
	"strings"
)

// Site notes (issue 6): short guidance for acting on a few sites where a general agent goes
// wrong or does harm — GitHub, Gmail, Amazon, the Stripe dashboard, and banks and payment
// pages in general. SystemPrompt adds the note of the chat's page, at most one: the first
// matcher in siteNotes that accepts the page's host wins, so the prompt's cost does not grow
// with the number of notes. The notes are remixproxy's own text, embedded in the binary; page
// content never reaches them.

//go:embed sitenotes/*.md
var siteNoteFiles embed.FS

// siteNote is one note: its file under sitenotes/ and the hosts it is for.
type siteNote struct {
	name  string
	match func(host string) bool
}

// siteNotes in order: the first match wins, so specific sites come before the generic
// finance note.
var siteNotes = []siteNote{
	{"github", isGitHub},
	{"gmail", isGmail},
	{"amazon", isAmazonShop},
	{"stripe", isStripeDashboard},
	{"finance", isFinance},
}

// SiteNote is the note for the page at rawURL: its name and text, or "" and "" when no note
// matches (or rawURL is not an http(s) address).
func SiteNote(rawURL string) (name, text string) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return "", ""
	}
	for _, n := range siteNotes {
		if n.match(host) {
			b, err := siteNoteFiles.ReadFile("sitenotes/" + n.name + ".md")
			if err != nil {
				return "", "" // a note listed here and not embedded; TestSiteNotesEmbedded catches it
			}
			return n.name, strings.TrimSpace(string(b))
		}
	}
	return "", ""
}

// hostIs reports whether host is domain or one of its subdomains.
func hostIs(host, domain string) bool {
	return host == domain || strings.HasSuffix(host, "."+domain)
}

func isGitHub(host string) bool { return hostIs(host, "github.com") }

func isGmail(host string) bool { return host == "mail.google.com" }

// isAmazonShop accepts Amazon's shops (amazon.com, www.amazon.co.uk, smile.amazon.de, …) and
// not AWS or other Amazon services, where buying advice would be wrong.
func isAmazonShop(host string) bool {
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if l != "amazon" {
			continue
		}
		if i > 0 && !(i == 1 && (labels[0] == "www" || labels[0] == "smile")) {
			return false
		}
		suffix := labels[i+1:]
		if len(suffix) < 1 || len(suffix) > 2 {
			return false
		}
		for _, s := range suffix { // a public suffix like com, de, co.uk, com.au
			if len(s) < 2 || len(s) > 3 {
				return false
			}
		}
		return true
	}
	return false
}

func isStripeDashboard(host string) bool { return host == "dashboard.stripe.com" }

// financeDomains are banks, brokers, exchanges and payment services whose names do not say
// "bank"; each matches itself and its subdomains.
var financeDomains = []string{
	"paypal.com", "paypal.me", "venmo.com", "cash.app", "wise.com", "revolut.com", "monzo.com",
	"n26.com", "chase.com", "wellsfargo.com", "citi.com", "citibank.com", "capitalone.com",
	"americanexpress.com", "discover.com", "usaa.com", "schwab.com", "fidelity.com",
	"vanguard.com", "etrade.com", "robinhood.com", "coinbase.com", "kraken.com", "binance.com",
	"klarna.com", "afterpay.com", "squareup.com", "zellepay.com", "hsbc.com", "hsbc.co.uk",
	"barclays.co.uk", "lloydsbank.com", "natwest.com", "santander.com", "ing.com", "ing.de",
	"sparkasse.de", "comdirect.de", "ubs.com", "checkout.stripe.com", "buy.stripe.com",
	"billing.stripe.com", "pay.google.com", "payments.google.com",
}

// financePrefixes are first labels of payment pages on any site (pay.example.com).
var financePrefixes = []string{"pay", "payment", "payments", "checkout", "billing", "banking", "onlinebanking", "netbanking"}

// isFinance accepts banks (any label containing "bank": mybank.com, bankofamerica.com,
// online.example.bank), credit unions, the payment and trading services in financeDomains, and
// payment subdomains of any site.
func isFinance(host string) bool {
	labels := strings.Split(host, ".")
	for _, l := range labels {
		if strings.Contains(l, "bank") || strings.Contains(l, "creditunion") {
			return true
		}
	}
	for _, d := range financeDomains {
		if hostIs(host, d) {
			return true
		}
	}
	if len(labels) > 2 {
		for _, p := range financePrefixes {
			if labels[0] == p {
				return true
			}
		}
	}
	return false
}
