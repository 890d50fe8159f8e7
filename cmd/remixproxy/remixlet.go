package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/remixproxy/remixproxy/sandbox"
	"github.com/remixproxy/remixproxy/store"
)

// The remixlet and site commands are for people who keep remixlets in a folder and for scripted
// checks. They work on the store directly, whether the proxy runs or not (SQLite in WAL mode with
// busy retries: a concurrent save by the proxy is never lost), and go through the same save-time
// checks and the same activation rule as the manager and the agent.

// cliIO is where a command reads answers and writes output; tests replace it.
type cliIO struct {
	in       io.Reader
	out, err io.Writer
}

var stdio = cliIO{in: os.Stdin, out: os.Stdout, err: os.Stderr}

// openStore opens the store in dataDir with the activation rule of saves made without a page
// (the manager and the CLI): anything beyond what the person already allowed needs approval.
func openStore(dataDir string) (*store.Store, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("creating data dir: %w", err)
	}
	return store.Open(filepath.Join(dataDir, "remixproxy.db"), store.Options{
		NeedsApproval: func(active, next store.Files, chatHost string) (bool, string) {
			return sandbox.FilesNeedApproval(active, next, chatHost)
		},
	})
}

func runRemixlet(args []string) error { return remixletCommand(args, stdio) }

func remixletCommand(args []string, io cliIO) error {
	if len(args) == 0 {
		return errors.New("usage: remixproxy remixlet add DIR | list | show NAME | log NAME | pause NAME | resume NAME | delete NAME")
	}
	sub, args := args[0], args[1:]
	var dataDir string
	fs := newFlagSet("remixlet "+sub, &dataDir)
	fs.SetOutput(io.err)
	yes := fs.Bool("yes", false, "approve what needs approval without asking (for scripts); with delete: do not ask")
	note := fs.String("note", "", "add: a note stored with the version")
	limit := fs.Int("n", 50, "log: how many entries, newest first")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 && sub != "list" {
		return fmt.Errorf("remixlet %s: want exactly one argument, got %d", sub, len(pos))
	}
	st, err := openStore(dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	switch sub {
	case "add":
		return addRemixlet(ctx, st, pos[0], *note, *yes, io)
	case "list":
		return listRemixlets(ctx, st, io)
	case "show":
		return showRemixlet(ctx, st, pos[0], io)
	case "log":
		return showLog(ctx, st, pos[0], *limit, io)
	case "pause", "resume":
		r, err := st.Remixlet(ctx, pos[0])
		if err != nil {
			return fmt.Errorf("remixlet %s: %w", sub, err)
		}
		if err := st.SetEnabled(ctx, r.ID, sub == "resume"); err != nil {
			return err
		}
		fmt.Fprintf(io.out, "%s: %sd (open tabs change on their next load)\n", r.Name, sub)
		return nil
	case "delete":
		r, err := st.Remixlet(ctx, pos[0])
		if err != nil {
			return fmt.Errorf("remixlet delete: %w", err)
		}
		if !*yes && !confirm(io, fmt.Sprintf("Delete %q with all its versions, log and data?", r.Name)) {
			fmt.Fprintln(io.out, "Not deleted.")
			return nil
		}
		if err := st.DeleteRemixlet(ctx, r.ID); err != nil {
			return err
		}
		fmt.Fprintf(io.out, "%s: deleted, with its versions, permissions, log and data\n", r.Name)
		return nil
	}
	return fmt.Errorf("remixlet: unknown subcommand %q", sub)
}

// readRemixletDir reads the remixlet files found in dir.
func readRemixletDir(dir string) (store.Files, error) {
	files := store.Files{}
	for _, name := range []string{sandbox.ManifestFile, sandbox.ScriptFile, sandbox.StyleFile, sandbox.RulesFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading remixlet folder: %w", err)
		}
		files[name] = b
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("reading remixlet folder %s: no manifest.json, script.js, style.css or rules.json there", dir)
	}
	return files, nil
}

