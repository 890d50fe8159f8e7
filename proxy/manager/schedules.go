package manager

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/store"
)

// Schedules on a remixlet's manager page (rmx.schedule, remixlet/schedule.go): what the proxy will do for
// it later, and a Cancel for each.

// scheduleViews reads a remixlet's schedules and queued messages for its page.
func scheduleViews(ctx context.Context, st *store.Store, remixletID string) ([]panel.ScheduleView, int, error) {
	scs, err := st.Schedules(ctx, remixletID)
	if err != nil {
		return nil, 0, err
	}
	var out []panel.ScheduleView
	for _, sc := range scs {
		when := "once, at " + sc.Next.Local().Format("2006-01-02 15:04")
		if sc.Every > 0 {
			when = fmt.Sprintf("every %s, next %s", interval(sc.Every), sc.Next.Local().Format("2006-01-02 15:04"))
		}
		out = append(out, panel.ScheduleView{Name: sc.Name, When: when, Action: string(sc.Action)})
	}
	n, err := st.QueuedMessages(ctx, remixletID)
	if err != nil {
		return nil, 0, err
	}
	return out, n, nil
}

// managerCancelSchedule is the person's Cancel on one of a remixlet's schedules.
func (s *Manager) managerCancelSchedule(w http.ResponseWriter, r *http.Request, st *store.Store) {
	rx, err := s.remixletFromPath(r.Context(), st, r)
	if err != nil {
		s.managerError(w, err)
		return
	}
	if err := st.DeleteSchedule(r.Context(), rx.ID, r.PostForm.Get("name")); err != nil {
		s.managerError(w, err)
		return
	}
	seeOther(w, "/manager/r/"+rx.ID, "schedulegone")
}

// interval says d in words: "5 minutes", "1 hour", "2 days", "90 minutes".
func interval(d time.Duration) string {
	m := int(d.Round(time.Minute) / time.Minute)
	unit, n := "minute", m
	switch {
	case m >= 24*60 && m%(24*60) == 0:
		unit, n = "day", m/(24*60)
	case m >= 60 && m%60 == 0:
		unit, n = "hour", m/60
	}
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}
