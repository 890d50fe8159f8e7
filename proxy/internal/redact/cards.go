package redact

import "strings"

// Payment card numbers on a page: a saved card shown in full, a checkout field the page did not
// mark with autocomplete="cc-number" (the page agent treats marked ones as sensitive already),
// an order confirmation. They are found by structure, whatever the page calls them: 13 to 19
// digits, alone or in groups split by single spaces or hyphens, standing as a word of their own,
// starting with a card network's issuer prefix and passing the Luhn check. A number that passes
// is replaced whole by the card marker.
//
// This applies to what a page shows (tool results: Redactor.RedactPage), not to what the person
// writes in the chat: a card number the person gives the agent is theirs to give.
//
// A cut card number: where a text stops at "…" or "[truncated" (the page agent marks every cut
// it makes so, capture_page's too), the first digits of a card number there go when they are
// minCutCardDigits or more with an issuer prefix: a cut the model or the page chooses could
// otherwise show all but the last digit, which the Luhn check gives. The end of a JSON string
// is not taken for a cut here, unlike for keys (keys.go): the ids pages keep in their state
// (ten to eighteen digits) would go.

// KindCard names a payment card number.
const KindCard = "card number"

const (
	minCardDigits    = 13
	maxCardDigits    = 19
	minCutCardDigits = 10 // what may show of a cut card leaves six digits unknown at least
)