func addRemixlet(ctx context.Context, st *store.Store, dir, note string, yes bool, io cliIO) error {
	files, err := readRemixletDir(dir)
	if err != nil {
		return err
	}
	m, problems := sandbox.CheckFiles(files)
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(io.err, p.Error())
		}
		return fmt.Errorf("remixlet add: %d problem(s) in %s; nothing was saved", len(problems), dir)
	}
	r, err := st.Remixlet(ctx, m.Name)
	if errors.Is(err, store.ErrNotFound) {
		r, err = st.CreateRemixlet(ctx, m.Name)
	}
	if err != nil {
		return fmt.Errorf("remixlet add: %w", err)
	}
	v, err := st.SaveVersion(ctx, r.ID, files, store.AuthorPerson, note)
	if err != nil {
		return fmt.Errorf("remixlet add: %w", err)
	}
	fmt.Fprintf(io.out, "%s: saved version %d (%s)\n", r.Name, v.Number, v.Digest)
	err = st.Activate(ctx, v.ID)
	if err == nil {
		fmt.Fprintf(io.out, "%s: version %d is active\n", r.Name, v.Number)
		return nil
	}
	if !errors.Is(err, store.ErrApprovalRequired) {
		return fmt.Errorf("remixlet add: %w", err)
	}
	printApprovalCard(io.out, m)
	a, err := st.RequestApproval(ctx, v.ID, "")
	if err != nil {
		return fmt.Errorf("remixlet add: %w", err)
	}
	if !yes && !confirm(io, "Allow and apply?") {
		if err := st.Decline(ctx, a.ID); err != nil {
			return err
		}
		fmt.Fprintf(io.out, "%s: not allowed; version %d is saved but not active (the previous version, if any, keeps running)\n", r.Name, v.Number)
		return nil
	}
	if err := st.Approve(ctx, a.ID); err != nil {
		return err
	}
	if err := st.ActivateApproved(ctx, a.ID); err != nil {
		return fmt.Errorf("remixlet add: %w", err)
	}
	fmt.Fprintf(io.out, "%s: version %d is active\n", r.Name, v.Number)
	return nil
}

// printApprovalCard shows what the person is asked to allow, in the proxy's own fixed words: the
// sites and each permission's fixed text. The manifest's reasons are the author's words and are
// never shown as the permission's description.
func printApprovalCard(w io.Writer, m *sandbox.Manifest) {
	fmt.Fprintf(w, "\n%q asks to run with:\n", m.Name)
	sites := m.Sites()
	if sites.Every {
		fmt.Fprintln(w, "  - on every site you visit")
	} else {
		hosts := append([]string(nil), sites.Hosts...)
		sort.Strings(hosts)
		fmt.Fprintf(w, "  - on these sites: %s\n", strings.Join(hosts, ", "))
	}
	for _, p := range m.Permissions {
		fmt.Fprintf(w, "  - %s\n", sandbox.PermissionText(p.Name))
	}
	fmt.Fprintln(w)
}

func confirm(io cliIO, question string) bool {
	fmt.Fprintf(io.out, "%s [y/N] ", question)
	line, _ := bufio.NewReader(io.in).ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	return answer == "y" || answer == "yes"
}

func listRemixlets(ctx context.Context, st *store.Store, io cliIO) error {
	rs, err := st.ListRemixlets(ctx)
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		fmt.Fprintln(io.out, "No remixlets yet. Add one with: remixproxy remixlet add DIR")
		return nil
	}
	for _, r := range rs {
		state := "on"
		switch {
		case r.Archived:
			state = "archived"
		case !r.Enabled:
			state = "off"
		}
		line := fmt.Sprintf("%-24s %-8s", r.Name, state)
		if v, ok, err := st.Active(ctx, r.ID); err == nil && ok {
			if m, problems := sandbox.ParseManifest(v.Files[sandbox.ManifestFile]); len(problems) == 0 {
				line += fmt.Sprintf(" v%-3d %s", v.Number, siteSummary(m))
				var perms []string
				for _, p := range m.Permissions {
					perms = append(perms, p.Name)
				}
				if len(perms) > 0 {
					line += "  [" + strings.Join(perms, ", ") + "]"
				}
				if m.RunAt != sandbox.RunDocumentEnd { // the default goes unsaid
					line += "  run_at " + string(m.RunAt)
				}
			}
		} else {
			line += " (no active version)"
		}
		fmt.Fprintln(io.out, line)
	}
	return nil
}

