package page

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestSessionRecordBounds(t *testing.T) {
	var r sessionRecord
	for i := 0; i < 3*maxRecordedPerPage; i++ {
		r.Add(RecordedResponse{URL: fmt.Sprint("https://x/", i), Body: "{}"}, recordLimits)
	}
	if len(r.Items) != maxRecordedPerPage || r.Items[0].URL != fmt.Sprint("https://x/", 2*maxRecordedPerPage) {
		t.Errorf("kept %d, first %s", len(r.Items), r.Items[0].URL)
	}
	var big sessionRecord
	body := strings.Repeat("y", maxRecordedBody)
	for i := 0; i < 40; i++ {
		big.Add(RecordedResponse{URL: "u", Body: body}, recordLimits)
	}
	if big.Bytes > maxRecordedTotal || len(big.Items) != maxRecordedTotal/(maxRecordedBody+1) {
		t.Errorf("kept %d responses, %d bytes (limit %d)", len(big.Items), big.Bytes, maxRecordedTotal)
	}
}

// TestResponsesBeforeConnectAreKept: the JSON responses a page loads before its agent connects
// (after the page's load, on most pages) wait for it, up to a page's whole record, and are the
// session's when it opens; the oldest go beyond that.
func TestResponsesBeforeConnectAreKept(t *testing.T) {
	h := New(Config{Secret: []byte("k")})
	page, _ := url.Parse("https://shop.test/list")
	for i := 0; i < maxRecordedPerPage+5; i++ {
		h.attach(page, RecordedResponse{URL: fmt.Sprint("https://shop.test/api/", i), Body: "{}"})
	}
	h.dataOpened("sess-1", "https://shop.test/list", "https://shop.test")
	got := h.Responses("sess-1")
	if len(got) != maxRecordedPerPage || got[0].URL != "https://shop.test/api/5" {
		first := ""
		if len(got) > 0 {
			first = got[0].URL
		}
		t.Errorf("the session got %d responses from before it connected, the first %q; want the last %d, from https://shop.test/api/5", len(got), first, maxRecordedPerPage)
	}
}

// TestOriginRefererResponsesWaitForTheOrigin: another origin's answers a page loads before its
// agent connects carry only the page's origin as Referer (the default referrer policy); they
// are the first session of that origin's when it opens, not left waiting for a page at "/".
func TestOriginRefererResponsesWaitForTheOrigin(t *testing.T) {
	h := New(Config{Secret: []byte("k")})
	origin, _ := url.Parse("https://shop.test/")
	h.attach(origin, RecordedResponse{URL: "https://api.shop-cdn.test/prices", Body: "{}"})
	other, _ := url.Parse("https://news.test/")
	h.attach(other, RecordedResponse{URL: "https://api.news-cdn.test/x", Body: "{}"})
	h.dataOpened("s", "https://shop.test/cart?id=7", "https://shop.test")
	if got := h.Responses("s"); len(got) != 1 || got[0].URL != "https://api.shop-cdn.test/prices" {
		t.Errorf("the shop page got %v, want the answer its origin's Referer named", got)
	}
	if n := len(h.data.unclaimed); n != 1 {
		t.Errorf("%d responses wait, want the other origin's one", n)
	}
}

