package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests in this file run the test binary itself as child processes (TestHelperSaver,
// guarded by helperEnv) that save versions into one database, like the proxy and the CLI
// writing at once, and kill them mid-save.

const helperEnv = "REMIXPROXY_STORE_HELPER"

// helperFiles returns a version's files of a few hundred KB, different for each
// worker and iteration.
func helperFiles(worker, i int) Files {
	rng := rand.New(rand.NewPCG(uint64(worker), uint64(i)))
	script := make([]byte, 200<<10+rng.IntN(200<<10))
	for j := range script {
		script[j] = 'a' + byte(rng.IntN(26))
	}
	return Files{
		"manifest.json": fmt.Appendf(nil, `{"name":"worker %d","api":1,"matches":["https://example.com/*"]}`, worker),
		"script.js":     script,
		"style.css":     fmt.Appendf(nil, ".w%d-i%d { display: none }", worker, i),
	}
}

// TestHelperSaver is not a test: it is the child process of the tests below. It opens the
// database named by REMIXPROXY_STORE_HELPER_DB, prints "ready", then saves versions of
// the remixlet REMIXPROXY_STORE_HELPER_NAME — REMIXPROXY_STORE_HELPER_COUNT of them, or
// until killed when that is 0 — printing "saved NUMBER DIGEST" after each commit.
func TestHelperSaver(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		t.Skip("only runs as the child process TestCrashDuringSave and TestConcurrentWriterProcesses start; those tests run it")
	}
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "helper error: "+format+"\n", args...)
		os.Exit(3)
	}
	worker, _ := strconv.Atoi(os.Getenv(helperEnv + "_WORKER"))
	count, _ := strconv.Atoi(os.Getenv(helperEnv + "_COUNT"))
	name := os.Getenv(helperEnv + "_NAME")
	ctx := context.Background()

	s, err := Open(os.Getenv(helperEnv+"_DB"), Options{})
	if err != nil {
		fail("%v", err)
	}
	r, err := s.CreateRemixlet(ctx, name)
	if errors.Is(err, ErrDuplicateName) {
		r, err = s.Remixlet(ctx, name)
	}
	if err != nil {
		fail("%v", err)
	}
	fmt.Println("ready")
	for i := 0; count == 0 || i < count; i++ {
		v, err := s.SaveVersion(ctx, r.ID, helperFiles(worker, i), AuthorAgent, fmt.Sprintf("worker %d save %d", worker, i))
		if err != nil {
			fail("save %d: %v", i, err)
		}
		fmt.Printf("saved %d %s\n", v.Number, v.Digest)
		if err := s.AppendLog(ctx, r.ID, "info", fmt.Sprintf("worker %d saved %d", worker, v.Number)); err != nil {
			fail("log %d: %v", i, err)
		}
		if err := s.StorageSet(ctx, r.ID, fmt.Sprintf("w%d", worker), strconv.Itoa(i)); err != nil {
			fail("storage %d: %v", i, err)
		}
	}
	if err := s.Close(); err != nil {
		fail("%v", err)
	}
}

// helper is one running child process.
type helper struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	ready  chan struct{}
	done   chan struct{} // closed when stdout is fully read

	mu    sync.Mutex
	saved map[int]string // number → digest, as reported after each commit
}

func startHelper(t *testing.T, db, name string, worker, count int) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSaver$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		helperEnv+"=1",
		helperEnv+"_DB="+db,
		helperEnv+"_NAME="+name,
		helperEnv+"_WORKER="+strconv.Itoa(worker),
		helperEnv+"_COUNT="+strconv.Itoa(count),
	)
	h := &helper{cmd: cmd, ready: make(chan struct{}), done: make(chan struct{}), saved: map[int]string{}}
	cmd.Stderr = &h.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting helper: %v", err)
	}
	go h.read(stdout)
	return h
}

func (h *helper) read(r io.Reader) {
	defer close(h.done)
	sc := bufio.NewScanner(r)
	readyClosed := false
	for sc.Scan() {
		line := sc.Text()
		if line == "ready" && !readyClosed {
			close(h.ready)
			readyClosed = true
			continue
		}
		var n int
		var digest string
		if _, err := fmt.Sscanf(line, "saved %d %s", &n, &digest); err == nil {
			h.mu.Lock()
			h.saved[n] = digest
			h.mu.Unlock()
		}
	}
	if !readyClosed {
		close(h.ready)
	}
}

// wait waits for the child to exit, after its output is read.
func (h *helper) wait() error {
	<-h.done
	return h.cmd.Wait()
}

