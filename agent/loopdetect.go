package agent

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// Loop detection (issue 6): browser agents' most common failure is doing the same thing over
// and over. Each tool call of a turn is reduced to a key — its name, its arguments and its
// outcome — and the last loopWindow keys are checked by several detectors; the strongest action
// any of them asks for wins:
//
//   - the same call with the same outcome loopRepeatNudge times in the window → a nudge, a
//     warning appended to that call's result; loopRepeatStop times → the turn stops;
//   - two calls alternating, A-B-A-B → a nudge.
//
// Nudges count up until the model makes progress (loopHealthyReset healthy calls in a row,
// calls no detector objected to); loopMaxNudges nudges without progress stop the turn with a
// notice for the person.
const (
	loopWindow       = 6
	loopRepeatNudge  = 3
	loopRepeatStop   = 6
	loopMaxNudges    = 4
	loopHealthyReset = 2
)

// loopAction is what a detector asks for; a larger one is stronger.
type loopAction int

const (
	loopOK loopAction = iota
	loopNudge
	loopStop
)

// loopDetector watches one turn's tool calls.
type loopDetector struct {
	recent  []string // keys of the last loopWindow calls, oldest first
	nudges  int      // nudges since the last progress
	healthy int      // healthy calls in a row
}

// loopVerdict is the detector's answer for one call.
type loopVerdict struct {
	// Warning, when set, is appended to the call's result for the model.
	Warning string
	// Stop, when set, ends the turn; it is the notice for the person.
	Stop string
}

func loopKey(call ToolCall, result string) string {
	h := sha256.New()
	h.Write([]byte(call.Name))
	h.Write([]byte{0})
	h.Write([]byte(strings.TrimSpace(call.Arguments)))
	h.Write([]byte{0})
	h.Write([]byte(result))
	return string(h.Sum(nil))
}

// observe records one call with its outcome and says what to do.
func (d *loopDetector) observe(call ToolCall, result string) loopVerdict {
	key := loopKey(call, result)
	d.recent = append(d.recent, key)
	if len(d.recent) > loopWindow {
		d.recent = d.recent[len(d.recent)-loopWindow:]
	}

	action := loopOK
	var why string
	same := 0
	for _, k := range d.recent {
		if k == key {
			same++
		}
	}
	switch {
	case same >= loopRepeatStop:
		action = loopStop
		why = fmt.Sprintf("made the same %s call with the same result %d times", call.Name, same)
	case same >= loopRepeatNudge:
		action = loopNudge
		why = fmt.Sprintf("You made this exact call with the same result %d times in this turn (%s).", same, call.Name)
	}
	if n := len(d.recent); action < loopNudge && n >= 4 {
		a, b := d.recent[n-4], d.recent[n-3]
		if a != b && d.recent[n-2] == a && d.recent[n-1] == b {
			action = loopNudge
			why = "Your last four calls alternate between the same two calls with the same results (A-B-A-B)."
		}
	}

	if action == loopOK {
		d.healthy++
		if d.healthy >= loopHealthyReset {
			d.nudges = 0
		}
		return loopVerdict{}
	}
	d.healthy = 0
	if action == loopNudge {
		d.nudges++
		if d.nudges >= loopMaxNudges {
			action = loopStop
			why = fmt.Sprintf("kept repeating itself after %d warnings", d.nudges-1)
		}
	}
	if action == loopStop {
		return loopVerdict{Stop: "Stopped: the agent " + why + " without making progress. Send a message to go on, perhaps with a hint."}
	}
	return loopVerdict{Warning: why + " It is not working: do something different (read the page again, try another element or approach), or finish and tell the person what you found."}
}
