package manager

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/remixproxy/remixproxy/internal/weburl"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// Restore: a copy of an earlier version becomes the remixlet's next version and is activated.
//
// A version the person wrote restores under the person's rules, as any save of theirs
// (sandbox.NeedsApproval without a chat host: more sites, new permissions or network rules go
// to the approval page). A version the agent wrote is not the person's act, even when the
// person clicks Restore (red-team pass 6e, OPEN-ITEMS 22): an agent's save the person declined
// on its card stays in the history, and under the person's rules it would apply with one click
// on a page that never showed its code — same sites, same permissions, no card. So when the
// code is the agent's (agentCode: a version of this remixlet with the same digest was saved by
// the agent and none by the person — a restore's copy of the agent's code stays the agent's)
// and it holds a permission or runs on more than one site (needsReview), the restore page
// shows what the person approves: the change of code from the version running now, the code
// whole, its sites, permissions and the policy's reasons. The page's Restore button — armed as
// every manager button is (manager_arm.js) — is then the Allow, for exactly what the page
// showed: the form carries the running version it was shown against and the restored code's
// digest, and the restore goes through an approval record bound to that running version
// (store.RequestApproval, Approve, ActivateApproved). If another version became active since,
// or the code is not what was shown, nothing is applied and the person is told to look again.

// restoreTarget is the version the restore path names and whether its code is the agent's
// (agentCode): the first steps of the restore page and of the restore alike. An error names the
// step (the manager's error page shows it) and wraps the store's, so ErrNotFound stays a 404.
func restoreTarget(ctx context.Context, st *store.Store, r *http.Request, rx store.Remixlet) (store.Version, bool, error) {
	v, err := versionFromPath(ctx, st, r, rx)
	if err != nil {
		return store.Version{}, false, fmt.Errorf("restore: read the version: %w", err)
	}
	byAgent, err := agentCode(ctx, st, v)
	if err != nil {
		return store.Version{}, false, fmt.Errorf("restore: read who wrote version %d: %w", v.Number, err)
	}
	return v, byAgent, nil
}

func (s *Manager) managerRestoreConfirm(w http.ResponseWriter, r *http.Request) {
	s.withRemixlet(w, r, func(st *store.Store, rx store.Remixlet) {
		ctx := r.Context()
		v, byAgent, err := restoreTarget(ctx, st, r, rx)
		if err != nil {
			s.managerError(w, err)
			return
		}
		p := panel.ManagerRestore{ManagerBase: s.base(r), ID: rx.ID, Name: rx.Name, VersionID: v.ID, Number: v.Number,
			ByAgent: byAgent}
		m, probs := sandbox.ParseManifest(v.Files[sandbox.ManifestFile])
		if len(probs) == 0 {
			p.Sites = sitesText(m)
			for _, perm := range m.Permissions {
				p.Permissions = append(p.Permissions, panel.PermissionReason{Name: perm.Name,
					Text: sandbox.PermissionText(perm.Name), Reason: perm.Reason})
			}
		} else {
			p.Sites = "(its manifest no longer passes the checks)"
		}
		if byAgent && needsReview(m) {
			active, _, err := st.Active(ctx, rx.ID)
			if err != nil {
				s.managerError(w, fmt.Errorf("restore: read the running version: %w", err))
				return
			}
			p.Review = true
			p.BaseVersionID, p.Digest = active.ID, v.Digest // what the click allows (managerRestore)
			p.Diffs = fileDiffs(active.Files, v.Files)
			p.Files = fileViews(v.Files)
			for _, reason := range sandbox.FilesApprovalReasons(active.Files, v.Files, "") {
				p.Changes = append(p.Changes, reason.Text)
			}
		}
		writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerRestore(b, p) })
	})
}

func (s *Manager) managerRestore(w http.ResponseWriter, r *http.Request, st *store.Store) {
	s.withPostRemixlet(w, r, st, func(rx store.Remixlet, _ *sandbox.Manifest) {
		ctx := r.Context()
		old, byAgent, err := restoreTarget(ctx, st, r, rx)
		if err != nil {
			s.managerError(w, err)
			return
		}
		m, _ := sandbox.ParseManifest(old.Files[sandbox.ManifestFile])
		if byAgent && needsReview(m) {
			s.restoreReviewed(w, r, st, rx, old, m)
			return
		}
		v, err := st.Restore(ctx, old.ID)
		if err != nil {
			s.managerError(w, fmt.Errorf("restore: copy version %d: %w", old.Number, err))
			return
		}
		s.activate(w, r, st, rx, v, m, "restored")
	})
}

