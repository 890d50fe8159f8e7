package remixlet

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/sandbox"
)

// TestPlanSync: what one sync decides for a page, given what it runs and what matches it now.
// The plan's effects (sandboxes, stylesheets, releases) are tested end to end in
// runner_nav_test.go and runner_release_test.go; this checks the decisions alone.
func TestPlanSync(t *testing.T) {
	start := &sandbox.Manifest{RunAt: sandbox.RunDocumentStart}
	idle := &sandbox.Manifest{RunAt: sandbox.RunDocumentIdle}
	cand := func(id string, version int64, m *sandbox.Manifest, style, script bool) candidate {
		return candidate{id: id, versionID: version, manifest: m, hasStyle: style, hasScript: script}
	}
	// running: remixlet ID → version; each runs with a stylesheet and an operation in flight.
	tests := []struct {
		name    string
		running map[string]int64
		cands   []candidate
		want    string
		matched string
	}{
		{"new candidates", nil,
			[]candidate{cand("a", 1, start, true, true), cand("b", 1, start, true, false), cand("c", 1, idle, false, true)},
			"stopped= failed= clear= released= styles=a,b scripts=a waiting=c", "a:1,b:1,c:1"},
		{"same version left alone", map[string]int64{"a": 1},
			[]candidate{cand("a", 1, start, true, true)},
			"stopped= failed= clear= released= styles= scripts= waiting=", "a:1"},
		{"no longer matches", map[string]int64{"a": 1, "b": 1},
			[]candidate{cand("b", 1, start, true, true)},
			"stopped=a failed=a clear=a released=a styles= scripts= waiting=", "b:1"},
		{"another version active", map[string]int64{"a": 1},
			[]candidate{cand("a", 2, start, true, true)},
			"stopped=a failed=a clear= released=a styles=a scripts=a waiting=", "a:2"},
		{"nothing matches", map[string]int64{"a": 1, "b": 2},
			nil,
			"stopped=a,b failed=a,b clear=a,b released=a,b styles= scripts= waiting=", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := (&Runner{}).newPageRun(pageConn{id: "s", url: func() string { return "https://site.test/" }})
			for id, version := range tt.running {
				p.matched[id] = version
				p.styled[id] = true
				p.running[id] = &runningRemixlet{host: &remixletHost{p: p, id: id}}
				p.pending[uint64(len(p.pending))] = pendingOp{remixlet: id}
			}
			plan, ok := p.planSync(tt.cands)
			if !ok {
				t.Fatal("planSync: got ended, want a plan")
			}
			if got := describePlan(p, plan); got != tt.want {
				t.Errorf("got plan %q, want %q", got, tt.want)
			}
			var matched []string
			for id, version := range p.matched {
				matched = append(matched, fmt.Sprintf("%s:%d", id, version))
			}
			slices.Sort(matched)
			if got := strings.Join(matched, ","); got != tt.matched {
				t.Errorf("got matched %q, want %q", got, tt.matched)
			}
			for _, rr := range plan.stopped {
				if !rr.host.stopped {
					t.Errorf("got %s's host not marked stopped, want it marked", rr.host.id)
				}
			}
		})
	}
}

// TestPlanSyncEndedPage: a page that ended takes nothing on.
func TestPlanSyncEndedPage(t *testing.T) {
	p := (&Runner{}).newPageRun(pageConn{id: "s", url: func() string { return "https://site.test/" }})
	p.ended = true
	if _, ok := p.planSync([]candidate{{id: "a", versionID: 1, hasStyle: true}}); ok {
		t.Error("planSync: got a plan, want ok false for an ended page")
	}
	if len(p.matched) != 0 {
		t.Errorf("got matched %v, want none", p.matched)
	}
}

// describePlan names what a plan holds, each list sorted, and the scripts left waiting.
func describePlan(p *pageRun, plan syncPlan) string {
	names := func(ids []string) string {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		return strings.Join(ids, ",")
	}
	var stopped, failed, styles, scripts, waiting []string
	for _, rr := range plan.stopped {
		stopped = append(stopped, rr.host.id)
	}
	for _, op := range plan.failed {
		failed = append(failed, op.remixlet)
	}
	for _, c := range plan.styles {
		styles = append(styles, c.id)
	}
	for _, c := range plan.scripts {
		scripts = append(scripts, c.id)
	}
	for id := range p.waiting {
		waiting = append(waiting, id)
	}
	return fmt.Sprintf("stopped=%s failed=%s clear=%s released=%s styles=%s scripts=%s waiting=%s",
		names(stopped), names(failed), names(plan.clear), names(plan.released), names(styles), names(scripts), names(waiting))
}
