package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on manifest fields.
const (
	maxNameLen        = 80
	maxDescriptionLen = 1000
	maxReasonLen      = 300
	maxPatterns       = 100
	maxPermissions    = 50
)

// A Manifest is a remixlet's parsed manifest.json. It is the record of what the person
// approved: the store keeps the manifest of the active version, and every privileged call is
// checked against it.
type Manifest struct {
	Name        string
	Description string
	// API is the remixlet API version the code was written against.
	API int
	// Matches are Chrome match patterns (see ParsePattern) for the pages the remixlet runs on.
	Matches []string
	// ExcludeMatches are match patterns for pages it must not run on, even when Matches cover
	// them. Empty by default.
	ExcludeMatches []string
	// RunAt is when script.js starts on a page (see RunAt). Default RunDocumentEnd, also when
	// the field is absent (manifests written before it existed).
	RunAt RunAt
	// Permissions are the capabilities the remixlet asks for, each with the model's or
	// person's reason. The reason is stored and shown on restore only; a permission is always
	// described to the person with PermissionText.
	Permissions []Permission

	matches, excludes []*Pattern
}

// A Permission is one entry of a manifest's "permissions" list.
type Permission struct {
	Name   string
	Reason string
}

// A Problem is one reason a remixlet's files were refused. File is always set; Field (a JSON
// path such as "permissions[2].reason") or Line and Column (1-based) say where; Fix says what to
// do instead. Problems are written for the agent and the person alike.
type Problem struct {
	File   string
	Field  string
	Line   int
	Column int
	// Message says what is wrong; Fix, when set, says what to do instead.
	Message string
	Fix     string
}

// Error formats the problem as "file:line:col: field: message — fix", leaving out the parts
// that are not set.
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, ":%d", p.Column)
		}
	}
	b.WriteString(": ")
	if p.Field != "" {
		b.WriteString(p.Field)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	if p.Fix != "" {
		b.WriteString(" — ")
		b.WriteString(p.Fix)
	}
	return b.String()
}

// manifestFields are the keys manifest.json may contain.
var manifestFields = map[string]bool{
	"name": true, "description": true, "api": true, "matches": true,
	"exclude_matches": true, "permissions": true, "run_at": true,
}

// ParseManifest parses and validates manifest.json. The JSON is read strictly: a syntax error,
// trailing data, a duplicated key, an unknown field or a value of the wrong type is a Problem.
// It returns a nil Manifest whenever there are problems.
func ParseManifest(b []byte) (*Manifest, []Problem) {
	if p, ok := checkStrictJSON(ManifestFile, b); !ok {
		return nil, []Problem{p}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, []Problem{{File: ManifestFile, Message: "must be a JSON object",
			Fix: `start with {"name": ..., "api": 1, "matches": [...]}`}}
	}
	var probs []Problem
	add := func(field, msg, fix string) {
		probs = append(probs, Problem{File: ManifestFile, Field: field, Message: msg, Fix: fix})
	}
	for k := range top {
		if !manifestFields[k] {
			add(k, "unknown field", "remove it; the fields are name, description, api, matches, exclude_matches, permissions and run_at")
		}
	}
	m := &Manifest{}
	decode := func(field string, v any, want string) bool {
		raw, ok := top[field]
		if !ok {
			return false
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			add(field, "must be "+want, "")
			return false
		}
		return true
	}

	// name
	if !decode("name", &m.Name, "a string") {
		if _, ok := top["name"]; !ok {
			add("name", "missing", "give the remixlet a short name (1 to 80 characters)")
		}
	} else if n := utf8.RuneCountInString(strings.TrimSpace(m.Name)); n == 0 || utf8.RuneCountInString(m.Name) > maxNameLen {
		add("name", fmt.Sprintf("must be 1 to %d characters", maxNameLen), "give the remixlet a short name")
	} else if hasControl(m.Name) {
		add("name", "contains a control character", "use plain text on one line")
	}

	// description
	if decode("description", &m.Description, "a string") && utf8.RuneCountInString(m.Description) > maxDescriptionLen {
		add("description", fmt.Sprintf("longer than %d characters", maxDescriptionLen), "shorten it")
	}

	// api
	if _, ok := top["api"]; !ok {
		add("api", "missing", fmt.Sprintf(`add "api": %d`, APIVersion))
	} else if decode("api", &m.API, "an integer") && !apiSupported(m.API) {
		add("api", fmt.Sprintf("version %d is not supported (supported: %s)", m.API, supportedAPIs()),
			fmt.Sprintf(`use "api": %d`, APIVersion))
	}

	// matches and exclude_matches
	if _, ok := top["matches"]; !ok {
		add("matches", "missing", `list the pages it runs on, e.g. ["https://example.com/*"]`)
	} else if decode("matches", &m.Matches, "a list of match patterns") {
		if len(m.Matches) == 0 {
			add("matches", "empty", `list the pages it runs on, e.g. ["https://example.com/*"]`)
		}
		m.matches = parsePatterns("matches", m.Matches, add)
	}
	if decode("exclude_matches", &m.ExcludeMatches, "a list of match patterns") {
		m.excludes = parsePatterns("exclude_matches", m.ExcludeMatches, add)
	}

	// run_at
	m.RunAt = RunDocumentEnd
	if _, ok := top["run_at"]; ok {
		var s string
		if decode("run_at", &s, "a string: "+runAtList()) {
			if r, err := ParseRunAt(s); err != nil {
				add("run_at", err.Error(), `use "document_end" (the default: after the page is parsed), "document_start" or "document_idle"`)
			} else {
				m.RunAt = r
			}
		}
	}

	// permissions
	var perms []struct {
		Name   *string `json:"name"`
		Reason *string `json:"reason"`
	}
	if decode("permissions", &perms, `a list of {"name": ..., "reason": ...} objects`) {
		if len(perms) > maxPermissions {
			add("permissions", fmt.Sprintf("more than %d permissions", maxPermissions), "ask only for what the remixlet uses")
		}
		seen := map[string]bool{}
		for i, p := range perms {
			field := fmt.Sprintf("permissions[%d]", i)
			if p.Name == nil {
				add(field+".name", "missing", "name the permission, e.g. \"storage\"")
				continue
			}
			name := *p.Name
			if err := ValidatePermission(name); err != nil {
				add(field+".name", err.Error(), "use one of: "+strings.Join(knownPermissionForms, ", "))
				continue
			}
			if seen[name] {
				add(field+".name", fmt.Sprintf("%q is listed twice", name), "list each permission once")
				continue
			}
			seen[name] = true
			reason := ""
			if p.Reason != nil {
				reason = *p.Reason
			}
			switch {
			case strings.TrimSpace(reason) == "":
				add(field+".reason", "missing", fmt.Sprintf("say in one sentence why the remixlet needs %q", name))
			case utf8.RuneCountInString(reason) > maxReasonLen:
				add(field+".reason", fmt.Sprintf("longer than %d characters", maxReasonLen), "say it in one sentence")
			case hasControl(reason):
				add(field+".reason", "contains a control character", "use plain text on one line")
			}
			m.Permissions = append(m.Permissions, Permission{Name: name, Reason: reason})
		}
	}
	if len(probs) > 0 {
		return nil, probs
	}
	return m, nil
}