// restoreReviewed restores the agent's code old that the restore page showed (see the top of
// the file): the click is the Allow for the change from the running version the form names.
func (s *Manager) restoreReviewed(w http.ResponseWriter, r *http.Request, st *store.Store, rx store.Remixlet, old store.Version, m *sandbox.Manifest) {
	ctx := r.Context()
	again := "/manager/r/" + rx.ID + "/restore/" + strconv.FormatInt(old.ID, 10)
	stale := func() {
		s.managerFail(w, http.StatusConflict, "The running version changed",
			"Nothing was restored: another version of "+rx.Name+" became active after the restore page was shown, so the change it showed is not the change this would make. Look at the restore page again.", again)
	}
	base, err := strconv.ParseInt(r.PostForm.Get("base"), 10, 64)
	if err != nil || r.PostForm.Get("digest") != old.Digest {
		stale() // a form without what it was shown (an old page): ask again
		return
	}
	active, _, err := st.Active(ctx, rx.ID)
	if err != nil {
		s.managerError(w, fmt.Errorf("restore: read the running version: %w", err))
		return
	}
	if active.ID != base {
		stale()
		return
	}
	v, err := st.Restore(ctx, old.ID)
	if err != nil {
		s.managerError(w, fmt.Errorf("restore: copy version %d: %w", old.Number, err))
		return
	}
	a, err := st.RequestApproval(ctx, v.ID, "")
	if err != nil {
		s.managerError(w, fmt.Errorf("restore: request the approval of version %d: %w", v.Number, err))
		return
	}
	if a.BaseVersionID != base || a.Digest != old.Digest {
		s.declineLeft(st, a.ID)
		stale()
		return
	}
	if err := st.Approve(ctx, a.ID); err != nil {
		s.declineLeft(st, a.ID)
		s.managerError(w, fmt.Errorf("restore: approve version %d: %w", v.Number, err))
		return
	}
	if err := st.ActivateApproved(ctx, a.ID); err != nil {
		s.declineLeft(st, a.ID) // an approval that did not apply is not left approved
		if errors.Is(err, store.ErrBaseChanged) {
			stale()
			return
		}
		s.managerError(w, fmt.Errorf("restore: activate version %d: %w", v.Number, err))
		return
	}
	var oldManifest *sandbox.Manifest
	if base != 0 {
		oldManifest, _ = sandbox.ParseManifest(active.Files[sandbox.ManifestFile])
	}
	s.activator.Applied(ctx, "", oldManifest, m)
	seeOther(w, "/manager/r/"+rx.ID, "restored")
}

// declineLeft declines the approval a restore requested and did not apply, so that it is not
// left pending or approved. The person is already answered (stale or the error page); a failure
// here is logged with the approval, for it stays in the store's list until decided.
func (s *Manager) declineLeft(st *store.Store, id string) {
	if err := st.Decline(context.Background(), id); err != nil {
		s.log.Error("restore: decline the approval it did not apply", "approval", id, "err", err)
	}
}

// agentCode reports whether v's code is the agent's: a version of its remixlet with the same
// files (digest) was saved by the agent, and none by the person. A restore's copy carries no
// author of its own, so it is judged by the versions it copies.
func agentCode(ctx context.Context, st *store.Store, v store.Version) (bool, error) {
	if v.Author == store.AuthorPerson {
		return false, nil
	}
	vs, err := st.Versions(ctx, v.RemixletID)
	if err != nil {
		return false, err
	}
	agent := false
	for _, o := range vs {
		if o.Digest != v.Digest {
			continue
		}
		switch o.Author {
		case store.AuthorPerson:
			return false, nil
		case store.AuthorAgent:
			agent = true
		}
	}
	return agent, nil
}

// needsReview reports whether restoring the agent's code with manifest m needs the person to
// see it: it holds a permission, or runs on more than one site (registrable domain) or on
// every site — where the code can reach beyond the one page it changes. A manifest that does
// not parse (nil) is reviewed too.
func needsReview(m *sandbox.Manifest) bool {
	if m == nil || len(m.Permissions) > 0 {
		return true
	}
	sites := m.Sites()
	if sites.Every {
		return true
	}
	seen := map[string]bool{}
	for _, h := range sites.Hosts {
		seen[weburl.Site(trimWildcard(h))] = true
	}
	return len(seen) > 1
}

// trimWildcard drops a host pattern's leading "*.".
func trimWildcard(h string) string {
	if len(h) > 2 && h[:2] == "*." {
		return h[2:]
	}
	return h
}

// fileDiffs is the change of each file from a to b, in the manager's file order.
func fileDiffs(a, b store.Files) []panel.FileDiff {
	var out []panel.FileDiff
	for _, name := range fileOrder {
		x, inA := a[name]
		y, inB := b[name]
		if (!inA && !inB) || (inA && inB && bytes.Equal(x, y)) {
			continue
		}
		out = append(out, panel.FileDiff{Name: name, Lines: panel.LineDiff(string(x), string(y))})
	}
	return out
}
