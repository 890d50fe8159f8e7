package main

import (
	"math"
	"strings"
	"testing"
)

// TestAnalyze: the frame counts of one load, from the probe's samples and paint entries, as the
// package doc defines them.
func TestAnalyze(t *testing.T) {
	type paint = struct {
		Name      string  `json:"name"`
		StartTime float64 `json:"startTime"`
		PaintTime float64 `json:"paintTime"`
	}
	fcp := func(at float64) []paint {
		return []paint{{"first-paint", at, at}, {"first-contentful-paint", at + 10, at}}
	}
	nan := math.NaN()
	cases := []struct {
		name                     string
		frames                   [][3]float64
		paints                   []paint
		without, noH1, outOfView int
		painted                  int
		effectAt, shownWithout   float64
		wantErr                  string
	}{
		{"effect before the first paint", [][3]float64{{100, 1, 2}, {116, 1, 2}, {132, 1, 2}}, fcp(105), 0, 0, 0, 3, 100, 0, ""},
		{"two frames without", [][3]float64{{100, 1, 1}, {116, 1, 1}, {132, 1, 2}}, fcp(105), 2, 0, 0, 3, 132, 32, ""},
		{"a frame before FCP is not painted", [][3]float64{{90, 1, 1}, {100, 1, 1}, {120, 1, 2}}, fcp(105), 1, 0, 0, 2, 120, 20, ""},
		{"the frame at FCP is painted", [][3]float64{{90, 1, 1}, {105, 1, 1}, {120, 1, 2}}, fcp(105), 1, 0, 0, 2, 120, 15, ""},
		{"no h1 yet", [][3]float64{{100, 1, 0}, {116, 1, 0}, {132, 1, 2}}, fcp(105), 0, 2, 0, 3, 132, 0, ""},
		{"out of view", [][3]float64{{100, 1, 3}, {116, 1, 1}, {132, 1, 2}}, fcp(105), 1, 0, 1, 3, 132, 16, ""},
		{"never", [][3]float64{{100, 1, 1}, {116, 1, 1}, {150, 1, 1}}, fcp(105), 3, 0, 0, 3, nan, 50, ""},
		{"no paintTime: startTime", [][3]float64{{100, 1, 1}, {116, 1, 1}, {132, 1, 2}},
			[]paint{{"first-contentful-paint", 117, -1}}, 1, 0, 0, 2, 132, 16, ""},
		{"never painted", [][3]float64{{100, 1, 1}}, []paint{{"first-paint", 100, 100}}, 0, 0, 0, 0, nan, 0, "no first-contentful-paint"},
		{"no frames", nil, fcp(105), 0, 0, 0, 0, nan, 0, "no animation frame"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := analyze(probeData{Frames: c.frames, Paints: c.paints})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("analyze: %v", err)
			}
			if f.Without != c.without || f.NoH1Painted != c.noH1 || f.OutOfView != c.outOfView || f.Painted != c.painted {
				t.Errorf("got without %d, no h1 %d, out of view %d, painted %d; want %d, %d, %d, %d",
					f.Without, f.NoH1Painted, f.OutOfView, f.Painted, c.without, c.noH1, c.outOfView, c.painted)
			}
			if !same(f.EffectAt, c.effectAt) || !same(f.ShownWithout, c.shownWithout) {
				t.Errorf("got effect at %v, shown without %v; want %v, %v", f.EffectAt, f.ShownWithout, c.effectAt, c.shownWithout)
			}
		})
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestTimeline: the script's timeline moves the DevTools clock (seconds) onto the page's, ms
// after domContentLoadedEventStart, at Page.domContentEventFired = domContentLoadedEventEnd; an
// op held in the page arrives before DOMContentLoaded and is answered after it.
func TestTimeline(t *testing.T) {
	l := &cdpLog{}
	l.reset()
	l.dcl = 100.000 // DOMContentLoaded's listeners done, DevTools clock
	l.readySent, l.helloSent = 99.9985, 99.7
	l.ops = []wsOp{{at: 99.800, id: 1, op: "query"}, {at: 100.020, id: 2, op: "hide"}}
	l.answered[1], l.answered[2] = 99.999, 100.021
	f := loadFigures{DCLDuration: 2}
	l.timeline(&f)
	cases := []struct {
		name      string
		got, want float64
	}{
		{"hello sent", f.HelloSent, -298},
		{"ready sent", f.ReadySent, 0.5},
		{"op 1 received", f.Op1Received, -198},
		{"op 1 answered", f.Op1Answered, 1},
		{"op 2 received", f.Op2Received, 22},
		{"op 2 answered", f.Op2Answered, 23},
	}
	for _, c := range cases {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s: got %v ms after DOMContentLoaded, want %v", c.name, c.got, c.want)
		}
	}
	f = loadFigures{DCLDuration: math.NaN()}
	l.timeline(&f)
	if !math.IsNaN(f.Op1Answered) {
		t.Errorf("without DOMContentLoaded's duration: got op 1 answered %v, want NaN", f.Op1Answered)
	}
}
