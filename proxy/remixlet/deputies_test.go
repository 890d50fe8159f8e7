package remixlet

import (
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// The cases are shared with the page agent's test (panel/testdata/pageagent/rx_addresses_test.js):
// Go and the page agent must find the same addresses in the same decoded shapes.
func TestEncodedAddressesIn(t *testing.T) {
	raw, err := os.ReadFile("../../panel/testdata/pageagent/encoded_addresses.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases [][2]json.RawMessage
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		var in string
		var want []string
		if err := json.Unmarshal(c[0], &in); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c[1], &want); err != nil {
			t.Fatal(err)
		}
		got := encodedAddressesIn(in)
		if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
			t.Errorf("encodedAddressesIn(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPathsIn(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"/go/host?to=witness.test/x", []string{"/go/host?to=witness.test/x"}},
		{"%2Fgo%2Fhost%3Fto%3Dwitness.test", []string{"/go/host?to=witness.test"}},
		{" ./next ", []string{"./next"}},
		{"../up", []string{"../up"}},
		{"?page=2", []string{"?page=2"}},
		{"//witness.test/x", nil},
		{`/\witness.test/x`, nil},
		{"card featured", nil},
		{"https://shop.test/x", nil},
	}
	for _, tt := range tests {
		if got := pathsIn(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("pathsIn(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
