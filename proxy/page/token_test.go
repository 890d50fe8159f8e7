package page

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTokenRoundTrip: a minted page token verifies to its page's URL, with the MAC the format
// names (HMAC-SHA256 over "v1." and the payload, independent of the pooled MACs); a token signed
// with another secret, a changed payload or signature, and garbage are refused. Minting and
// verifying concurrently (run with -race) share the pool safely.
func TestTokenRoundTrip(t *testing.T) {
	h := New(Config{Secret: []byte("install secret one")})
	other := New(Config{Secret: []byte("install secret two")})
	page, _ := url.Parse("https://shop.example/cart?id=7")
	tok := h.Mint(page, time.Unix(1700000000, 0))

	parts := strings.Split(tok, ".")
	if len(parts) != 3 || parts[0] != tokenVersion {
		t.Fatalf("token %q: want v1.<payload>.<mac>", tok)
	}
	m := hmac.New(sha256.New, []byte("install secret one"))
	m.Write([]byte(tokenVersion + "." + parts[1]))
	if want := base64.RawURLEncoding.EncodeToString(m.Sum(nil)); parts[2] != want {
		t.Errorf("mac = %s, want HMAC-SHA256(secret, \"v1.\"+payload) = %s", parts[2], want)
	}
	if u, err := h.Verify(tok); err != nil || u.String() != page.String() {
		t.Fatalf("Verify = %v, %v; want %s", u, err, page)
	}
	flip := func(s string) string {
		b := []byte(s)
		if b[0] == 'A' {
			b[0] = 'B'
		} else {
			b[0] = 'A'
		}
		return string(b)
	}
	for name, bad := range map[string]string{
		"another install's token": other.Mint(page, time.Unix(1700000000, 0)),
		"payload changed":         parts[0] + "." + flip(parts[1]) + "." + parts[2],
		"signature changed":       parts[0] + "." + parts[1] + "." + flip(parts[2]),
		"no signature":            parts[0] + "." + parts[1],
		"garbage":                 "not a token",
	} {
		if u, err := h.Verify(bad); err == nil {
			t.Errorf("%s: verified to %s, want refused", name, u)
		}
	}

	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 200; j++ {
				p, _ := url.Parse("https://shop.example/p/" + strings.Repeat("x", i+j%7))
				tok := h.Mint(p, time.Now())
				if u, err := h.Verify(tok); err != nil || u.String() != p.String() {
					t.Errorf("concurrent round trip of %s: %v, %v", p, u, err)
					return
				}
				if _, err := other.Verify(tok); err == nil {
					t.Errorf("another install verified %s's token", p)
					return
				}
			}
		}(i)
	}
	wg.Wait()
}

// BenchmarkMint is the page token every injected document carries.
func BenchmarkMint(b *testing.B) {
	h := New(Config{Secret: []byte("install secret")})
	page, _ := url.Parse("https://shop.example/cart?id=7")
	now := time.Now()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.Mint(page, now)
	}
}

// TestMintTokenAgreesWithJSON: the token written in one buffer is, byte for byte, the format's
// spelling — "v1." base64url(json.Marshal(claims)) "." base64url(HMAC) — for addresses
// json.Marshal copies as they are and for those it escapes (HTML characters, quotes,
// backslashes, control characters, non-ASCII, invalid UTF-8).
func TestMintTokenAgreesWithJSON(t *testing.T) {
	h := New(Config{Secret: []byte("install secret")})
	for _, u := range []string{
		"https://shop.example/cart?id=7",
		"http://site.test/",
		"https://a.example/p?q=<script>&x=\"y\"",
		"https://a.example/p\\q",
		"https://a.example/\x01\x7f",
		"https://ü.example/päth",
		"https://a.example/\xff\xfe",
		"https://a.example/\u2028",
		"https://a.example/" + strings.Repeat("long-", 500),
		"",
	} {
		for i, issued := range []int64{0, 1700000000, -5} {
			serial := []uint64{0, 7, 1<<64 - 1}[i]
			payload, err := json.Marshal(tokenClaims{URL: u, Issued: issued, Serial: serial})
			if err != nil {
				t.Fatalf("json.Marshal: %v", err)
			}
			p := base64.RawURLEncoding.EncodeToString(payload)
			m := hmac.New(sha256.New, []byte("install secret"))
			m.Write([]byte(tokenVersion + "." + p))
			want := tokenVersion + "." + p + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
			if got := h.mintToken(u, issued, serial); got != want {
				t.Errorf("mintToken(%q, %d, %d) = %q, want %q", u, issued, serial, got, want)
			}
		}
	}
}
