package main

import "testing"

func TestGCPercentFor(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, maxGCPercent},
		{1 << 20, maxGCPercent}, // 1 MiB live: capped
		{4 << 20, 300},          // 4 MiB live: goal 16 MiB
		{8 << 20, 100},          // half the floor: default
		{200 << 20, 100},        // large heaps: default
		{minHeapGoal / 3, 200},  // a third: goal is the floor
	} {
		if got := gcPercentFor(c.live); got != c.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}
