// Package plain decides whether a text someone else wrote may be shown to the person as a name
// on the proxy's own surfaces (a card, the confirmation window, the manager): a name the agent
// gave a remixlet reaches the cards where the person decides, so it must read as what it is.
// It never shows or changes text; it only says what is wrong with it.
package plain

import (
	"fmt"
	"unicode"
)

// CheckName reports the first character of s that would make a name read other than it is:
// a control character, an invisible format character (bidirectional marks and overrides, zero
// width spaces and joiners, soft hyphens, variation selectors, Hangul fillers …), a line or
// paragraph separator, a private-use or an
// unassigned code point. Two names that differ only by such characters look the same, and a
// bidirectional override reorders what follows it.
func CheckName(s string) error {
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return fmt.Errorf("contains the control character U+%04X", r)
		case unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point):
			// Other_Default_Ignorable: the Hangul fillers, the combining grapheme joiner and their
			// like, which are letters or marks that show nothing.
			return fmt.Errorf("contains the invisible character U+%04X", r)
		case unicode.Is(unicode.Co, r) || !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Zs):
			return fmt.Errorf("contains U+%04X, a private-use or unassigned character", r)
		}
	}
	return nil
}
