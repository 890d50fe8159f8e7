package panel

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CodeDiff is one file's change on an activation card: the lines that changed, with a little
// context, within the card's bounds. The text is code the agent wrote: the panel and the
// confirmation window show it as data, apart from the proxy's words.
type CodeDiff struct {
	File    string     `json:"file"`
	Added   int        `json:"added"`   // lines added in all
	Removed int        `json:"removed"` // lines removed in all
	Lines   []CodeLine `json:"lines"`
	// Cut counts the added and removed lines not shown, or not in full, because a card's bound
	// was reached; the manager's history has the whole change.
	Cut int `json:"cut,omitempty"`
}

// CodeLine is one line of a CodeDiff.
type CodeLine struct {
	// Op is DiffAdded, DiffRemoved, DiffContext, or DiffGap for a run of unchanged lines left
	// out (Text then says how many).
	Op   string `json:"op"`
	Text string `json:"text"`
}

// The ops of a CodeLine.
const (
	DiffAdded   = "+"
	DiffRemoved = "-"
	DiffContext = " "
	DiffGap     = "~"
)

// Bounds of CardDiffs.
const (
	// MaxCardDiffLines is how many lines (changed, context and gaps) a card's diffs hold in all.
	MaxCardDiffLines = 400
	// MaxCardDiffLineChars is how many characters of one line are shown (the windows wrap long
	// lines); a longer line says how many characters it leaves out and counts as cut.
	MaxCardDiffLineChars = 2000
	// maxCardDiffBlanks is the longest run of spaces and tabs shown as it is; a longer run is
	// shown as its length, so padding cannot push code out of sight or past the bound.
	maxCardDiffBlanks = 16
	// cardDiffContext is how many unchanged lines are shown around a change.
	cardDiffContext = 2
)

// CardDiffs returns the diffs of the named files from old to next (nil old: a new remixlet, all
// added), skipping files that did not change, within MaxCardDiffLines in all. Characters that
// would make the code look other than it is — control and invisible format characters such as
// bidirectional overrides — are shown as their code point ("<U+202E>").
func CardDiffs(old, next map[string][]byte, files []string) []CodeDiff {
	var out []CodeDiff
	budget := MaxCardDiffLines
	for _, name := range files {
		a, b := string(old[name]), string(next[name])
		if strings.TrimSpace(a) == strings.TrimSpace(b) {
			continue
		}
		lines := LineDiff(a, b)
		d := CodeDiff{File: name}
		for _, l := range lines {
			switch l.Op {
			case '+':
				d.Added++
			case '-':
				d.Removed++
			}
		}
		d.Lines, d.Cut = hunks(lines, &budget)
		out = append(out, d)
	}
	return out
}

// hunks keeps the changed lines of a diff with cardDiffContext lines around them, replacing
// longer unchanged runs by a gap line, while *budget lasts; cut counts the changed lines left
// out.
func hunks(lines []DiffLine, budget *int) (out []CodeLine, cut int) {
	near := make([]bool, len(lines)) // a changed line or within cardDiffContext of one
	for i, l := range lines {
		if l.Op == ' ' {
			continue
		}
		for j := max(0, i-cardDiffContext); j <= min(len(lines)-1, i+cardDiffContext); j++ {
			near[j] = true
		}
	}
	gap := 0
	flushGap := func() {
		if gap > 0 && *budget > 0 {
			out = append(out, CodeLine{Op: DiffGap, Text: fmt.Sprintf("%d unchanged lines", gap)})
			*budget--
		}
		gap = 0
	}
	for i, l := range lines {
		if !near[i] {
			gap++
			continue
		}
		flushGap()
		if *budget <= 0 {
			if l.Op != ' ' {
				cut++
			}
			continue
		}
		op := DiffContext
		switch l.Op {
		case '+':
			op = DiffAdded
		case '-':
			op = DiffRemoved
		}
		text, whole := shownLine(l.Text)
		if !whole && l.Op != ' ' {
			cut++ // shown, but not in full
		}
		out = append(out, CodeLine{Op: op, Text: text})
		*budget--
	}
	if gap > 0 && len(out) > 0 {
		flushGap()
	}
	return out, cut
}

// shownLine bounds a line to MaxCardDiffLineChars, saying in fixed words how many characters
// it leaves out (whole is false then), writes control and format characters (tab aside) as
// their code points, and a run of more than maxCardDiffBlanks spaces and tabs as its length, so
// what the person reads is what the code is.
func shownLine(s string) (text string, whole bool) {
	rs := []rune(strings.ToValidUTF8(s, "\uFFFD"))
	var b strings.Builder
	n := 0
	for i := 0; i < len(rs); {
		if n >= MaxCardDiffLineChars {
			fmt.Fprintf(&b, "\u2026 [%d more characters of this line are not shown]", len(rs)-i)
			return b.String(), false
		}
		r := rs[i]
		if r == ' ' || r == '\t' {
			j := i
			for j < len(rs) && (rs[j] == ' ' || rs[j] == '\t') {
				j++
			}
			if j-i > maxCardDiffBlanks {
				fmt.Fprintf(&b, "<%d spaces and tabs>", j-i)
				n += maxCardDiffBlanks
				i = j
				continue
			}
		}
		n++
		i++
		if r != '\t' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError) {
			fmt.Fprintf(&b, "<U+%04X>", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String(), true
}
