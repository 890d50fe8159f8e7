package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/remixproxy/remixproxy/e2e/e2etest"
)

// corpusDir holds real-world page captures (see its README), relative to this package.
var corpusDir = sharedCorpusFile("pages")

// Bounds for one corpus page (timeouts, not speed assertions).
const (
	corpusNavigateTimeout  = 20 * time.Second
	corpusConnectedTimeout = 10 * time.Second
)

// corpusSite serves the corpus pages as https://corpus.test/NAME.html, without a charset in the
// header (the pages declare their own).
func corpusSite() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := filepath.Base(r.URL.Path)
		if !strings.HasSuffix(name, ".html") || name != strings.TrimPrefix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join(corpusDir, name))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write(b)
	})
}

// onlyCorpus blocks every request but those to corpus.test and the proxy's own host, so the
// pages' third-party subresources fail at once in both modes.
var onlyCorpus = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	_, err := cdp.Call(ctx, t, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: []*network.BlockPattern{
		{URLPattern: "*://corpus.test/*", Block: false},
		{URLPattern: "*://remix.proxy/*", Block: false},
		{URLPattern: "*://*/*", Block: true},
	}})
	return err
})

type corpusRead struct {
	title, text string
	err         error
}

func readCorpusPage(tab *e2etest.Tab, url string, waitAgent bool) corpusRead {
	if _, err := tab.NavigateErr(url); err != nil {
		return corpusRead{err: fmt.Errorf("loading: %w", err)}
	}
	if waitAgent {
		if err := tab.WaitConnectedErr(corpusConnectedTimeout); err != nil {
			return corpusRead{err: err}
		}
	}
	v, err := e2etest.EvalE[[]string](tab, `[document.title, document.body ? document.body.innerText : '']`)
	if err != nil {
		return corpusRead{err: fmt.Errorf("reading: %w", err)}
	}
	return corpusRead{title: v[0], text: normalizeText(v[1])}
}

// longNumber matches the timestamps and random cache-busters some pages' scripts write.
var longNumber = regexp.MustCompile(`[0-9]{9,}`)

// normalizeText collapses whitespace and masks long numbers, so two loads of a page compare equal
// unless the proxy changed what the page shows.
func normalizeText(s string) string {
	return longNumber.ReplaceAllString(strings.Join(strings.Fields(s), " "), "#")
}

func TestCorpus(t *testing.T) {
	names, err := filepath.Glob(filepath.Join(corpusDir, "*.html"))
	if err != nil || len(names) == 0 {
		noCorpus(t, "no corpus pages in %s (the shared corpus is not checked out here; see ../shared/corpus/README.md)", corpusDir)
	}
	dtab, ptab := world.DirectTab(t), world.ProxiedTab(t)
	for _, tab := range []*e2etest.Tab{dtab, ptab} {
		tab.NavigateTimeout = corpusNavigateTimeout
		ctx, cancel := context.WithTimeout(tab.Context(), 10*time.Second)
		if err := chromedp.Do(ctx, onlyCorpus); err != nil {
			t.Fatalf("%s: blocking third-party requests: %v", tab.Browser().Name(), err)
		}
		cancel()
	}
	for _, path := range names {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".html"), func(t *testing.T) {
			url := "https://corpus.test/" + name
			directc := make(chan corpusRead, 1)
			go func() { directc <- readCorpusPage(dtab, url, false) }()
			proxied := readCorpusPage(ptab, url, true)
			direct := <-directc
			if direct.err != nil {
				t.Fatalf("direct: %v", direct.err)
			}
			if proxied.err != nil {
				t.Fatalf("through the proxy: %v", proxied.err)
			}
			if proxied.title != direct.title {
				t.Errorf("title: proxied %q, direct %q", proxied.title, direct.title)
			}
			if proxied.text != direct.text {
				t.Errorf("body text differs (whitespace normalized): %s", firstDifference(direct.text, proxied.text))
			}
		})
	}
}

// firstDifference shows where two texts part, with some context.
func firstDifference(want, got string) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	from := max(0, i-60)
	return fmt.Sprintf("at byte %d of %d (direct) / %d (proxied):\ndirect:  …%q…\nproxied: …%q…",
		i, len(want), len(got), want[from:min(len(want), i+100)], got[from:min(len(got), i+100)])
}
