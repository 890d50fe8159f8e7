package redact

import "strings"

// RedactPageLines is RedactPage for the lines of one text that a tool shows only in part (find
// shows the lines of the page's outline that match, with their ancestors): each line as
// RedactPage leaves it, except that a line a secret spanning lines covers in the whole text
// (a private key block whose first line, "-----BEGIN … PRIVATE KEY-----", is another line: a
// block written across elements) becomes the key's marker, kept after the line's indentation.
// The lines shown alone would lose their context: a body line of the block is no format the
// redaction knows.
func (r *Redactor) RedactPageLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = r.RedactPage(l)
	}
	whole := strings.Join(lines, "\n")
	spans := pemSpans(whole)
	if len(spans) == 0 {
		return out
	}
	at := 0 // where line i starts in whole
	k := 0  // the first span that may still cover a line
	for i, l := range lines {
		end := at + len(l)
		for k < len(spans) && spans[k][1] <= at {
			k++
		}
		// A line the block covers past its first line: the first line is redacted as it is.
		if k < len(spans) && spans[k][0] < at && spans[k][1] > at {
			rest := strings.TrimLeft(l, " ")
			out[i] = l[:len(l)-len(rest)] + marker(KindKey)
		}
		at = end + 1
	}
	return out
}
