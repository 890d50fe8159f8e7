package httpx

import "errors"

// Refusal is a call refused by a policy check: Why, in the proxy's words, is what the remixlet's
// log or the model is told. Standing marks a refusal for a remixlet's standing (paused, page not
// covered …) rather than for the call itself.
type Refusal struct {
	Why      string
	Standing bool
}

func (e *Refusal) Error() string { return e.Why }

// Refuse returns a Refusal for why.
func Refuse(why string) error { return &Refusal{Why: why} }

// RefusalText is the words of a refusal in err's chain, or err's text when there is none.
func RefusalText(err error) string {
	var ref *Refusal
	if errors.As(err, &ref) {
		return ref.Why
	}
	return err.Error()
}

// ErrNotResolved is returned for upstream hosts that the proxy may not dial because it runs
// with only --resolve hosts (Config.OnlyResolved).
var ErrNotResolved = errors.New("host not in --resolve and the proxy runs with only resolved hosts")

// ErrLoop is returned when a request would be sent back to the proxy itself.
var ErrLoop = errors.New("the request points back at the proxy itself")
