package page

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

func reportJSON(fields map[int]string, cookies ...string) []byte {
	var parts []string
	ids := make([]int, 0, len(fields))
	for id := range fields {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		parts = append(parts, fmt.Sprintf(`{"id":%d,"value":%q}`, id, fields[id]))
	}
	var cs []string
	for _, c := range cookies {
		cs = append(cs, fmt.Sprintf("%q", c))
	}
	return []byte(`{"type":"secrets","fields":[` + strings.Join(parts, ",") + `],"cookies":[` + strings.Join(cs, ",") + `]}`)
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

func TestSecretReports(t *testing.T) {
	ss := reports{bySession: map[string]*pageReport{}}
	const pageURL = "https://www.shop.test/login"
	steps := []struct {
		name      string
		session   string
		report    []byte
		wantPw    []string
		wantCooks []string
	}{
		{"typing", "s1", reportJSON(map[int]string{1: "h"}), []string{"h"}, nil},
		{"the letters replace each other", "s1", reportJSON(map[int]string{1: "hunter2"}), []string{"hunter2"}, nil},
		{"a cleared field keeps its value", "s1", reportJSON(map[int]string{1: ""}), []string{"hunter2"}, nil},
		{"a second field and cookies", "s1", reportJSON(map[int]string{2: "second-pw"}, "sid-123456789"), []string{"hunter2", "second-pw"}, []string{"sid-123456789"}},
		{"another page of the site", "s2", reportJSON(map[int]string{1: "other-tab-pw"}), []string{"hunter2", "other-tab-pw", "second-pw"}, []string{"sid-123456789"}},
		{"not JSON", "s1", []byte(`{"fields": 12`), []string{"hunter2", "other-tab-pw", "second-pw"}, []string{"sid-123456789"}},
		{"a long value is cut", "s1", reportJSON(map[int]string{3: strings.Repeat("x", 5000)}), []string{strings.Repeat("x", maxReportedValue), "hunter2", "other-tab-pw", "second-pw"}, []string{"sid-123456789"}},
	}
	for _, st := range steps {
		ss.report(st.session, pageURL, st.report)
		pw, cookies := ss.site("shop.test", "s1")
		if !slices.Equal(sorted(pw), sorted(st.wantPw)) || !slices.Equal(sorted(cookies), sorted(st.wantCooks)) {
			t.Errorf("%s: passwords %q, cookies %q; want %q, %q", st.name, pw, cookies, st.wantPw, st.wantCooks)
		}
	}
	// Another site's pages are not the chat's.
	ss.report("s3", "https://elsewhere.test/", reportJSON(map[int]string{1: "not-this-site"}))
	if pw, _ := ss.site("shop.test", "s1"); slices.Contains(pw, "not-this-site") {
		t.Errorf("another site's password is in shop.test's set: %q", pw)
	}
	// A session that ends takes its values with it.
	ss.dropSession("s2")
	if pw, _ := ss.site("shop.test", "s1"); slices.Contains(pw, "other-tab-pw") {
		t.Errorf("a closed page's value is still known: %q", pw)
	}
	// Bounds: the oldest fields go.
	for i := 0; i < maxSecretFields+10; i++ {
		ss.report("s4", pageURL, reportJSON(map[int]string{100 + i: fmt.Sprintf("field-%02d", i)}))
	}
	ss.mu.Lock()
	n, first := len(ss.bySession["s4"].fields), ss.bySession["s4"].fields[100]
	ss.mu.Unlock()
	if n != maxSecretFields || first != "" {
		t.Errorf("%d fields kept (the first %q), want %d without the first", n, first, maxSecretFields)
	}
}