func siteSummary(m *sandbox.Manifest) string {
	s := m.Sites()
	if s.Every {
		return "every site"
	}
	return strings.Join(s.Hosts, ", ")
}

func showRemixlet(ctx context.Context, st *store.Store, name string, io cliIO) error {
	r, err := st.Remixlet(ctx, name)
	if err != nil {
		return fmt.Errorf("remixlet show: %w", err)
	}
	versions, err := st.Versions(ctx, r.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(io.out, "%s (%s), enabled %v, %d version(s)\n", r.Name, r.ID, r.Enabled, len(versions))
	for _, v := range versions {
		mark := " "
		if v.ID == r.ActiveVersionID {
			mark = "*"
		}
		fmt.Fprintf(io.out, "%s v%d %s by %s %s %s\n", mark, v.Number, v.CreatedAt.Format("2006-01-02 15:04"), v.Author, v.Digest[:19], v.Note)
	}
	v, ok, err := st.Active(ctx, r.ID)
	if err != nil || !ok {
		return err
	}
	names := make([]string, 0, len(v.Files))
	for n := range v.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(io.out, "\n--- %s (v%d)\n%s\n", n, v.Number, strings.TrimRight(string(v.Files[n]), "\n"))
	}
	return nil
}

func showLog(ctx context.Context, st *store.Store, name string, limit int, io cliIO) error {
	r, err := st.Remixlet(ctx, name)
	if err != nil {
		return fmt.Errorf("remixlet log: %w", err)
	}
	entries, err := st.Log(ctx, r.ID, limit)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		fmt.Fprintf(io.out, "%s: the log is empty\n", r.Name)
	}
	for _, e := range entries {
		fmt.Fprintf(io.out, "%s %-5s %s\n", e.Time.Format("2006-01-02 15:04:05"), e.Level, e.Message)
	}
	return nil
}

// parseInterspersed parses flags wherever they stand among the positional arguments
// ("add DIR --yes" as well as "add --yes DIR") and returns the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func runSite(args []string) error { return siteCommand(args, stdio) }

func siteCommand(args []string, io cliIO) error {
	if len(args) == 0 {
		return errors.New("usage: remixproxy site pause HOST | resume HOST | list")
	}
	sub, args := args[0], args[1:]
	var dataDir string
	fs := newFlagSet("site "+sub, &dataDir)
	fs.SetOutput(io.err)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	st, err := openStore(dataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx := context.Background()
	switch sub {
	case "list":
		hosts, err := st.PausedSites(ctx)
		if err != nil {
			return err
		}
		if len(hosts) == 0 {
			fmt.Fprintln(io.out, "No paused sites.")
		}
		for _, h := range hosts {
			fmt.Fprintln(io.out, h)
		}
		return nil
	case "pause", "resume":
		if len(pos) != 1 {
			return fmt.Errorf("site %s: want one HOST", sub)
		}
		op := st.PauseSite
		if sub == "resume" {
			op = st.ResumeSite
		}
		if err := op(ctx, pos[0]); err != nil {
			return fmt.Errorf("site %s: %w", sub, err)
		}
		fmt.Fprintf(io.out, "%s: remixlets %sd there\n", pos[0], sub)
		return nil
	}
	return fmt.Errorf("site: unknown subcommand %q", sub)
}
