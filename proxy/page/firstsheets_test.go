package page

import (
	"maps"
	"strings"
	"testing"
)

func TestParseFirstSheets(t *testing.T) {
	a, b := "rx_"+strings.Repeat("a", 32), "rx_"+strings.Repeat("0", 31)+"f"
	many := make([]string, 100)
	for i := range many {
		many[i] = "rx_" + strings.Repeat("1", 30) + string("0123456789"[i/10]) + string("0123456789"[i%10]) + ":1"
	}
	tests := []struct {
		name string
		raw  string
		want map[string]int64
	}{
		{"none", "", nil},
		{"one", a + ":7", map[string]int64{a: 7}},
		{"two", a + ":7," + b + ":12", map[string]int64{a: 7, b: 12}},
		{"malformed pairs skipped", a + ":x,rx_short:1," + strings.ToUpper(b) + ":2,:3," + b + ":0," + b + ":-1," + b, map[string]int64{}},
		{"good pairs kept among bad", "junk," + b + ":5", map[string]int64{b: 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseFirstSheets(tt.raw)
			if len(tt.want) == 0 && got != nil {
				t.Fatalf("got %v, want nil", got)
			}
			if !maps.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	if got := parseFirstSheets(strings.Join(many, ",")); len(got) != maxFirstSheets {
		t.Errorf("100 pairs: got %d, want the bound %d", len(got), maxFirstSheets)
	}
}
