package panel

import (
	"html/template"
	"io"
	"time"
)

// The manager web UI (https://remix.proxy/manager): server-rendered pages, plain forms with POST,
// no script. The proxy (proxy/manager) reads the store, checks every state-changing request
// (Origin and the per-install form token) and hands these views to the Render functions here.
// Every page is served with "default-src 'none'; style-src 'unsafe-inline'; form-action 'self';
// frame-ancestors 'none'; base-uri 'none'", so a page can neither run script nor be framed.
//
// Permission descriptions in these pages come from sandbox.PermissionText only (PermissionView.
// Text); the author's reason for a permission appears only on the Restore confirmation, labelled
// as the author's words.

var (
	managerListTemplate     = mustManagerPage("manager_list.html")
	managerRemixletTemplate = mustManagerPage("manager_remixlet.html")
	managerHistoryTemplate  = mustManagerPage("manager_history.html")
	managerRestoreTemplate  = mustManagerPage("manager_restore.html")
	managerLogTemplate      = mustManagerPage("manager_log.html")
	managerDeleteTemplate   = mustManagerPage("manager_delete.html")
	managerEditTemplate     = mustManagerPage("manager_edit.html")
	managerApprovalTemplate = mustManagerPage("manager_approval.html")
	managerDataTemplate     = mustManagerPage("manager_data.html")
	managerMessageTemplate  = mustManagerPage("manager_message.html")
)

// mustManagerPage parses the manager's layout together with one page's "title" and "body".
func mustManagerPage(name string) *template.Template {
	return template.Must(template.New(name).ParseFS(templateFiles,
		"templates/manager_layout.html", "templates/"+name))
}

// ManagerBase is in every manager page.
type ManagerBase struct {
	// Token is the per-install form token; every form carries it in the field "csrf".
	Token string
	// Flash is a fixed message from the proxy about the last action, or empty.
	Flash string
	// NoStore says the proxy runs without a store: there is nothing to manage.
	NoStore bool
}

// PermissionView is one permission as the person sees it: its name and the proxy's fixed text.
type PermissionView struct {
	Name string
	Text string // sandbox.PermissionText(Name); never the manifest's reason
}

// LogLine is one line of a remixlet's log.
type LogLine struct {
	Time    time.Time
	Level   string
	Message string
}

// FileView is one file of a version.
type FileView struct {
	Name    string
	Content string
}

// ManagerRow is one remixlet in the list.
type ManagerRow struct {
	ID, Name      string
	State         string // "on", "off" or "archived"
	Sites         string // "every site", a list of hosts, or empty with no active version
	Permissions   []PermissionView
	ActiveVersion int // 0: none
	// RunAt says when its script starts on a page (sandbox.RunAt.Describe); empty with no
	// active version.
	RunAt string
	// Errors are up to three of the newest error lines among its recent log lines; ErrorCount
	// counts all the error lines among them.
	Errors     []LogLine
	ErrorCount int
	// LastRun is when it last started on a page (zero: never), LastRunSite that page's host.
	LastRun     time.Time
	LastRunSite string
}

// ManagerList is the manager's start page.
type ManagerList struct {
	ManagerBase
	Remixlets []ManagerRow
	Paused    []string
}

// ManagerRemixlet is one remixlet: its switches, its active files and its recent log.
type ManagerRemixlet struct {
	ManagerBase
	ManagerRow
	Enabled, Archived bool
	Files             []FileView
	Log               []LogLine
	// Rules are the active version's network rules (rules.json), in file order; RulesNote says
	// why there are none in effect when rules.json exists but cannot be used.
	Rules     []RuleView
	RulesNote string
	// Schedules are its rmx.schedule entries; QueuedMessages counts messages waiting for its
	// next page load.
	Schedules      []ScheduleView
	QueuedMessages int
}

// ScheduleView is one schedule on a remixlet's page.
type ScheduleView struct {
	Name   string
	When   string // "every 5 minutes, next 12:05" or "once, at 2026-12-01 09:00"
	Action string // the fixed action, as JSON
}

// RuleView is one network rule as the manager's table shows it.
type RuleView struct {
	ID, Priority int
	Action       string // "block", "allow", "redirect", "upgradeScheme" or "modifyHeaders"
	// Detail is the redirect destination in full, or the header changes, one per line.
	Detail    string
	Condition string // a readable summary of the condition, one part per line
	// Problem, when set, is why the rule is left out (a limit it breaks).
	Problem string
}

// DiffLine is one line of a line diff: Op is ' ' (same), '-' (removed) or '+' (added).
type DiffLine struct {
	Op   byte
	Text string
}

// FileDiff is the diff of one file against the previous version.
type FileDiff struct {
	Name  string
	Lines []DiffLine
}

// VersionView is one version in the history.
type VersionView struct {
	ID        int64
	Number    int
	Author    string
	Note      string
	CreatedAt time.Time
	Active    bool
	Files     []FileView
	Diffs     []FileDiff // against the previous version; for the first, every line is added
}

