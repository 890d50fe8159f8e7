package netrules

import (
	"errors"
	"strings"
)

// A urlFilter is Chrome's pattern language for urlFilter:
//
//   - any run of characters (possibly empty)
//     ^   a separator: any character but a letter, digit, '_', '-', '.' or '%'; or the end of the URL
//     |   at the start: the URL starts here; at the end: the URL ends here
//     ||  at the start: a (sub)domain of the URL's host starts here
//
// Anything else is itself. Matching is against the canonical URL (lowercase scheme and host,
// default port left out, no fragment) and, unless the rule says otherwise, ignores case.
type urlFilter struct {
	toks          []ftok
	left, domain  bool // "|" or "||" at the start
	right         bool // "|" at the end
	caseSensitive bool
	// need is the longest literal run, for a quick strings.Contains before matching.
	need string
}

// ftok is one pattern token: a literal byte (kind 0), a separator (1) or a star (2).
type ftok struct {
	kind uint8
	b    byte
}

const (
	tokLit uint8 = iota
	tokSep
	tokStar
)

func compileURLFilter(p string, caseSensitive bool) (*urlFilter, error) {
	if p == "" {
		return nil, errors.New("is empty")
	}
	for i := 0; i < len(p); i++ {
		if p[i] < 0x20 || p[i] > 0x7e {
			return nil, errors.New("must be printable ASCII (write hosts in punycode and percent-encode the rest)")
		}
	}
	f := &urlFilter{caseSensitive: caseSensitive}
	switch {
	case strings.HasPrefix(p, "||"):
		f.domain, p = true, p[2:]
		if strings.HasPrefix(p, "*") {
			return nil, errors.New(`must not start with "||*"; write "*" instead`)
		}
	case strings.HasPrefix(p, "|"):
		f.left, p = true, p[1:]
	}
	if strings.HasSuffix(p, "|") {
		f.right, p = true, p[:len(p)-1]
	}
	if !caseSensitive {
		p = strings.ToLower(p)
	}
	var run, best []byte
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			if n := len(f.toks); n > 0 && f.toks[n-1].kind == tokStar {
				continue // ** is *
			}
			f.toks = append(f.toks, ftok{kind: tokStar})
			run = nil
		case '^':
			f.toks = append(f.toks, ftok{kind: tokSep})
			run = nil
		default:
			f.toks = append(f.toks, ftok{kind: tokLit, b: c})
			run = append(run, c)
			if len(run) > len(best) {
				best = append(best[:0], run...)
			}
		}
	}
	f.need = string(best)
	return f, nil
}

// isSep reports whether c is a separator character for '^'.
func isSep(c byte) bool {
	return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == '%' || c >= 0x80)
}

// match reports whether the filter matches a request URL. u is the canonical URL, lower its
// lowercase form; the host occupies [hostStart, hostEnd) in both.
func (f *urlFilter) match(u, lower string, hostStart, hostEnd int) bool {
	s := lower
	if f.caseSensitive {
		s = u
	}
	if f.need != "" && !strings.Contains(s, f.need) {
		return false
	}
	switch {
	case f.left:
		return f.glob(s)
	case f.domain:
		for i := hostStart; i < hostEnd; i++ {
			if (i == hostStart || s[i-1] == '.') && f.glob(s[i:]) {
				return true
			}
		}
		return false
	default:
		for i := 0; i <= len(s); i++ {
			// Unanchored: the first token must match at i; a leading star matches anywhere.
			if f.glob(s[i:]) {
				return true
			}
			if len(f.toks) > 0 && f.toks[0].kind == tokStar {
				return false
			}
		}
		return false
	}
}

// glob matches the tokens at the start of s: all of s when right-anchored, a prefix otherwise.
// It is the usual two-pointer wildcard match (linear backtracking to the last star), with '^'
// a one-character class that may also match the end of s.
func (f *urlFilter) glob(s string) bool {
	toks := f.toks
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		if pi == len(toks) && !f.right {
			return true // a prefix is enough
		}
		if pi < len(toks) {
			t := toks[pi]
			if t.kind == tokStar {
				star, mark = pi, si
				pi++
				continue
			}
			if t.kind == tokLit && t.b == s[si] || t.kind == tokSep && isSep(s[si]) {
				pi++
				si++
				continue
			}
		}
		if star < 0 {
			return false
		}
		pi = star + 1
		mark++
		si = mark
	}
	for ; pi < len(toks); pi++ {
		if toks[pi].kind == tokLit {
			return false
		}
	}
	return true
}

// anchorHost returns the host of a urlFilter that starts "||host" and ends the host there
// (followed by '^', '/', ':', '?' or the right anchor), lowercased. Such a filter matches only
// requests to that host and its subdomains.
func anchorHost(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "||")
	if !ok {
		return "", false
	}
	i := 0
	for i < len(rest) {
		c := rest[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' {
			i++
			continue
		}
		break
	}
	host := strings.ToLower(strings.Trim(rest[:i], "."))
	if host == "" || i != len(rest) && strings.IndexByte("^/:?|", rest[i]) < 0 {
		return "", false
	}
	if i == len(rest) {
		return "", false // "||example.com" also matches example.company
	}
	if rest[i] == '|' && i != len(rest)-1 {
		return "", false
	}
	return host, true
}
