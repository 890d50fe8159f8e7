package remixlet

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/remixproxy/remixproxy/proxy/internal/httpx"
	"github.com/remixproxy/remixproxy/store"
)

// Remixlet log lines and "last run" records are written to the store in batches: the store
// syncs every transaction to disk (WAL, synchronous=FULL), and a chatty remixlet's console.log
// would otherwise cost one sync per line. remixletLogWriter queues lines without blocking (the
// sandbox supervisor's log callbacks must not block), and writes them in one transaction when 50
// are queued or 200 ms after the first one, and on close. The queue is bounded: beyond
// defaultLogQueue lines, new ones are dropped and counted per remixlet, and the next batch adds a
// "N log lines dropped" line to each such remixlet's log. Runs are coalesced per remixlet (only
// the newest matters) and written with the next batch.

// Defaults of the remixlet log writer.
const (
	defaultLogFlushEvery = 200 * time.Millisecond
	defaultLogBatch      = 50
	defaultLogQueue      = 2000
	// logWriteTimeout bounds one batch write, including the final one on close.
	logWriteTimeout = 5 * time.Second
)

// logSink is what the writer needs of the store.
type logSink interface {
	AppendLogs(ctx context.Context, entries []store.NewLogEntry) error
	RecordRuns(ctx context.Context, runs []store.Run) error
}

// remixletLogWriter batches remixlet log lines and runs on their way to the store.
type remixletLogWriter struct {
	sink     logSink
	log      *slog.Logger
	now      func() time.Time
	every    time.Duration // flush at most this long after the first queued line
	batch    int           // flush at once when this many lines are queued
	maxQueue int           // lines queued beyond this are dropped and counted

	kick chan struct{} // a batch is full, or close was called
	done chan struct{} // the loop has written everything and returned

	mu      sync.Mutex
	queue   []store.NewLogEntry
	dropped map[string]int       // lines dropped since the last batch, by remixlet
	runs    map[string]store.Run // newest run not yet written, by remixlet
	last    map[string]store.Run // newest run seen, by remixlet (what the manager shows)
	closed  bool
}

func newRemixletLogWriter(sink logSink, log *slog.Logger) *remixletLogWriter {
	w := &remixletLogWriter{sink: sink, log: log, now: time.Now,
		every: defaultLogFlushEvery, batch: defaultLogBatch, maxQueue: defaultLogQueue,
		kick: make(chan struct{}, 1), done: make(chan struct{}),
		dropped: map[string]int{}, runs: map[string]store.Run{}, last: map[string]store.Run{}}
	return w
}

// start runs the writer's loop; close stops it.
func (w *remixletLogWriter) start() *remixletLogWriter {
	go func() {
		defer httpx.Recovered(w.log, "the remixlet log writer")
		w.loop()
	}()
	return w
}

// add queues one line; it never blocks. After close, or with the queue full, the line is
// dropped (counted, when the queue is full).
func (w *remixletLogWriter) add(remixlet, level, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	if len(w.queue) >= w.maxQueue {
		w.dropped[remixlet]++
		return
	}
	w.queue = append(w.queue, store.NewLogEntry{RemixletID: remixlet, Time: w.now(), Level: level, Message: msg})
	if len(w.queue) == w.batch {
		w.poke()
	}
}

// ran records that a remixlet started on a page of site, now.
func (w *remixletLogWriter) ran(remixlet, site string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r := store.Run{RemixletID: remixlet, At: w.now(), Site: site}
	w.last[remixlet] = r
	if !w.closed {
		w.runs[remixlet] = r
	}
}

// lastRun is the newest run this writer saw for the remixlet (since the proxy started); the
// store has older ones.
func (w *remixletLogWriter) lastRun(remixlet string) (store.Run, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.last[remixlet]
	return r, ok
}

func (w *remixletLogWriter) poke() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// close writes what is queued and stops the writer. Lines added afterwards are dropped.
func (w *remixletLogWriter) close() {
	w.mu.Lock()
	already := w.closed
	w.closed = true
	w.mu.Unlock()
	if !already {
		w.poke()
	}
	<-w.done
}

func (w *remixletLogWriter) loop() {
	defer close(w.done)
	t := time.NewTimer(w.every)
	defer t.Stop()
	for {
		select {
		case <-w.kick:
		case <-t.C:
		}
		closed := w.flush()
		if closed {
			return
		}
		t.Reset(w.every)
	}
}

// take empties the queue: the lines, a "dropped" line per remixlet that lost some, and the
// runs. closed reports whether close was called.
func (w *remixletLogWriter) take() (lines []store.NewLogEntry, runs []store.Run, closed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines, w.queue = w.queue, nil
	if len(w.dropped) > 0 {
		ids := make([]string, 0, len(w.dropped))
		for id := range w.dropped {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			lines = append(lines, store.NewLogEntry{RemixletID: id, Time: w.now(), Level: "warn",
				Message: fmt.Sprintf("%d log lines dropped: the remixlet logged faster than the log is written", w.dropped[id])})
		}
		clear(w.dropped)
	}
	for _, r := range w.runs {
		runs = append(runs, r)
	}
	clear(w.runs)
	return lines, runs, w.closed
}

// flush writes one batch; it reports whether the writer is closed (and so done).
func (w *remixletLogWriter) flush() bool {
	lines, runs, closed := w.take()
	ctx, cancel := context.WithTimeout(context.Background(), logWriteTimeout)
	defer cancel()
	if err := w.sink.AppendLogs(ctx, lines); err != nil {
		w.log.Warn("writing remixlet logs", "lines", len(lines), "err", err)
	}
	if err := w.sink.RecordRuns(ctx, runs); err != nil {
		w.log.Warn("recording remixlet runs", "runs", len(runs), "err", err)
	}
	return closed
}
