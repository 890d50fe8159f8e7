package page

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestSessionRecordBounds(t *testing.T) {
	var r sessionRecord
	for i := 0; i < 3*maxRecordedPerPage; i++ {
		r.add(RecordedResponse{URL: fmt.Sprint("https://x/", i), Body: "{}"})
	}
	if len(r.list) != maxRecordedPerPage || r.list[0].URL != fmt.Sprint("https://x/", 2*maxRecordedPerPage) {
		t.Errorf("kept %d, first %s", len(r.list), r.list[0].URL)
	}
	var big sessionRecord
	body := strings.Repeat("y", maxRecordedBody)
	for i := 0; i < 40; i++ {
		big.add(RecordedResponse{URL: "u", Body: body})
	}
	if big.bytes > maxRecordedTotal || len(big.list) != maxRecordedTotal/(maxRecordedBody+1) {
		t.Errorf("kept %d responses, %d bytes (limit %d)", len(big.list), big.bytes, maxRecordedTotal)
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
	h.dataOpened("sess-1", "https://shop.test/list")
	got := h.Responses("sess-1")
	if len(got) != maxRecordedPerPage || got[0].URL != "https://shop.test/api/5" {
		first := ""
		if len(got) > 0 {
			first = got[0].URL
		}
		t.Errorf("the session got %d responses from before it connected, the first %q; want the last %d, from https://shop.test/api/5", len(got), first, maxRecordedPerPage)
	}
}
