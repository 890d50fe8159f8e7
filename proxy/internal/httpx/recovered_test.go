package httpx

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for a logger on another goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestRecoveredLogsAndGoesOn(t *testing.T) {
	var buf syncBuffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer Recovered(log, "a test goroutine")
		var m map[string]int
		m["boom"] = 1 // a nil-map write panics
	}()
	<-done
	if s := buf.String(); !strings.Contains(s, "recovered from a panic") || !strings.Contains(s, "a test goroutine") {
		t.Errorf("log = %q, want the panic recovered and named", s)
	}
}
