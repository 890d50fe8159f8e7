package manager

import (
	"net/http"

	"github.com/remixproxy/remixproxy/store"
)

// A chat's approval — the agent's save waiting on the chat's activation card (it has a page
// session) — is decided on that card, which shows the change of code; the manager's approval
// page shows sites, permissions and reasons but no code, so it neither shows nor decides one
// (red-team pass 6e: the person approves code, not only permissions). The card's ID is shown
// nowhere, so this is a second layer, not the only one.

// leftToChat answers for a chat's approval a and reports true; false for the manager's own.
func (s *Manager) leftToChat(w http.ResponseWriter, a store.Approval) bool {
	if a.PageSession == "" {
		return false
	}
	s.managerFail(w, http.StatusConflict, "Decided in the chat",
		"The agent asked for this in a chat: decide it on its card there, which shows the code it would run. Nothing was changed here.",
		"/manager/r/"+a.RemixletID)
	return true
}
