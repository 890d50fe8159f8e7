package main

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// The built-in test page is shaped like the middle of the project's corpus of real pages
// (../shared/corpus/pages: median size 107 KB, median offset of the first <h1> 25 KB): a <head>
// with the site's stylesheet and a parser-blocking script of its own (both cacheable), an inline
// style block and an inline data script; a header whose navigation menu holds large drop-down
// lists (hidden until hovered, so the header stays one line high); the <h1> at about h1At bytes
// (--h1-at; 25 KiB by default), in view at the top of the page; an article of ordinary paragraphs
// to at least 105 KiB in all; an inline script at the end. Its text is generated from a fixed
// seed, so every run serves the same bytes.
func defaultPage(h1At int) string {
	rng := rand.New(rand.NewPCG(14, 14))
	words := strings.Fields("the a proxy page browser remix sandbox heading article reader city council market river " +
		"train morning evening report people said would could system network person change story local weather " +
		"season new old long short road school water price energy house garden music film game club team")
	sentence := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.IntN(len(words))]
		}
		s := strings.Join(w, " ")
		return strings.ToUpper(s[:1]) + s[1:] + "."
	}
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A long article</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/site.css">
<script src="/app.js"></script>
<style>
`)
	for i := 0; b.Len() < 6<<10; i++ {
		fmt.Fprintf(&b, ".c%d { margin: %dpx %dpx; color: #%06x }\n", i, i%13, i%7, rng.IntN(1<<24))
	}
	b.WriteString("</style>\n<script>window.__DATA__ = [")
	for start := b.Len(); b.Len()-start < 8<<10; {
		fmt.Fprintf(&b, "{\"id\":%d,\"title\":%q},", rng.IntN(1e6), sentence(6))
	}
	b.WriteString("{}];</script>\n</head>\n<body>\n<header><nav><ul class=\"menu\">\n")
	for i := 0; b.Len() < h1At; i++ {
		fmt.Fprintf(&b, "<li><a href=\"/section/%d\">%s</a><ul class=\"sub\">\n", i, words[i%len(words)])
		for j := 0; j < 30 && b.Len() < h1At; j++ {
			fmt.Fprintf(&b, "<li class=\"c%d\"><a href=\"/section/%d/%d\">%s</a></li>\n", j, i, j, sentence(3))
		}
		b.WriteString("</ul></li>\n")
	}
	b.WriteString("</ul></nav></header>\n<main>\n<h1>The headline a remixlet changes</h1>\n")
	fmt.Fprintf(&b, "<p class=\"lede\">%s</p>\n<article>\n", sentence(30))
	for b.Len() < max(105<<10, h1At+20<<10) {
		fmt.Fprintf(&b, "<p>%s %s %s</p>\n", sentence(12+rng.IntN(10)), sentence(8+rng.IntN(10)), sentence(10+rng.IntN(10)))
	}
	b.WriteString(`</article>
</main>
<footer>Footer text.</footer>
<script>document.documentElement.dataset.paragraphs = String(document.querySelectorAll('p').length);</script>
</body></html>
`)
	return b.String()
}

// Deliveries of the page: at once (loopback: the whole page is there as soon as it is asked
// for), or streamed as over a network.
const (
	deliveryWhole  = "whole"
	deliveryStream = "stream"
)

// Streamed delivery: the first 14 KiB at once (a TCP initial window of ten segments), then
// 4 KiB every 10 ms (about 3.3 Mbit/s), each piece flushed.
const (
	streamFirst = 14 << 10
	streamPiece = 4 << 10
	streamEvery = 10 * time.Millisecond
)

// servePage writes page with the given delivery.
func servePage(w http.ResponseWriter, page, delivery string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if delivery != deliveryStream {
		w.Write([]byte(page))
		return
	}
	fl, _ := w.(http.Flusher)
	for off, n := 0, streamFirst; off < len(page); off, n = off+n, streamPiece {
		if off > 0 {
			time.Sleep(streamEvery)
		}
		end := min(off+n, len(page))
		if _, err := w.Write([]byte(page[off:end])); err != nil {
			return
		}
		if fl != nil {
			fl.Flush()
		}
	}
}

// deliveryWords name the deliveries in the tables.
var deliveryWords = map[string]string{
	deliveryWhole:  "at once (loopback)",
	deliveryStream: "as over a network (14 KiB, then 4 KiB every 10 ms)",
}
