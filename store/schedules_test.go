package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestSchedules(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	other := mustCreate(t, s, "other")
	t0 := time.UnixMilli(1_700_000_000_000).UTC()

	put := func(id, name string, every time.Duration, next time.Time) error {
		return s.PutSchedule(ctx, Schedule{RemixletID: id, Name: name, Every: every, Next: next, Action: []byte(`{"message":1}`)})
	}
	mustOK(t, "put every", put(r.ID, "every", time.Minute, t0.Add(time.Minute)))
	mustOK(t, "put once", put(r.ID, "once", 0, t0.Add(30*time.Second)))
	mustOK(t, "put other", put(other.ID, "later", time.Hour, t0.Add(time.Hour)))
	mustOK(t, "replace every", put(r.ID, "every", 2*time.Minute, t0.Add(2*time.Minute)))

	for _, tt := range []struct {
		name string
		err  error
		want error
	}{
		{"empty name", put(r.ID, "", time.Minute, t0), ErrInvalid},
		{"long name", put(r.ID, strings.Repeat("n", MaxScheduleName+1), time.Minute, t0), ErrInvalid},
		{"unknown remixlet", put("rx_nope", "x", time.Minute, t0), ErrNotFound},
		{"no action", s.PutSchedule(ctx, Schedule{RemixletID: r.ID, Name: "x", Next: t0}), ErrInvalid},
	} {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: error = %v, want %v", tt.name, tt.err, tt.want)
		}
	}

	list, err := s.Schedules(ctx, r.ID)
	if err != nil || len(list) != 2 || list[0].Name != "every" || list[0].Every != 2*time.Minute || !list[0].Next.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("Schedules = %+v, %v; want every (2m, replaced) and once", list, err)
	}

	due, err := s.DueSchedules(ctx, t0.Add(2*time.Minute), 100)
	if err != nil || len(due) != 2 || due[0].Name != "once" || due[1].Name != "every" {
		t.Fatalf("DueSchedules = %+v, %v; want once then every", due, err)
	}
	// A one-time schedule is deleted when it has run; a repeating one moves on.
	if ok, err := s.FinishSchedule(ctx, due[0], time.Time{}); !ok || err != nil {
		t.Errorf("FinishSchedule(once) = %v, %v", ok, err)
	}
	if ok, err := s.FinishSchedule(ctx, due[1], t0.Add(4*time.Minute)); !ok || err != nil {
		t.Errorf("FinishSchedule(every) = %v, %v", ok, err)
	}
	// Finishing a run of a schedule replaced meanwhile changes nothing.
	if ok, err := s.FinishSchedule(ctx, due[1], t0.Add(time.Hour)); ok || err != nil {
		t.Errorf("FinishSchedule(stale) = %v, %v; want false, nil", ok, err)
	}
	if due, _ := s.DueSchedules(ctx, t0.Add(3*time.Minute), 100); len(due) != 0 {
		t.Errorf("after finishing, due at +3m: %+v", due)
	}

	// At most MaxSchedules per remixlet; replacing one at the limit still works.
	for i := 0; i < MaxSchedules-1; i++ {
		mustOK(t, "fill", put(r.ID, fmt.Sprint("s", i), time.Minute, t0))
	}
	if err := put(r.ID, "one too many", time.Minute, t0); !errors.Is(err, ErrInvalid) {
		t.Errorf("schedule %d: error = %v, want ErrInvalid", MaxSchedules+1, err)
	}
	mustOK(t, "replace at the limit", put(r.ID, "s0", time.Hour, t0))

	mustOK(t, "delete one", s.DeleteSchedule(ctx, r.ID, "s0"))
	mustOK(t, "delete missing", s.DeleteSchedule(ctx, r.ID, "s0"))
	mustOK(t, "delete all", s.DeleteSchedules(ctx, r.ID))
	if list, _ := s.Schedules(ctx, r.ID); len(list) != 0 {
		t.Errorf("after DeleteSchedules: %+v", list)
	}
	if list, _ := s.Schedules(ctx, other.ID); len(list) != 1 {
		t.Errorf("the other remixlet's schedules: %+v, want 1", list)
	}
	// Deleting the remixlet deletes its schedules.
	mustOK(t, "delete remixlet", s.DeleteRemixlet(ctx, other.ID))
	if due, _ := s.DueSchedules(ctx, t0.Add(24*time.Hour), 100); len(due) != 0 {
		t.Errorf("a deleted remixlet's schedules are still due: %+v", due)
	}
}

func TestMessages(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	r := mustCreate(t, s, "r")
	other := mustCreate(t, s, "other")

	if _, err := s.QueueMessage(ctx, r.ID, "s", []byte(strings.Repeat("1", MaxMessageBytes+1))); !errors.Is(err, ErrInvalid) {
		t.Errorf("oversized message: error = %v, want ErrInvalid", err)
	}
	if _, err := s.QueueMessage(ctx, "rx_nope", "s", []byte("1")); err == nil {
		t.Error("a message for an unknown remixlet was queued")
	}
	for i := 0; i < MaxMessages+2; i++ {
		dropped, err := s.QueueMessage(ctx, r.ID, "s", []byte(fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		if want := 0; i >= MaxMessages && dropped != 1 || i < MaxMessages && dropped != want {
			t.Errorf("message %d: dropped %d", i, dropped)
		}
	}
	if _, err := s.QueueMessage(ctx, other.ID, "t", []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	got, err := s.TakeMessages(ctx, r.ID)
	if err != nil || len(got) != MaxMessages || string(got[0].Data) != "2" || string(got[len(got)-1].Data) != fmt.Sprint(MaxMessages+1) {
		t.Fatalf("TakeMessages = %d messages (first %q), %v; want the newest %d, oldest first", len(got), got[0].Data, err, MaxMessages)
	}
	if again, err := s.TakeMessages(ctx, r.ID); err != nil || len(again) != 0 {
		t.Errorf("second TakeMessages = %v, %v; want none (each is handed out once)", again, err)
	}
	if o, _ := s.TakeMessages(ctx, other.ID); len(o) != 1 || o[0].Schedule != "t" || string(o[0].Data) != `{"a":1}` {
		t.Errorf("the other remixlet's messages: %+v", o)
	}
}
