package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestDefaultPage: the built-in page keeps the shape the package doc promises (the corpus's
// median size and <h1> offset), and is the same bytes every time.
func TestDefaultPage(t *testing.T) {
	p := defaultPage(25 << 10)
	if p != defaultPage(25<<10) {
		t.Fatal("defaultPage differs between calls; want the same bytes every run")
	}
	if n := len(p); n < 100<<10 || n > 115<<10 {
		t.Errorf("page size %d bytes, want about 107 KB", n)
	}
	h1 := strings.Index(p, "<h1>")
	if h1 < 24<<10 || h1 > 27<<10 {
		t.Errorf("<h1> at byte %d, want about 25 KB", h1)
	}
	if strings.Count(p, "<h1") != 1 {
		t.Errorf("%d <h1> elements, want 1", strings.Count(p, "<h1"))
	}
	deep := defaultPage(61 << 10)
	if h1 := strings.Index(deep, "<h1>"); h1 < 61<<10 || h1 > 63<<10 {
		t.Errorf("with --h1-at 61: <h1> at byte %d, want about 61 KiB", h1)
	}
}

// TestServePage: both deliveries send the page's exact bytes; the streamed one in pieces.
func TestServePage(t *testing.T) {
	page := defaultPage(25 << 10)
	for _, d := range []string{deliveryWhole, deliveryStream} {
		t.Run(d, func(t *testing.T) {
			rec := &writeCounter{ResponseRecorder: httptest.NewRecorder()}
			servePage(rec, page, d)
			if got := rec.Body.String(); got != page {
				t.Errorf("body %d bytes, want the page's %d", len(got), len(page))
			}
			want := 1
			if d == deliveryStream {
				want = 1 + (len(page)-streamFirst+streamPiece-1)/streamPiece
			}
			if rec.writes != want {
				t.Errorf("%d writes, want %d", rec.writes, want)
			}
		})
	}
}

type writeCounter struct {
	*httptest.ResponseRecorder
	writes int
}

func (w *writeCounter) Write(b []byte) (int, error) { w.writes++; return w.ResponseRecorder.Write(b) }

var _ http.Flusher = (*writeCounter)(nil)
