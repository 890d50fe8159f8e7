package plain

import "testing"

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"notes", "Hide promoted posts", "prix € (TTC)", "日本語のメモ", "nоtes", "a\u00a0b", "é"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"notes\u200b", "notes\u200e", "no\u2060tes", "a\u202eb", "a\u2066b\u2069", "a\u00adb", "a\ufeffb",
		"a\nb", "a\x00b", "a\u2028b", "a\u2029b", "a\ue000b", "a\U000e0041b", "a\U0010fffdb", "a\u0378b",
		"a\u3164b", "a\u115fb", "a\u034fb", "a\ufe0fb", "a\U000e0100b"} {
		if err := CheckName(bad); err == nil {
			t.Errorf("CheckName(%q) = nil, want an error", bad)
		}
	}
}