// checkDB reopens the database and checks what the crash and concurrency tests promise:
// every reported save is there with its digest, every version's files hash to its digest,
// numbers run from 1 without gaps, and SQLite's integrity check passes. It returns the
// number of versions.
func checkDB(t *testing.T, db, name string, reported map[int]string) int {
	t.Helper()
	ctx := context.Background()
	s, err := Open(db, Options{})
	if err != nil {
		t.Fatalf("reopening after the children: %v", err)
	}
	defer s.Close()

	var integrity string
	if err := s.db.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&integrity); err != nil || integrity != "ok" {
		t.Errorf("PRAGMA integrity_check = %q, %v; want ok", integrity, err)
	}
	var fkProblems int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_foreign_key_check`).Scan(&fkProblems); err != nil || fkProblems != 0 {
		t.Errorf("foreign key violations = %d, %v; want 0", fkProblems, err)
	}
	r, err := s.Remixlet(ctx, name)
	if err != nil {
		t.Fatalf("Remixlet(%q): %v", name, err)
	}
	vs, err := s.Versions(ctx, r.ID) // reading checks each version's files against its digest
	if err != nil {
		t.Fatalf("Versions: %v", err)
	}
	byNumber := map[int]Version{}
	for i, v := range vs {
		if v.Number != i+1 {
			t.Errorf("version %d has number %d, want %d (contiguous from 1)", i, v.Number, i+1)
		}
		if got := Digest(v.Files); got != v.Digest {
			t.Errorf("version %d: files hash to %s, recorded %s", v.Number, got, v.Digest)
		}
		byNumber[v.Number] = v
	}
	for n, digest := range reported {
		v, ok := byNumber[n]
		if !ok {
			t.Errorf("reported save %d is missing: a committed save was lost", n)
		} else if v.Digest != digest {
			t.Errorf("version %d has digest %s, the child reported %s", n, v.Digest, digest)
		}
	}
	return len(vs)
}

// TestCrashDuringSave kills a saving child with SIGKILL at random moments and checks that
// no version is lost or half-written.
func TestCrashDuringSave(t *testing.T) {
	if testing.Short() {
		t.Skip("starts and kills child processes; run without -short to include it")
	}
	db := filepath.Join(t.TempDir(), "remixproxy.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	reported := map[int]string{}
	const kills = 5
	for k := range kills {
		h := startHelper(t, db, "crashy", k, 0)
		select {
		case <-h.ready:
		case <-time.After(60 * time.Second):
			h.cmd.Process.Kill()
			h.wait()
			t.Fatalf("child %d not ready after 60s; stderr:\n%s", k, h.stderr.String())
		}
		time.Sleep(time.Duration(20+rng.IntN(300)) * time.Millisecond)
		if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatalf("killing child %d: %v", k, err)
		}
		err := h.wait()
		if strings.Contains(h.stderr.String(), "helper error") {
			t.Fatalf("child %d failed before the kill: %s", k, h.stderr.String())
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child %d ended with %v, want killed by SIGKILL; stderr:\n%s", k, err, h.stderr.String())
		}
		h.mu.Lock()
		for n, d := range h.saved {
			if prev, ok := reported[n]; ok && prev != d {
				t.Errorf("version %d reported twice with digests %s and %s", n, prev, d)
			}
			reported[n] = d
		}
		t.Logf("kill %d: child reported %d saves", k, len(h.saved))
		h.mu.Unlock()
	}
	n := checkDB(t, db, "crashy", reported)
	if n == 0 {
		t.Error("no version was saved before the kills; the test proved nothing")
	}
	t.Logf("%d versions survive %d kills, %d reported", n, kills, len(reported))
}

// TestConcurrentWriterProcesses runs two children saving to the same new database at once
// (as the CLI does while the proxy runs) and checks that no save is lost and no
// "database is locked" error surfaces.
func TestConcurrentWriterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes; run without -short to include it")
	}
	db := filepath.Join(t.TempDir(), "remixproxy.db")
	const perChild = 25
	hs := []*helper{
		startHelper(t, db, "shared", 1, perChild),
		startHelper(t, db, "shared", 2, perChild),
	}
	reported := map[int]string{}
	for i, h := range hs {
		if err := h.wait(); err != nil {
			t.Errorf("child %d: %v; stderr:\n%s", i, err, h.stderr.String())
		}
		if msg := strings.ToLower(h.stderr.String()); strings.Contains(msg, "locked") || strings.Contains(msg, "busy") {
			t.Errorf("child %d reported a lock error: %s", i, h.stderr.String())
		}
		for n, d := range h.saved {
			if _, dup := reported[n]; dup {
				t.Errorf("version number %d given to both children", n)
			}
			reported[n] = d
		}
	}
	if n := checkDB(t, db, "shared", reported); n != 2*perChild {
		t.Errorf("versions = %d, want %d (no save lost)", n, 2*perChild)
	}
	s, err := Open(db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, _ := s.Remixlet(context.Background(), "shared")
	if es, err := s.Log(context.Background(), r.ID, 0); err != nil || len(es) != 2*perChild {
		t.Errorf("log lines = %d, %v; want %d", len(es), err, 2*perChild)
	}
}

// TestConcurrentSavesInProcess: many goroutines saving through one Store lose nothing.
func TestConcurrentSavesInProcess(t *testing.T) {
	s, _ := openTestStore(t, Options{})
	r := mustCreate(t, s, "r")
	const goroutines, each = 8, 5
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*each)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.SaveVersion(context.Background(), r.ID, sampleFiles(fmt.Sprintf("g%d(%d)", g, i)), AuthorAgent, ""); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("SaveVersion: %v", err)
	}
	if n := checkDB(t, s.path, "r", nil); n != goroutines*each {
		t.Errorf("versions = %d, want %d", n, goroutines*each)
	}
}
