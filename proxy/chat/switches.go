package chat

import (
	"context"
	"encoding/json"
)

// A chat's switches (API access, request.go; "Act may submit forms", submit.go) are kept with
// the stored chat as one "setting" item each, its ID the switch's key and its state "on" or
// "off", and read back when the chat is loaded.

// saveSwitch stores the switch key with the chat, once the chat is stored; on reads the
// switch (with c.mu held) and what names it in the log.
func (c *chat) saveSwitch(key, what string, on func() bool) {
	c.mu.Lock()
	id, isOn := c.rec.ID, on()
	c.mu.Unlock()
	if id == "" || c.hub.st == nil {
		return
	}
	state := "off"
	if isOn {
		state = "on"
	}
	b, _ := json.Marshal(chatItem{ID: key, Kind: "setting", State: state})
	if err := c.hub.st.PutChatItem(context.Background(), id, key, b); err != nil {
		c.hub.log.Warn("saving a chat's "+what, "err", err)
	}
}

// switchIn reads the switch key from a stored chat's items (off when there is none).
func switchIn(items []chatItem, key string) bool {
	for _, it := range items {
		if it.ID == key && it.Kind == "setting" {
			return it.State == "on"
		}
	}
	return false
}