// TestUnclaimedBoundsArePerPage: pages loading at once keep their waiting responses apart (one
// page's many fetches do not push out another's), each within a session's bounds, all of them
// within maxUnclaimed and maxUnclaimedBytes, and what is past unclaimedTTL goes.
func TestUnclaimedBoundsArePerPage(t *testing.T) {
	h := New(Config{Secret: []byte("k")})
	a, _ := url.Parse("https://shop.test/a")
	b, _ := url.Parse("https://news.test/b")
	for i := 0; i < maxRecordedPerPage; i++ {
		h.attach(a, RecordedResponse{URL: fmt.Sprint("https://shop.test/api/", i), Body: "{}"})
		h.attach(b, RecordedResponse{URL: fmt.Sprint("https://news.test/api/", i), Body: "{}"})
	}
	for i := maxRecordedPerPage; i < maxRecordedPerPage+5; i++ {
		h.attach(a, RecordedResponse{URL: fmt.Sprint("https://shop.test/api/", i), Body: "{}"})
	}
	if n := len(h.data.unclaimed); n != 2*maxRecordedPerPage {
		t.Errorf("two pages fetched %d and %d responses: %d wait, want a session's %d each", maxRecordedPerPage+5, maxRecordedPerPage, n, maxRecordedPerPage)
	}
	h.dataOpened("b", "https://news.test/b", "https://news.test")
	h.dataOpened("a", "https://shop.test/a", "https://shop.test")
	if got := h.Responses("b"); len(got) != maxRecordedPerPage || got[0].URL != "https://news.test/api/0" {
		t.Errorf("page b got %d of its %d responses (first %v): page a's fetches pushed them out", len(got), maxRecordedPerPage, firstURL(got))
	}
	if got := h.Responses("a"); len(got) != maxRecordedPerPage || got[0].URL != "https://shop.test/api/5" {
		t.Errorf("page a got %d responses, the first %v; want its last %d, from https://shop.test/api/5", len(got), firstURL(got), maxRecordedPerPage)
	}
	checkUnclaimedBytes(t, h)

	// One page's bytes: a session's byte bound.
	big := strings.Repeat("y", maxRecordedBody)
	for i := 0; i < 40; i++ {
		h.attach(a, RecordedResponse{URL: "u", Body: big})
	}
	if n := len(h.data.unclaimed); n != maxRecordedTotal/(maxRecordedBody+1) {
		t.Errorf("one page's 40 responses of %d bytes: %d wait, want %d (maxRecordedTotal)", maxRecordedBody, n, maxRecordedTotal/(maxRecordedBody+1))
	}
	checkUnclaimedBytes(t, h)

	// All pages: the oldest go first beyond maxUnclaimed.
	h = New(Config{Secret: []byte("k")})
	pages := maxUnclaimed/maxRecordedPerPage + 2
	for p := 0; p < pages; p++ {
		u, _ := url.Parse(fmt.Sprint("https://site", p, ".test/"))
		for i := 0; i < maxRecordedPerPage; i++ {
			h.attach(u, RecordedResponse{URL: fmt.Sprint("https://site", p, ".test/api/", i), Body: "{}"})
		}
	}
	if n := len(h.data.unclaimed); n != maxUnclaimed || h.data.unclaimed[0].referer != "https://site2.test/" {
		t.Errorf("%d pages of %d responses: %d wait, the oldest from %q; want %d, from https://site2.test/", pages, maxRecordedPerPage, n, h.data.unclaimed[0].referer, maxUnclaimed)
	}
	checkUnclaimedBytes(t, h)

	// Past unclaimedTTL: gone at the next response.
	for i := range h.data.unclaimed {
		h.data.unclaimed[i].at = h.data.unclaimed[i].at.Add(-unclaimedTTL - time.Second)
	}
	h.attach(a, RecordedResponse{URL: "https://shop.test/api/late", Body: "{}"})
	if n := len(h.data.unclaimed); n != 1 {
		t.Errorf("after unclaimedTTL, %d responses still wait, want only the new one", n)
	}
	checkUnclaimedBytes(t, h)
}

func checkUnclaimedBytes(t *testing.T, h *Hub) {
	t.Helper()
	sum := 0
	for _, u := range h.data.unclaimed {
		sum += u.rec.size()
	}
	if sum != h.data.unclaimedBytes {
		t.Errorf("unclaimedBytes = %d, the waiting responses hold %d", h.data.unclaimedBytes, sum)
	}
	if h.data.unclaimedBytes > maxUnclaimedBytes {
		t.Errorf("%d bytes wait, over maxUnclaimedBytes (%d)", h.data.unclaimedBytes, maxUnclaimedBytes)
	}
}

func firstURL(rs []RecordedResponse) string {
	if len(rs) == 0 {
		return "(none)"
	}
	return rs[0].URL
}

// TestRecordsAreBoundedForAllSessions: a site whose pages open sessions from many subdomains,
// each with a whole page's record, is bounded by maxRecordedAll, not by the browser's socket
// limit, and loses its own oldest responses first: another site's page keeps its record.
func TestRecordsAreBoundedForAllSessions(t *testing.T) {
	h := New(Config{Secret: []byte("k")})
	body := strings.Repeat("y", maxRecordedBody-100)
	fill := func(id, pageURL, origin string) {
		p, _ := url.Parse(pageURL)
		for i := 0; i < maxRecordedTotal/maxRecordedBody; i++ {
			h.attach(p, RecordedResponse{URL: fmt.Sprint(pageURL, "/api/", i), Body: body})
		}
		h.dataOpened(id, pageURL, origin)
	}
	fill("shop", "https://shop.test/cart", "https://shop.test")
	kept := len(h.Responses("shop"))
	for i := range 300 { // 150 MiB without the bound
		fill(fmt.Sprint("evil-", i), fmt.Sprintf("https://s%d.evil.test/p", i), fmt.Sprintf("https://s%d.evil.test", i))
	}
	h.data.mu.Lock()
	total, sum := h.data.total, 0
	for _, r := range h.data.bySession {
		sum += r.Bytes
	}
	h.data.mu.Unlock()
	if total != sum || sum > maxRecordedAll || sum > 32*maxRecordedTotal {
		t.Errorf("the records hold %d MiB (counted %d bytes), want at most %d MiB", sum>>20, total, min(maxRecordedAll, 32*maxRecordedTotal)>>20)
	}
	if got := len(h.Responses("shop")); got != kept || kept == 0 {
		t.Errorf("the other site's page kept %d of its %d responses", got, kept)
	}
	for i := range 300 {
		h.dataGone(fmt.Sprint("evil-", i))
	}
	h.dataGone("shop")
	if h.data.total != 0 {
		t.Errorf("%d bytes counted after every session went", h.data.total)
	}
}
