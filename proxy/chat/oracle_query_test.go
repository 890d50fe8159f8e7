package chat

import (
	"encoding/json"
	"slices"
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

func TestFilterQuery(t *testing.T) {
	const secret = "AIzaSyQz9SECRETbodyXXXXXXXXXXXXXXXXXXXX"
	in, _ := json.Marshal(map[string]any{"total": 3, "matches": []any{
		map[string]any{"ref": "e1", "attrs": map[string]string{"href": "/maps?key=" + secret}},
		map[string]any{"ref": "e2", "attrs": map[string]string{"href": "/maps?q=1", "title": secret}},
		map[string]any{"ref": "e3", "attrs": map[string]string{"href": "/maps?q=2"}},
	}})
	for _, tc := range []struct {
		sel   string
		limit int
		refs  []string
		total int
	}{
		{`a[href*=Qz9]`, 20, []string{"e2", "e3"}, 2},
		{`a[href*=Qz9]`, 1, []string{"e2"}, 2},
		{`a[href^="/maps"]`, 20, []string{"e1", "e2", "e3"}, 3}, // holds for the redacted value too
		{`[hr\65f*=Qz9]`, 20, []string{"e3"}, 1},
		{`[id=x]`, 20, []string{"e1", "e2", "e3"}, 3},
	} {
		out, err := filterQuery(fakeRed, valueMatchers(tc.sel), tc.limit, in)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Total   int `json:"total"`
			Matches []struct {
				Ref string `json:"ref"`
			} `json:"matches"`
		}
		json.Unmarshal(out, &got)
		var refs []string
		for _, m := range got.Matches {
			refs = append(refs, m.Ref)
		}
		if got.Total != tc.total || !slices.Equal(refs, tc.refs) {
			t.Errorf("%s limit %d: total %d refs %v, want %d %v", tc.sel, tc.limit, got.Total, refs, tc.total, tc.refs)
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
