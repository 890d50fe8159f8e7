package budget

import "testing"

func TestTakeWithinTheBound(t *testing.T) {
	b := New(10)
	if !b.Take(6) || b.Take(5) || !b.Take(4) {
		t.Fatalf("takes of 6, 5, 4 from 10: want yes, no, yes")
	}
	if b.InUse() != 10 {
		t.Errorf("in use %d, want 10", b.InUse())
	}
	b.Give(6)
	if !b.Take(5) || b.InUse() != 9 {
		t.Errorf("after giving 6 back: take 5 then in use %d, want 9", b.InUse())
	}
}
