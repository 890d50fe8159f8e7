package chat

import (
	"slices"
	"strings"
	"testing"
)

func TestValueMatchers(t *testing.T) {
	for _, tc := range []struct {
		sel  string
		want []string
	}{
		{`a[href^="/maps?key=AIzaSy"]`, []string{"href"}},
		{`[data-testid*='x]y'] , div[title]`, []string{"data-testid"}},
		{`[ Href $= x ]`, []string{"href"}},
		{`[lang|=en]`, []string{"lang"}},
		{`[svg|href~=a]`, []string{"href"}},
		{`[*|title=a]`, []string{"title"}},
		{`[hr\65f^=a]`, []string{"*"}},
		{`div:has(a[href*=Qz9]) > span`, []string{"href"}},
		{`a.b#c`, nil},
		{`[disabled]`, nil},
		{`[title="a[b=c]"]`, []string{"title"}},
		{`[href/**/*=x]`, []string{"*"}}, // a comment: any attribute
		{`svg [viewBox*=x]`, []string{"viewbox"}},
	} {
		var got []string
		for _, m := range valueMatchers(tc.sel) {
			got = append(got, m.name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("valueMatchers(%q) = %q, want %q", tc.sel, got, tc.want)
		}
	}
}

func TestAttrMatcherMatch(t *testing.T) {
	for _, tc := range []struct {
		sel, value string
		want       bool
	}{
		{`[href^="/maps"]`, "/maps?key=[redacted: key]", true},
		{`[href^="/maps?key=AIza"]`, "/maps?key=[redacted: key]", false},
		{`[href*=Qz9]`, "/maps?key=[redacted: key]", false},
		{`[href$='key]']`, "/maps?key=[redacted: key]", true},
		{`[class~=big]`, "a big b", true},
		{`[class~=bi]`, "a big b", false},
		{`[lang|=en]`, "en-GB", true},
		{`[title=ABC i]`, "abc", true},
		{`[title=ABC]`, "abc", false},
		{`[title="a\\62 c"]`, "abc", false}, // an escape: not read, holds for nothing
		{`[title*=""]`, "abc", false},
	} {
		ms := valueMatchers(tc.sel)
		if len(ms) != 1 {
			t.Fatalf("valueMatchers(%q) = %v", tc.sel, ms)
		}
		if got := ms[0].match(tc.value); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.sel, tc.value, got, tc.want)
		}
	}
}

func TestDropValues(t *testing.T) {
	const secret = "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX"
	values := []queryValue{
		{"href", "/maps?key=" + secret},
		{"href", "/maps?q=1"},
		{"title", secret},
		{"data-p", "hint: [redacted]"}, // a password's value the page agent took out
		{"HREF", "/x?k=" + secret},
		{"data-long", strings.Repeat("x", queryValueMax) + "…"}, // cut by the page agent
	}
	for _, tc := range []struct {
		sel  string
		drop []int
	}{
		{`a[href*=Qz9]`, []int{0, 4}},
		{`a[href^="/maps"]`, []int{4}}, // holds for the first redacted value; not for the other
		{`a[href^="/maps?key=AIza"]`, []int{0, 4}},
		{`[title=x]`, []int{2}},
		{`[data-p*="Pw-72"]`, []int{3}},
		{`[data-p^="hint"]`, []int{}},
		{`[data-long*="Qz9"]`, []int{5}}, // past the cut: not what Go was sent
		{`[data-long^="xxx"]`, []int{}},
		{`[id=x]`, []int{}},
		{`p:has(+ a[href*=Qz9])`, []int{}}, // not the subject: refused on the page instead
	} {
		got := dropValues(fakeRed, valueMatchers(tc.sel), values)
		if !slices.Equal(got, tc.drop) {
			t.Errorf("%s: drop %v, want %v", tc.sel, got, tc.drop)
		}
	}
}

func TestMatcherSubject(t *testing.T) {
	for _, tc := range []struct {
		sel  string
		want []bool
	}{
		{`a[href*=x]`, []bool{true}},
		{`a[href*=x], p[title=y] span`, []bool{true, false}},
		{`p:has(+ a[href*=x])`, []bool{false}},
		{`[data-k=x] > span`, []bool{false}},
		{`[data-k=x] ~ span`, []bool{false}},
		{`div [title=x]`, []bool{true}},
		{`[title=x]  ,  b`, []bool{true}},
		{`a:not([href*=x])`, []bool{false}},
		{`[title="a b"] :is(b)`, []bool{false}},
	} {
		var got []bool
		for _, m := range valueMatchers(tc.sel) {
			got = append(got, m.subject)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("valueMatchers(%q) subjects %v, want %v", tc.sel, got, tc.want)
		}
	}
}
