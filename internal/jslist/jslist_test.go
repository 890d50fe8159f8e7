package jslist

import (
	"slices"
	"testing"
)

func TestRead(t *testing.T) {
	src := []byte("var A = ['x', 'y-z'];\nvar B = allowed(['p',\n  'q']);\nvar C = 3;")
	for _, tt := range []struct {
		name string
		want []string
		ok   bool
	}{
		{"A", []string{"x", "y-z"}, true},
		{"B", []string{"p", "q"}, true},
		{"C", nil, false},
		{"D", nil, false},
	} {
		got, ok := Read(src, tt.name)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("Read(%s) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
