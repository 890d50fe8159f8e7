package chat

import "testing"

// TestSwitchIn: a switch reads as on only from its own setting item saying "on".
func TestSwitchIn(t *testing.T) {
	tests := []struct {
		name  string
		items []chatItem
		want  bool
	}{
		{"no items", nil, false},
		{"on", []chatItem{{ID: apiAccessKey, Kind: "setting", State: "on"}}, true},
		{"off", []chatItem{{ID: apiAccessKey, Kind: "setting", State: "off"}}, false},
		{"the other switch on", []chatItem{{ID: actSubmitsKey, Kind: "setting", State: "on"}}, false},
		{"not a setting", []chatItem{{ID: apiAccessKey, Kind: "text", State: "on"}}, false},
		{"among others", []chatItem{{ID: "x", Kind: "text"}, {ID: apiAccessKey, Kind: "setting", State: "on"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := switchIn(tt.items, apiAccessKey); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
