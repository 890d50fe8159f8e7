package sessionlog

import "testing"

var testLimits = Limits[string]{PerSession: 3, PerSessionBytes: 10, AllBytes: 12, Size: func(s string) int { return len(s) }}

func TestAddKeepsOneSessionsBounds(t *testing.T) {
	var l Log[string]
	for _, v := range []string{"a", "b", "c", "d"} {
		l.Add(v, testLimits)
	}
	if len(l.Items) != 3 || l.Items[0] != "b" || l.Bytes != 3 {
		t.Errorf("after 4 items: %v, %d bytes; want [b c d], 3", l.Items, l.Bytes)
	}
	l.Add("0123456789ab", testLimits) // larger than the session's bytes: kept alone
	if len(l.Items) != 1 || l.Bytes != 12 {
		t.Errorf("after a large item: %v, %d bytes; want it alone", l.Items, l.Bytes)
	}
}

// TestRecordTakesFromTheLargestSite: past the bound for all, the site holding the most loses its
// largest session's oldest items; another site's session keeps its record.
func TestRecordTakesFromTheLargestSite(t *testing.T) {
	all := map[string]*Log[string]{}
	total := 0
	quiet := &Log[string]{Site: "quiet.test"}
	loud1 := &Log[string]{Site: "loud.test"}
	loud2 := &Log[string]{Site: "loud.test"}
	all["q"], all["l1"], all["l2"] = quiet, loud1, loud2
	Record(all, &total, quiet, "qqqq", testLimits)
	Record(all, &total, loud1, "11111", testLimits)
	Record(all, &total, loud2, "2", testLimits)
	Record(all, &total, loud2, "333", testLimits) // 13 bytes > 12: loud.test's largest session (loud1) loses "11111"
	if total != 8 || len(quiet.Items) != 1 || len(loud1.Items) != 0 || len(loud2.Items) != 2 {
		t.Errorf("total %d, quiet %v, loud1 %v, loud2 %v; want 8, [qqqq], [], [2 333]", total, quiet.Items, loud1.Items, loud2.Items)
	}
}
