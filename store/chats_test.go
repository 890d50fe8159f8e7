package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
)

func TestChatRoundTrip(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	c, err := s.CreateChat(ctx, Chat{Origin: "https://shop.test", URL: "https://shop.test/a", Mode: "build", Provider: "p", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AppendChatMessages(ctx, c.ID, []byte(`{"role":"user","text":"hi"}`), []byte(`{"role":"assistant","text":"hello"}`)); err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{"u1", "a1", "u1"} { // u1 again replaces in place
		if err := s.PutChatItem(ctx, c.ID, key, []byte(fmt.Sprintf(`{"n":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	c.InputTokens, c.OutputTokens, c.Mode = 10, 20, "ask"
	if err := s.UpdateChat(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := s.Chat(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.InputTokens != 10 || got.OutputTokens != 20 || got.Mode != "ask" || got.Origin != "https://shop.test" {
		t.Errorf("Chat = %+v", got)
	}
	msgs, err := s.ChatMessages(ctx, c.ID)
	if err != nil || len(msgs) != 2 || string(msgs[1]) != `{"role":"assistant","text":"hello"}` {
		t.Errorf("ChatMessages = %q, %v", msgs, err)
	}
	items, err := s.ChatItems(ctx, c.ID)
	if err != nil || len(items) != 2 || items[0].Key != "u1" || string(items[0].Body) != `{"n":2}` || items[1].Key != "a1" {
		t.Errorf("ChatItems = %+v, %v; want u1 (replaced, first) then a1", items, err)
	}
	if err := s.ReplaceChatMessages(ctx, c.ID, []byte(`{"role":"user","text":"summary"}`)); err != nil {
		t.Fatal(err)
	}
	msgs, _ = s.ChatMessages(ctx, c.ID)
	if len(msgs) != 1 {
		t.Errorf("after ReplaceChatMessages: %d messages, want 1", len(msgs))
	}
	if items, _ := s.ChatItems(ctx, c.ID); len(items) != 2 {
		t.Errorf("ReplaceChatMessages dropped items: %d left", len(items))
	}
	if err := s.DeleteChat(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Chat(ctx, c.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Chat after delete = %v, want ErrNotFound", err)
	}
	if items, _ := s.ChatItems(ctx, c.ID); len(items) != 0 {
		t.Errorf("items survive their chat: %d", len(items))
	}
}

func TestChatItemsAreBounded(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	c, err := s.CreateChat(ctx, Chat{Origin: "https://a.test"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < maxChatItems+5; i++ {
		if err := s.PutChatItem(ctx, c.ID, fmt.Sprint("k", i), []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	items, err := s.ChatItems(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != maxChatItems || items[0].Key != "k5" {
		t.Errorf("got %d items starting at %s, want %d starting at k5", len(items), items[0].Key, maxChatItems)
	}
}

func TestChatErrors(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	ctx := context.Background()
	if _, err := s.CreateChat(ctx, Chat{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("CreateChat without origin = %v, want ErrInvalid", err)
	}
	if err := s.PutChatItem(ctx, "ch_missing", "k", []byte("{}")); err == nil {
		t.Error("PutChatItem on a missing chat succeeded")
	}
	c, _ := s.CreateChat(ctx, Chat{Origin: "https://a.test"})
	if err := s.PutChatItem(ctx, c.ID, "k", make([]byte, maxChatEntrySize+1)); !errors.Is(err, ErrInvalid) {
		t.Errorf("oversized item = %v, want ErrInvalid", err)
	}
	if err := s.UpdateChat(ctx, Chat{ID: "ch_missing"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("UpdateChat(missing) = %v, want ErrNotFound", err)
	}
}

// TestChatsSurviveReopen: a chat is resumable after a proxy restart.
func TestChatsSurviveReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "remixproxy.db")
	ctx := context.Background()
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := s.CreateChat(ctx, Chat{Origin: "https://a.test"})
	s.AppendChatMessages(ctx, c.ID, []byte(`{"role":"user","text":"x"}`))
	s.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if msgs, err := s.ChatMessages(ctx, c.ID); err != nil || len(msgs) != 1 {
		t.Errorf("after reopen: %q, %v", msgs, err)
	}
}
