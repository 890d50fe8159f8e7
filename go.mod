module github.com/remixproxy/remixproxy

go 1.26.0

require (
	github.com/andybalholm/brotli v1.3.0
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/coder/websocket v1.8.15
	github.com/elazarl/goproxy v1.9.3
	github.com/klauspost/compress v1.20.4
	github.com/mccutchen/go-httpbin/v2 v2.26.0
	github.com/smallstep/truststore v0.13.0
	github.com/tdewolff/minify/v2 v2.24.25
	golang.org/x/net v0.62.0
	golang.org/x/text v0.43.0
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/tdewolff/parse/v2 v2.8.20 // indirect
	howett.net/plist v1.0.0 // indirect
)
