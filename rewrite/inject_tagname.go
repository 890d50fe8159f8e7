package rewrite

// The injector classifies every tag of the head by name. html.Tokenizer.TagName copies the name
// to replace NUL bytes and lower-case it, and the injector then made a string of it: two
// allocations per tag. tagName reads the name from the token's raw bytes instead and returns
// one of a fixed set of strings for the names the injector looks at, with TagName's answer only
// for names it cannot read that way.

// maxKnownTagName is the longest name in knownTagName.
const maxKnownTagName = len("plaintext")

// tagName is the lower-cased name of the current start or end tag, whose raw bytes are raw, as
// html.Tokenizer.TagName gives it (TestTagNameAgreesWithTokenizer). It asks the tokenizer at
// most once per token.
func (in *Injector) tagName(raw []byte) string {
	if name, ok := rawTagName(raw); ok {
		return name
	}
	name, _ := in.z.TagName()
	return string(name)
}

// rawTagName reads a start or end tag's name from its raw bytes, lower-cased, when it is one of
// the names knownTagName holds; ok is false for any other name.
func rawTagName(raw []byte) (name string, ok bool) {
	i := 1 // after '<'
	if len(raw) > 1 && raw[1] == '/' {
		i = 2
	}
	var buf [maxKnownTagName]byte
	n := 0
	for ; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == '/' || c == '>':
			return knownTagName(buf[:n])
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-':
		default:
			return "", false // NUL, non-ASCII, …: the tokenizer's own reading
		}
		if n == len(buf) {
			return "", false
		}
		buf[n] = c
		n++
	}
	return knownTagName(buf[:n])
}

// knownTagName is name as one of the strings the injector compares tag names with, without
// allocating (a switch on string(name) does not copy); ok is false for other names.
func knownTagName(name []byte) (string, bool) {
	switch string(name) {
	case "html":
		return "html", true
	case "head":
		return "head", true
	case "body":
		return "body", true
	case "br":
		return "br", true
	case "meta":
		return "meta", true
	case "script":
		return "script", true
	case "title":
		return "title", true
	case "link":
		return "link", true
	case "style":
		return "style", true
	case "base":
		return "base", true
	case "basefont":
		return "basefont", true
	case "bgsound":
		return "bgsound", true
	case "noframes":
		return "noframes", true
	case "noscript":
		return "noscript", true
	case "template":
		return "template", true
	case "svg":
		return "svg", true
	case "math":
		return "math", true
	case "iframe":
		return "iframe", true
	case "noembed":
		return "noembed", true
	case "plaintext":
		return "plaintext", true
	case "textarea":
		return "textarea", true
	case "xmp":
		return "xmp", true
	}
	return "", false
}
