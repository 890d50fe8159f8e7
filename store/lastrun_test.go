package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestRecordRunsKeepsTheNewest(t *testing.T) {
	s, clock := openTestStore(t, Options{})
	ctx := context.Background()
	a := mustCreate(t, s, "a")
	b := mustCreate(t, s, "b")
	never := mustCreate(t, s, "never")
	t0 := clock.Now()

	mustOK(t, "RecordRuns", s.RecordRuns(ctx, []Run{
		{RemixletID: a.ID, At: t0, Site: "news.test"},
		{RemixletID: b.ID, At: t0.Add(time.Second), Site: "shop.test"},
		{RemixletID: a.ID, At: t0.Add(2 * time.Second), Site: "later.test"},
		{RemixletID: "rx_00000000000000000000000000000000", At: t0, Site: "gone.test"}, // deleted meanwhile: skipped
	}))
	// An older run recorded late does not replace a newer one.
	mustOK(t, "RecordRuns (older)", s.RecordRuns(ctx, []Run{{RemixletID: b.ID, At: t0, Site: "older.test"}}))

	runs, err := s.LastRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		id, site string
		at       time.Time
	}{
		{a.ID, "later.test", t0.Add(2 * time.Second)},
		{b.ID, "shop.test", t0.Add(time.Second)},
	}
	for _, tt := range tests {
		got, ok := runs[tt.id]
		if !ok || got.Site != tt.site || !got.At.Equal(tt.at.Truncate(time.Millisecond)) {
			t.Errorf("LastRuns[%s] = %+v, %v; want site %s at %v", tt.id, got, ok, tt.site, tt.at)
		}
		one, ok, err := s.LastRun(ctx, tt.id)
		if err != nil || !ok || one != got {
			t.Errorf("LastRun(%s) = %+v, %v, %v; want %+v", tt.id, one, ok, err, got)
		}
	}
	if len(runs) != 2 {
		t.Errorf("LastRuns has %d entries, want 2 (a, b): %+v", len(runs), runs)
	}
	if _, ok, err := s.LastRun(ctx, never.ID); ok || err != nil {
		t.Errorf("LastRun of a remixlet that never ran: ok %v, err %v; want false, nil", ok, err)
	}

	// Deleting a remixlet deletes its record.
	mustOK(t, "DeleteRemixlet", s.DeleteRemixlet(ctx, a.ID))
	if _, ok, _ := s.LastRun(ctx, a.ID); ok {
		t.Errorf("the last run of a deleted remixlet is still stored")
	}
}

func TestAppendLogsBatch(t *testing.T) {
	const limit = 5
	s, clock := openTestStore(t, Options{LogLimit: limit})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	other := mustCreate(t, s, "other")
	t0 := clock.Now()
	var batch []NewLogEntry
	for i := range 8 {
		batch = append(batch, NewLogEntry{RemixletID: r.ID, Time: t0.Add(time.Duration(i) * time.Millisecond), Level: "info", Message: fmt.Sprintf("line %d", i)})
	}
	batch = append(batch,
		NewLogEntry{RemixletID: other.ID, Level: "warn", Message: "other's line"},
		NewLogEntry{RemixletID: "rx_00000000000000000000000000000000", Level: "info", Message: "of a deleted remixlet"},
		NewLogEntry{RemixletID: r.ID, Time: t0.Add(time.Second), Level: "error", Message: strings.Repeat("x", MaxLogMessage+10)},
	)
	mustOK(t, "AppendLogs", s.AppendLogs(ctx, batch))

	es, err := s.Log(ctx, r.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Message[:min(len(e.Message), 8)])
	}
	if want := "xxxxxxxx|line 7|line 6|line 5|line 4"; strings.Join(got, "|") != want {
		t.Errorf("r's log = %q, want %q (newest first, bounded to %d)", strings.Join(got, "|"), want, limit)
	}
	if len(es[0].Message) > MaxLogMessage || !es[0].Time.Equal(t0.Add(time.Second).Truncate(time.Millisecond)) {
		t.Errorf("newest line: %d bytes at %v; want at most %d bytes, at its own time %v", len(es[0].Message), es[0].Time, MaxLogMessage, t0.Add(time.Second))
	}
	if es, err := s.Log(ctx, other.ID, 0); err != nil || len(es) != 1 || es[0].Level != "warn" || !es[0].Time.Equal(t0.Truncate(time.Millisecond)) {
		t.Errorf("other's log = %+v, %v; want its one warn line at the store's now", es, err)
	}
	mustOK(t, "AppendLogs(nil)", s.AppendLogs(ctx, nil))
}
