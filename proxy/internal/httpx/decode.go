package httpx

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
)

// DecodeBody returns body decoded from the Content-Encoding codings (applied in the order
// listed, so decoded in reverse). Closing the result closes every decoder and body. An unknown
// coding is an error: the response then passes through untouched.
func DecodeBody(body io.ReadCloser, contentEncoding string) (io.ReadCloser, error) {
	var codings []string
	for _, c := range strings.Split(contentEncoding, ",") {
		if c = strings.ToLower(strings.TrimSpace(c)); c != "" && c != "identity" {
			codings = append(codings, c)
		}
	}
	if len(codings) > 3 {
		return nil, fmt.Errorf("decoding body: %d codings stacked", len(codings))
	}
	for _, c := range codings {
		switch c {
		case "gzip", "x-gzip", "deflate", "br", "zstd":
		default:
			return nil, fmt.Errorf("decoding body: unsupported Content-Encoding %q", c)
		}
	}
	d := &decodedBody{closers: []io.Closer{body}}
	var r io.Reader = body
	for i := len(codings) - 1; i >= 0; i-- {
		r = d.wrap(codings[i], r)
	}
	d.r = r
	return d, nil
}

// decodedBody reads through a chain of lazily started decoders.
type decodedBody struct {
	r       io.Reader
	closers []io.Closer
}

func (d *decodedBody) Read(p []byte) (int, error) { return d.r.Read(p) }

func (d *decodedBody) Close() error {
	var errs []error
	for i := len(d.closers) - 1; i >= 0; i-- {
		errs = append(errs, d.closers[i].Close())
	}
	return errors.Join(errs...)
}

// wrap returns a reader that decodes coding from r. Decoders are created on first Read, so a
// header that cannot be read shows as a read error on the body, not a failure here.
func (d *decodedBody) wrap(coding string, r io.Reader) io.Reader {
	return &lazyReader{open: func() (io.Reader, error) {
		switch coding {
		case "gzip", "x-gzip":
			zr, err := gzip.NewReader(r)
			if err != nil {
				return nil, fmt.Errorf("decoding gzip body: %w", err)
			}
			d.closers = append(d.closers, zr)
			return zr, nil
		case "deflate":
			// "deflate" is zlib-wrapped by the standard, raw deflate by some servers; browsers take both.
			br := bufio.NewReader(r)
			head, _ := br.Peek(2)
			if len(head) == 2 && head[0]&0x0f == 8 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
				zr, err := zlib.NewReader(br)
				if err != nil {
					return nil, fmt.Errorf("decoding deflate body: %w", err)
				}
				d.closers = append(d.closers, zr)
				return zr, nil
			}
			fr := flate.NewReader(br)
			d.closers = append(d.closers, fr)
			return fr, nil
		case "br":
			return brotli.NewReader(r), nil
		case "zstd":
			// Browsers decode zstd with at most an 8 MiB window; so does the proxy, and its
			// decoders' windows come from one budget (zstd.go).
			zr, release, err := openZstd(r)
			if err != nil {
				return nil, err
			}
			d.closers = append(d.closers, closerFunc(func() error { zr.Close(); release(); return nil }))
			return zr, nil
		}
		return nil, fmt.Errorf("decoding body: unsupported coding %q", coding)
	}}
}

type lazyReader struct {
	open func() (io.Reader, error)
	r    io.Reader
	err  error
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.open()
	}
	if l.err != nil {
		return 0, l.err
	}
	return l.r.Read(p)
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }
