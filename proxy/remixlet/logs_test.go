package remixlet

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/remixproxy/remixproxy/store"
)

// fakeSink records the batches a remixletLogWriter writes.
type fakeSink struct {
	mu      sync.Mutex
	batches [][]store.NewLogEntry
	runs    []store.Run
}

func (f *fakeSink) AppendLogs(_ context.Context, es []store.NewLogEntry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(es) > 0 {
		f.batches = append(f.batches, es)
	}
	return nil
}

func (f *fakeSink) RecordRuns(_ context.Context, rs []store.Run) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs = append(f.runs, rs...)
	return nil
}

func (f *fakeSink) lines() []store.NewLogEntry {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []store.NewLogEntry
	for _, b := range f.batches {
		out = append(out, b...)
	}
	return out
}

func (f *fakeSink) batchCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.batches)
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestRemixletLogWriterBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{}
		w := newRemixletLogWriter(sink, discardLogger()).start()
		defer w.close()

		// 49 lines wait for the timer; the 50th writes the batch at once.
		for i := range defaultLogBatch - 1 {
			w.add("rx_a", "info", fmt.Sprintf("line %d", i))
		}
		synctest.Wait()
		if n := sink.batchCount(); n != 0 {
			t.Fatalf("%d batches written before the batch was full or the timer fired, want 0", n)
		}
		w.add("rx_a", "info", "line 49")
		synctest.Wait()
		if got := sink.lines(); sink.batchCount() != 1 || len(got) != defaultLogBatch {
			t.Fatalf("after %d lines: %d batches, %d lines; want one batch of all of them", defaultLogBatch, sink.batchCount(), len(got))
		}

		// A single line is written within the flush interval.
		w.add("rx_b", "warn", "alone")
		w.ran("rx_b", "news.test")
		time.Sleep(defaultLogFlushEvery + time.Millisecond)
		synctest.Wait()
		got := sink.lines()
		if len(got) != defaultLogBatch+1 || got[len(got)-1].Message != "alone" || got[len(got)-1].RemixletID != "rx_b" {
			t.Fatalf("a single line was not written within %v: %d lines, last %+v", defaultLogFlushEvery, len(got), got[len(got)-1])
		}
		sink.mu.Lock()
		runs := sink.runs
		sink.mu.Unlock()
		if len(runs) != 1 || runs[0].RemixletID != "rx_b" || runs[0].Site != "news.test" {
			t.Errorf("runs written = %+v, want rx_b on news.test", runs)
		}
		if r, ok := w.lastRun("rx_b"); !ok || r.Site != "news.test" {
			t.Errorf("lastRun(rx_b) = %+v, %v; want news.test", r, ok)
		}
		for i, l := range got[:defaultLogBatch] {
			if want := fmt.Sprintf("line %d", i); l.Message != want {
				t.Fatalf("line %d is %q, want %q (order kept)", i, l.Message, want)
			}
		}
	})
}

func TestRemixletLogWriterFloodIsBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sink := &fakeSink{}
		w := newRemixletLogWriter(sink, discardLogger())
		// No batch-size flush and no timer within the test: everything waits in the queue.
		w.maxQueue, w.batch, w.every = 100, 1000, time.Hour
		w.start()
		const flood = 10000
		for i := range flood {
			w.add("rx_flood", "info", fmt.Sprintf("flood %d", i))
		}
		w.add("rx_quiet", "info", "dropped too: the queue is shared")
		w.mu.Lock()
		queued := len(w.queue)
		w.mu.Unlock()
		if queued != 100 {
			t.Errorf("%d lines queued after a flood, want the bound 100", queued)
		}
		w.close()
		got := sink.lines()
		if len(got) != 102 {
			t.Fatalf("%d lines written, want the 100 queued and one dropped-count line per remixlet", len(got))
		}
		if got[99].Message != "flood 99" {
			t.Errorf("line 99 = %q, want the first 100 lines kept in order", got[99].Message)
		}
		want := map[string]string{
			"rx_flood": fmt.Sprintf("%d log lines dropped", flood-100),
			"rx_quiet": "1 log lines dropped",
		}
		for _, l := range got[100:] {
			if w, ok := want[l.RemixletID]; !ok || !strings.HasPrefix(l.Message, w) || l.Level != "warn" {
				t.Errorf("dropped-count line %+v, want a warn line starting %q", l, w)
			}
			delete(want, l.RemixletID)
		}
		if len(want) > 0 {
			t.Errorf("no dropped-count line for %v", want)
		}
		// After close, lines are dropped quietly and nothing blocks.
		w.add("rx_flood", "info", "after close")
		if n := len(sink.lines()); n != 102 {
			t.Errorf("%d lines after a line added past close, want 102", n)
		}
	})
}

// TestRemixletLogWriterLosesNothingOnClose writes to a real store: every line added before close
// is in the log after it, even though no flush was due.
func TestRemixletLogWriterLosesNothingOnClose(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "remixproxy.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	a, err := st.CreateRemixlet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.CreateRemixlet(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	w := newRemixletLogWriter(st, discardLogger())
	w.every = time.Hour // only the batch size and close flush
	w.start()
	const n = 137 // two full batches and a partial one
	for i := range n {
		w.add(a.ID, "info", fmt.Sprintf("a %d", i))
		if i%10 == 0 {
			w.add(b.ID, "error", fmt.Sprintf("b %d", i))
		}
	}
	w.ran(a.ID, "shop.test")
	w.close()

	es, err := st.Log(ctx, a.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != n || es[0].Message != fmt.Sprintf("a %d", n-1) || es[n-1].Message != "a 0" {
		t.Fatalf("a's log has %d lines (newest %q), want all %d", len(es), es[0].Message, n)
	}
	if es, _ := st.Log(ctx, b.ID, 0); len(es) != 14 {
		t.Errorf("b's log has %d lines, want 14", len(es))
	}
	if r, ok, err := st.LastRun(ctx, a.ID); err != nil || !ok || r.Site != "shop.test" {
		t.Errorf("LastRun(a) = %+v, %v, %v; want a run on shop.test, written on close", r, ok, err)
	}
}