func parsePatterns(field string, raw []string, add func(field, msg, fix string)) []*Pattern {
	if len(raw) > maxPatterns {
		add(field, fmt.Sprintf("more than %d patterns", maxPatterns), "use wildcards such as *://*.example.com/*")
	}
	var out []*Pattern
	seen := map[string]bool{}
	for i, s := range raw {
		f := fmt.Sprintf("%s[%d]", field, i)
		if seen[s] {
			add(f, fmt.Sprintf("%q is listed twice", s), "list each pattern once")
			continue
		}
		seen[s] = true
		p, err := ParsePattern(s)
		if err != nil {
			add(f, err.Error(), `use Chrome match-pattern syntax, e.g. "https://*.example.com/*" or "<all_urls>"`)
			continue
		}
		out = append(out, p)
	}
	return out
}

// apiSupported reports whether this build runs remixlets written for API version v: every
// version from MinAPIVersion to APIVersion (see runtime.go).
func apiSupported(v int) bool { return v >= MinAPIVersion && v <= APIVersion }

func supportedAPIs() string {
	if MinAPIVersion == APIVersion {
		return fmt.Sprint(APIVersion)
	}
	return fmt.Sprintf("%d to %d", MinAPIVersion, APIVersion)
}

func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// checkStrictJSON reports the first syntax error, trailing data or duplicated object key in b,
// with its line and column. It returns ok when b is one well-formed JSON value.
func checkStrictJSON(file string, b []byte) (Problem, bool) {
	if !utf8.Valid(b) {
		return Problem{File: file, Message: "is not valid UTF-8", Fix: "save the file as UTF-8"}, false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		expect bool // in an object: the next string token is a key
	}
	var stack []*frame
	at := func(off int64) (int, int) { return lineCol(b, int(off)) }
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) > 0 {
				l, c := at(int64(len(b)))
				return Problem{File: file, Line: l, Column: c, Message: "invalid JSON: unexpected end of input",
					Fix: "close every { and ["}, false
			}
			break
		}
		if err != nil {
			off := dec.InputOffset()
			var se *json.SyntaxError
			if errors.As(err, &se) {
				off = se.Offset
			}
			l, c := at(off)
			return Problem{File: file, Line: l, Column: c, Message: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: "),
				Fix: "write strict JSON (double-quoted keys, no comments, no trailing commas)"}, false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expect {
			if key, ok := tok.(string); ok {
				if top.keys[key] {
					for start < int64(len(b)) && strings.IndexByte(" \t\r\n,", b[start]) >= 0 {
						start++
					}
					l, c := at(start)
					return Problem{File: file, Line: l, Column: c, Message: fmt.Sprintf("key %q appears twice", key),
						Fix: "keep one of them"}, false
				}
				top.keys[key] = true
				top.expect = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			if top != nil && top.object {
				top.expect = true
			}
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, expect: true})
		case json.Delim('['):
			if top != nil && top.object {
				top.expect = true
			}
			stack = append(stack, &frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			if top != nil && top.object {
				top.expect = true
			}
		}
		if len(stack) == 0 {
			// One complete top-level value: anything but whitespace after it is trailing data.
			if rest := bytes.TrimLeft(b[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
				l, c := at(int64(len(b) - len(rest)))
				return Problem{File: file, Line: l, Column: c, Message: "data after the end of the JSON value",
					Fix: "remove it; the file holds exactly one JSON value"}, false
			}
			break
		}
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return Problem{File: file, Message: "is empty", Fix: "write a JSON value"}, false
	}
	return Problem{}, true
}

// lineCol turns a byte offset into a 1-based line and column (columns count runes).
func lineCol(b []byte, off int) (line, col int) {
	if off > len(b) {
		off = len(b)
	}
	if off < 0 {
		off = 0
	}
	line = 1 + bytes.Count(b[:off], []byte{'\n'})
	lineStart := bytes.LastIndexByte(b[:off], '\n') + 1
	return line, 1 + utf8.RuneCount(b[lineStart:off])
}
