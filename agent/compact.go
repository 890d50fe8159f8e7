package agent

import "fmt"

// DefaultContextBudget bounds the bytes of message text sent to the model (about 30 000
// tokens), leaving room for the system prompt and the reply in the smallest context windows
// the supported models have.
const DefaultContextBudget = 120 << 10

// keepRecent is how many of the newest messages compaction never touches.
const keepRecent = 8

const elided = "[older tool result removed to keep the conversation short; call the tool again if you need it]"

// compact shortens msgs when their text is over budget: first the results of older tool calls
// are replaced by a short note, then whole older turns (a user message and everything up to
// the next one) are dropped, never the newest turn. Tool calls and their results stay in
// pairs. It reports whether anything changed.
func compact(msgs []Message, budget int) ([]Message, bool) {
	if size(msgs) <= budget {
		return msgs, false
	}
	out := append([]Message(nil), msgs...)
	for i := 0; i < len(out)-keepRecent && size(out) > budget; i++ {
		if out[i].Role == RoleTool && out[i].Text != elided {
			out[i].Text = elided
		}
	}
	dropped := 0
	for size(out) > budget {
		next := -1
		for i := 1; i < len(out); i++ {
			if out[i].Role == RoleUser {
				next = i
				break
			}
		}
		if next < 0 {
			break // one turn left: the newest is never dropped
		}
		out = out[next:]
		dropped++
	}
	if dropped > 0 {
		note := Message{Role: RoleUser, Text: fmt.Sprintf("[%d earlier exchanges of this chat were removed to keep it short.]", dropped)}
		if len(out) > 0 && out[0].Role == RoleUser {
			out[0].Text = note.Text + "\n\n" + out[0].Text
		} else {
			out = append([]Message{note}, out...)
		}
	}
	return out, true
}

func size(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Text)
		for _, c := range m.ToolCalls {
			n += len(c.Name) + len(c.Arguments)
		}
	}
	return n
}