// redactCards replaces the card numbers in s (see the top of the file).
func redactCards(s string) string {
	if !mayHoldCard(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		if !isDigit(s[i]) || (i > 0 && joins(s, i-1, -1)) {
			i++
			continue
		}
		var buf [8]span
		groups := digitGroups(buf[:0], s, i)
		end := groups[len(groups)-1].end
		endsWord := end < len(s) && joins(s, end, 1)
		for g := 0; g < len(groups); {
			h, ok := cardAt(s, groups, g, endsWord)
			if !ok {
				g++
				continue
			}
			b.WriteString(s[last:groups[g].start])
			b.WriteString(marker(KindCard))
			last = groups[h].end
			g = h + 1
		}
		i = end
		for i < len(s) && isWordByte(s[i]) { // the rest of a longer word is not a number's start
			i++
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// span is a group of digits, s[start:end].
type span struct{ start, end int }

// digitGroups reads the groups of digits from s[i] on that single spaces or hyphens split:
// "4111 1111 1111 1111" is four, two card numbers side by side eight. They are appended to
// groups (a buffer on the caller's stack: the scan runs on every digit of a tool result).
func digitGroups(groups []span, s string, i int) []span {
	start := i
	for j := i; ; j++ {
		if j < len(s) && isDigit(s[j]) {
			continue
		}
		groups = append(groups, span{start, j})
		if j+1 < len(s) && (s[j] == ' ' || s[j] == '-') && isDigit(s[j+1]) {
			start = j + 1
			continue
		}
		return groups
	}
}

// cardAt looks for a card number made of the groups g..h, the longest first, and returns h.
// The run's last group counts only if the run does not go on as a longer word (endsWord).
func cardAt(s string, groups []span, g int, endsWord bool) (int, bool) {
	var buf [maxCardDigits]byte
	d := buf[:0]
	h := g
	for ; h < len(groups); h++ {
		n := groups[h].end - groups[h].start
		if len(d)+n > maxCardDigits {
			break
		}
		d = append(d, s[groups[h].start:groups[h].end]...)
	}
	// d holds groups g..h-1; try the longest first.
	for h--; h >= g; h-- {
		if len(d) >= minCardDigits && !(h == len(groups)-1 && endsWord) && cardIssuer(d) && luhn(d) {
			return h, true
		}
		d = d[:len(d)-(groups[h].end-groups[h].start)]
	}
	return 0, false
}

// mayHoldCard is a quick test: at least minCardDigits digits in s.
func mayHoldCard(s string) bool {
	n := 0
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			if n++; n >= minCardDigits {
				return true
			}
		}
	}
	return false
}

// cardIssuer reports whether d starts with the issuer prefix of a card network: Visa (4),
// Mastercard (51–55, 2221–2720), American Express (34, 37), Diners Club (300–305, 36, 38, 39),
// JCB (3528–3589), Discover (6011, 644–649, 65), UnionPay (62), Maestro (50, 56–58, 67).
func cardIssuer(d []byte) bool {
	p2 := int(d[0]-'0')*10 + int(d[1]-'0')
	p3 := p2*10 + int(d[2]-'0')
	p4 := p3*10 + int(d[3]-'0')
	switch {
	case d[0] == '4':
		return true
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720:
		return true
	case p2 == 34 || p2 == 37 || p2 == 36 || p2 == 38 || p2 == 39, p3 >= 300 && p3 <= 305:
		return true
	case p4 >= 3528 && p4 <= 3589:
		return true
	case p4 == 6011, p3 >= 644 && p3 <= 649, p2 == 65, p2 == 62:
		return true
	case p2 == 50, p2 >= 56 && p2 <= 58, p2 == 67:
		return true
	}
	return false
}

// luhn reports whether the digits pass the Luhn check.
func luhn(d []byte) bool {
	sum := 0
	double := false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			if n *= 2; n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isWordByte reports whether c joins a number to a longer word (a hex string, an ID).
func isWordByte(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

// joins reports whether s[j], next to a run of digits (dir -1: before it, 1: after it), makes
// the run part of a longer word: a letter, a digit, an underscore, or a decimal point with a
// digit beyond it (a full stop ending a sentence does not).
func joins(s string, j, dir int) bool {
	if isWordByte(s[j]) {
		return true
	}
	k := j + dir
	return s[j] == '.' && k >= 0 && k < len(s) && isDigit(s[k])
}

// redactCardCuts replaces the first digits of card numbers cut at "…" or "[truncated" (see the
// top of the file).
func redactCardCuts(s string) string {
	if !strings.Contains(s, "…") && !strings.Contains(s, "[truncated") {
		return s
	}
	var b strings.Builder
	last := 0
	// The next of each mark at or after off (-1: none left), each found once: a text with a
	// thousand cut lines is read once, not a thousand times.
	next := func(mark string, off int) int {
		if i := strings.Index(s[off:], mark); i >= 0 {
			return off + i
		}
		return -1
	}
	ell, trunc := next("…", 0), next("[truncated", 0)
	for {
		e := ell
		if trunc >= 0 && (e < 0 || trunc < e) {
			e = trunc
		}
		if e < 0 {
			break
		}
		if e == ell {
			ell = next("…", e+1)
		} else {
			trunc = next("[truncated", e+1)
		}
		if start, ok := cutCardBefore(s, e); ok && start >= last {
			b.WriteString(s[last:start])
			b.WriteString(marker(KindCard))
			last = e
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// cutCardBefore reports whether the digits that end at s[end] (in groups split by single spaces
// or hyphens) are the start of a card number: a word of their own before, an issuer prefix, and
// minCutCardDigits to maxCardDigits digits. It returns where they start.
func cutCardBefore(s string, end int) (int, bool) {
	var buf [maxCardDigits]byte
	n := 0
	k := end
	for {
		j := k
		for j > 0 && isDigit(s[j-1]) {
			j--
		}
		if j == k || n+(k-j) > maxCardDigits {
			return 0, false
		}
		// Prepend the group.
		copy(buf[k-j:], buf[:n])
		copy(buf[:k-j], s[j:k])
		n += k - j
		k = j
		if k >= 2 && (s[k-1] == ' ' || s[k-1] == '-') && isDigit(s[k-2]) {
			k--
			continue
		}
		break
	}
	if n < minCutCardDigits || k > 0 && (joins(s, k-1, -1) || s[k-1] == '+') || !cardIssuer(buf[:n]) {
		return 0, false
	}
	return k, true
}