// ManagerHistory is a remixlet's history, newest version first.
type ManagerHistory struct {
	ManagerBase
	ID, Name string
	Versions []VersionView
}

// PermissionReason is a permission with the reason its author stored, for the Restore page.
type PermissionReason struct {
	Name, Text, Reason string
}

// ManagerRestore is the confirmation before restoring a version.
type ManagerRestore struct {
	ManagerBase
	ID, Name  string
	VersionID int64
	Number    int
	// ByAgent: the agent wrote the version's code (proxy/manager/restore.go).
	ByAgent     bool
	Sites       string
	Permissions []PermissionReason
	// Review: the agent's code holds permissions or other sites, so the page shows it and the
	// click on Restore is the person's Allow for exactly this: the change (Diffs) from the
	// version running now (BaseVersionID, 0 for none) to the code whose digest is Digest, the
	// code whole (Files) and the approval policy's reasons (Changes, in the proxy's words).
	Review        bool
	BaseVersionID int64
	Digest        string
	Diffs         []FileDiff
	Files         []FileView
	Changes       []string
}

// ManagerLog is a remixlet's log, newest first.
type ManagerLog struct {
	ManagerBase
	ID, Name string
	Entries  []LogLine
}

// ManagerDelete is the confirmation before deleting a remixlet.
type ManagerDelete struct {
	ManagerBase
	ID, Name string
}

// ProblemView is one save-time problem next to the form.
type ProblemView struct {
	Where   string // "script.js:3:14", "manifest.json: permissions[0].reason"
	Message string
	Fix     string
}

// ManagerEdit is the form to create a remixlet (ID empty) or save a new version of one. It
// keeps what the person typed when the save is refused.
type ManagerEdit struct {
	ManagerBase
	ID, Name                string
	Manifest, Script, Style string
	Rules                   string // rules.json; empty for none
	Note                    string
	Problems                []ProblemView
}

// ManagerApproval asks the person to allow a version, in the proxy's fixed words only.
type ManagerApproval struct {
	ManagerBase
	ApprovalID  string
	RemixletID  string
	Name        string
	Number      int
	Sites       string   // "every site you visit" or a list of hosts
	Changes     []string // what is new compared with what was allowed, in fixed words
	Permissions []PermissionView
	ExpiresAt   time.Time
	// State is "pending" while the buttons work; otherwise why they are gone.
	State string
}

// DataRow is one remixlet on the Data and privacy page.
type DataRow struct {
	ID, Name     string
	Versions     int
	StorageKeys  int
	StorageUsed  int64
	StorageLimit int64
	LogLines     int
}

// ManagerData is the "Data and privacy" page.
type ManagerData struct {
	ManagerBase
	DataDir   string
	DBSize    int64 // bytes, -1 when unknown
	Count     int
	Remixlets []DataRow
	Paused    int
}

// ManagerMessage is a short page: an error or a notice, with a link back.
type ManagerMessage struct {
	ManagerBase
	Title   string
	Message string
	Back    string // a path under /manager
}

// RenderManagerList writes the manager's start page.
func RenderManagerList(w io.Writer, p ManagerList) error {
	return render(w, managerListTemplate, "manager list", p)
}

// RenderManagerRemixlet writes one remixlet's page.
func RenderManagerRemixlet(w io.Writer, p ManagerRemixlet) error {
	return render(w, managerRemixletTemplate, "manager remixlet", p)
}

// RenderManagerHistory writes a remixlet's history.
func RenderManagerHistory(w io.Writer, p ManagerHistory) error {
	return render(w, managerHistoryTemplate, "manager history", p)
}

// RenderManagerRestore writes the Restore confirmation.
func RenderManagerRestore(w io.Writer, p ManagerRestore) error {
	return render(w, managerRestoreTemplate, "manager restore", p)
}

// RenderManagerLog writes a remixlet's log.
func RenderManagerLog(w io.Writer, p ManagerLog) error {
	return render(w, managerLogTemplate, "manager log", p)
}

// RenderManagerDelete writes the delete confirmation.
func RenderManagerDelete(w io.Writer, p ManagerDelete) error {
	return render(w, managerDeleteTemplate, "manager delete", p)
}

// RenderManagerEdit writes the create/edit form.
func RenderManagerEdit(w io.Writer, p ManagerEdit) error {
	return render(w, managerEditTemplate, "manager edit", p)
}

// RenderManagerApproval writes the approval page.
func RenderManagerApproval(w io.Writer, p ManagerApproval) error {
	return render(w, managerApprovalTemplate, "manager approval", p)
}

// RenderManagerData writes the Data and privacy page.
func RenderManagerData(w io.Writer, p ManagerData) error {
	return render(w, managerDataTemplate, "manager data", p)
}

// RenderManagerMessage writes a short message page.
func RenderManagerMessage(w io.Writer, p ManagerMessage) error {
	return render(w, managerMessageTemplate, "manager message", p)
}
