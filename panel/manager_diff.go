package panel

import "unicode/utf8"

// maxDiffCells bounds the LCS table of LineDiff; beyond it the changed middle is shown as all
// removed then all added.
const maxDiffCells = 4 << 20

// LineDiff returns a line diff from a to b: the longest common subsequence of lines kept, the
// rest marked removed ('-') or added ('+'). Common leading and trailing lines are matched first,
// so a small edit in a large file stays cheap.
func LineDiff(a, b string) []DiffLine {
	al, bl := splitLines(a), splitLines(b)
	var out []DiffLine
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		out = append(out, DiffLine{Op: ' ', Text: al[pre]})
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	out = append(out, lcsDiff(al[pre:len(al)-suf], bl[pre:len(bl)-suf])...)
	for _, l := range al[len(al)-suf:] {
		out = append(out, DiffLine{Op: ' ', Text: l})
	}
	return out
}

// splitLines splits s at every line terminator JavaScript has ("\n", "\r\n", a lone "\r",
// U+2028 and U+2029; CSS's are among them but "\f", which ends no comment). A line the diff
// showed whole but the sandbox reads as two could hide code after a "//" comment: the person
// would read a comment where the parser reads a call.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch r {
		case '\n', '\u2028', '\u2029':
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				size = 2
			}
		default:
			i += size
			continue
		}
		out = append(out, s[start:i])
		i += size
		start = i
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func lcsDiff(a, b []string) []DiffLine {
	var out []DiffLine
	if len(a)*len(b) > maxDiffCells {
		for _, l := range a {
			out = append(out, DiffLine{Op: '-', Text: l})
		}
		for _, l := range b {
			out = append(out, DiffLine{Op: '+', Text: l})
		}
		return out
	}
	// n[i][j] is the LCS length of a[i:] and b[j:].
	w := len(b) + 1
	n := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				n[i*w+j] = n[(i+1)*w+j+1] + 1
			} else {
				n[i*w+j] = max(n[(i+1)*w+j], n[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			out = append(out, DiffLine{Op: ' ', Text: a[i]})
			i++
			j++
		case n[(i+1)*w+j] >= n[i*w+j+1]:
			out = append(out, DiffLine{Op: '-', Text: a[i]})
			i++
		default:
			out = append(out, DiffLine{Op: '+', Text: b[j]})
			j++
		}
	}
	for ; i < len(a); i++ {
		out = append(out, DiffLine{Op: '-', Text: a[i]})
	}
	for ; j < len(b); j++ {
		out = append(out, DiffLine{Op: '+', Text: b[j]})
	}
	return out
}
