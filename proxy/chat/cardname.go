package chat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/store"
)

// A card names the remixlet it is about, and the name is the agent's. A name can be made to look
// like one the person knows (a Cyrillic letter, a long shared beginning), so the card adds, in
// the proxy's words from the store, what tells them apart (red-team pass 5b): "New remixlet"
// when no version of it runs, else who made it and when ("made by the agent 2 minutes ago").
// A lookalike the agent saved without a card (its own site, no permissions) is still the
// agent's and recent.

// remixletOnCard is the remixlet named name (or its ID) as a card shows it, with link as its
// manager page ("" for none): New when it does not exist or no version of it runs.
func (e *chatEnv) remixletOnCard(ctx context.Context, name, link string) (*cardRemixlet, error) {
	st := e.c.hub.st
	out := &cardRemixlet{Name: httpx.Clip(name, 80), URL: link}
	rx, err := st.Remixlet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		out.New = true
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	out.Name = rx.Name
	if _, ok, err := st.Active(ctx, rx.ID); err != nil {
		return nil, err
	} else if !ok {
		out.New = true
		return out, nil
	}
	vs, err := st.Versions(ctx, rx.ID)
	if err != nil {
		return nil, err
	}
	author := store.AuthorPerson
	if len(vs) > 0 {
		author = vs[0].Author
	}
	out.Made = madeText(author, rx.CreatedAt, time.Now())
	return out, nil
}

// madeText says who made a remixlet and when, in the proxy's words.
func madeText(author store.Author, created, now time.Time) string {
	who := "you"
	if author == store.AuthorAgent {
		who = "the agent"
	}
	switch d := now.Sub(created); {
	case d < time.Minute:
		return "made by " + who + " just now"
	case d < time.Hour:
		return fmt.Sprintf("made by %s %d min ago", who, int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("made by %s %d h ago", who, int(d/time.Hour))
	}
	return "made by " + who + " on " + created.Format("2 Jan 2006")
}
