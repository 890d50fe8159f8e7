package page

import (
	"testing"
	"time"
)

// TestNavRate: a burst of navigations goes to the listeners at once, the rest are merged into
// one scheduled when the budget allows; the budget comes back with time.
func TestNavRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	r := newNavRate(t0)
	for i := 0; i < navBurst; i++ {
		if ok, after := r.take(t0); !ok || after != 0 {
			t.Fatalf("navigation %d of the burst: ok %v, after %v; want at once", i, ok, after)
		}
	}
	ok, after := r.take(t0)
	if ok || after != time.Second/navPerSecond {
		t.Fatalf("the first past the burst: ok %v, after %v; want one merged navigation in %v", ok, after, time.Second/navPerSecond)
	}
	for i := 0; i < 1000; i++ {
		if ok, after := r.take(t0.Add(time.Duration(i) * time.Microsecond)); ok || after != 0 {
			t.Fatalf("navigation %d while a merged one waits: ok %v, after %v; want it merged", i, ok, after)
		}
	}
	r.fire()
	if ok, after := r.take(t0.Add(after)); ok || after == 0 {
		t.Fatalf("right after the merged navigation: ok %v, after %v; want another merged one scheduled", ok, after)
	}
	r.fire()
	later := t0.Add(time.Hour)
	for i := 0; i < navBurst; i++ {
		if ok, _ := r.take(later); !ok {
			t.Fatalf("an hour later, navigation %d: not at once; want the whole burst back", i)
		}
	}
}
