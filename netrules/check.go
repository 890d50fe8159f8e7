package netrules

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Sites are the pages a remixlet runs on, at host granularity (sandbox.Manifest.Sites gives
// them): Every, or hosts written "example.com" (that host) or "*.example.com" (it and every
// subdomain). They bound where the remixlet's rules act and where a redirect may go; on a
// request, a redirect goes only within the requesting page's site, the request's own site or
// to Fetch (redirectscope.go).
type Sites struct {
	Every bool
	Hosts []string
	// Fetch are the hosts the remixlet's fetch: permissions name (lowercase, no trailing dot):
	// a redirect may go there from any of its pages.
	Fetch []string
}

// Covers reports whether a page on host is on one of the sites.
func (s Sites) Covers(host string) bool {
	if s.Every {
		return true
	}
	host = normHost(host)
	if host == "" {
		return false
	}
	for _, h := range s.Hosts {
		if base, ok := strings.CutPrefix(h, "*."); ok {
			if host == base || strings.HasSuffix(host, "."+base) {
				return true
			}
		} else if host == h || strings.HasPrefix(h, "[") && host == normHost(h) { // a pattern's "[::1]" is "::1" here
			return true
		}
	}
	return false
}

// coversDomain reports whether every host under domain d (d itself and its subdomains, as a
// rule's domain list means it) is on one of the sites.
func (s Sites) coversDomain(d string) bool {
	if s.Every {
		return true
	}
	for _, h := range s.Hosts {
		if base, ok := strings.CutPrefix(h, "*."); ok && (d == base || strings.HasSuffix(d, "."+base)) {
			return true
		}
	}
	return false
}

// touchesDomain reports whether some host under domain d is on one of the sites.
func (s Sites) touchesDomain(d string) bool {
	if s.coversDomain(d) {
		return true
	}
	for _, h := range s.Hosts {
		h = strings.TrimPrefix(h, "*.")
		if h == d || strings.HasSuffix(h, "."+d) {
			return true
		}
	}
	return false
}

// forbiddenHeaders are the headers no rule may set, remove or append to, lowercase. They are
// security headers (the policy a site sets for itself and the credentials the browser sends),
// headers that would make the browser load or send something elsewhere (Location, Refresh,
// Link, reporting endpoints), and headers that frame the message or belong to the browser
// (Sec-*) or the proxy (X-Remixproxy*). ForbiddenHeader also refuses the prefixes below.
var forbiddenHeaders = map[string]string{
	"content-security-policy":             "security",
	"content-security-policy-report-only": "security",
	"set-cookie":                          "security",
	"set-cookie2":                         "security",
	"cookie":                              "security",
	"cookie2":                             "security",
	"origin":                              "security",
	"authorization":                       "security",
	"www-authenticate":                    "security",
	"strict-transport-security":           "security",
	"x-frame-options":                     "security",
	"x-content-type-options":              "security",
	"x-xss-protection":                    "security",
	"referrer-policy":                     "security",
	"permissions-policy":                  "security",
	"feature-policy":                      "security",
	"document-policy":                     "security",
	"origin-agent-cluster":                "security",
	"timing-allow-origin":                 "security",
	"clear-site-data":                     "security",
	"x-permitted-cross-domain-policies":   "security",
	"expect-ct":                           "security",
	"location":                            "load",
	"refresh":                             "load",
	"link":                                "load",
	"content-location":                    "load",
	"report-to":                           "load",
	"reporting-endpoints":                 "load",
	"nel":                                 "load",
	"sourcemap":                           "load",
	"x-sourcemap":                         "load",
	"service-worker-allowed":              "load",
	"alt-svc":                             "load",
	"host":                                "framing",
	"content-length":                      "framing",
	"content-encoding":                    "framing",
	"transfer-encoding":                   "framing",
	"connection":                          "framing",
	"keep-alive":                          "framing",
	"upgrade":                             "framing",
	"te":                                  "framing",
	"trailer":                             "framing",
}

var forbiddenPrefixes = map[string]string{
	"access-control-": "security", // CORS
	"cross-origin-":   "security", // Cross-Origin-{Opener,Embedder,Resource}-Policy
	"sec-":            "browser",  // fetch metadata, client hints, WebSocket keys: set by the browser
	"proxy-":          "framing",
	"x-remixproxy":    "proxy",
}

// ForbiddenHeader reports whether no rule may touch the header, and why, in a few words.
// Names are compared case-insensitively.
func ForbiddenHeader(name string) (bool, string) {
	n := strings.ToLower(strings.TrimSpace(name))
	kind, ok := forbiddenHeaders[n]
	if !ok {
		for p, k := range forbiddenPrefixes {
			if strings.HasPrefix(n, p) {
				kind, ok = k, true
				break
			}
		}
	}
	if !ok {
		return false, ""
	}
	switch kind {
	case "security":
		return true, "is a security header; rules may not touch it"
	case "load":
		return true, "makes the browser load or send something elsewhere; rules may not touch it"
	case "browser":
		return true, "is set by the browser; rules may not touch Sec-* headers"
	case "proxy":
		return true, "belongs to remixproxy"
	default:
		return true, "frames the HTTP message; rules may not touch it"
	}
}

var (
	resourceTypeNames = []string{"main_frame", "sub_frame", "stylesheet", "script", "image", "font", "object",
		"xmlhttprequest", "ping", "csp_report", "media", "websocket", "webtransport", "webbundle", "other"}
	methodNames = []string{"connect", "delete", "get", "head", "options", "patch", "post", "put", "other"}
)

// Check applies every check and limit to parsed rules, for a remixlet running on sites. It
// returns the problems; a rule with none is one Compile keeps.
func Check(rules []Rule, sites Sites) []Problem {
	var probs []Problem
	for i := range rules {
		probs = append(probs, checkRule(&rules[i], sites)...)
	}
	return probs
}

// checkRule returns the problems of one rule.
func checkRule(r *Rule, sites Sites) []Problem {
	var probs []Problem
	add := func(path, msg, fix string) {
		probs = append(probs, Problem{Index: r.index, RuleID: r.ID, Field: fieldAt(r.index, path), Message: msg, Fix: fix})
	}
	a, c := &r.Action, &r.Condition

	// The action.
	switch a.Type {
	case Block, Allow, Redirect, UpgradeScheme, ModifyHeaders:
	case "":
		add("action.type", "missing", "use block, allow, redirect, upgradeScheme or modifyHeaders")
	case "allowAllRequests":
		add("action.type", "allowAllRequests is not supported", "use allow")
	default:
		add("action.type", fmt.Sprintf("%q is not an action type", a.Type), "use block, allow, redirect, upgradeScheme or modifyHeaders")
	}
	if a.Type != Redirect && a.Redirect != nil {
		add("action.redirect", "is only for redirect rules", "leave it out, or use type redirect")
	}
	if a.Type != ModifyHeaders && (a.RequestHeaders != nil || a.ResponseHeaders != nil) {
		add("action", "requestHeaders and responseHeaders are only for modifyHeaders rules", "leave them out, or use type modifyHeaders")
	}
	if a.Type == Redirect {
		checkRedirect(r, sites, add)
	}
	if a.Type == ModifyHeaders {
		if len(a.RequestHeaders) == 0 && len(a.ResponseHeaders) == 0 {
			add("action", "a modifyHeaders rule needs requestHeaders or responseHeaders", "")
		}
		checkHeaderOps("action.requestHeaders", a.RequestHeaders, add)
		checkHeaderOps("action.responseHeaders", a.ResponseHeaders, add)
	}

	// The condition.
	if c.URLFilter != "" && c.RegexFilter != "" {
		add("condition", "has both urlFilter and regexFilter", "use one of them")
	}
	if c.URLFilter != "" {
		if _, err := compileURLFilter(c.URLFilter, c.IsURLFilterCaseSensitive); err != nil {
			add("condition.urlFilter", err.Error(), "")
		}
	}
	if c.RegexFilter != "" {
		if _, err := compileRegex(c.RegexFilter, c.IsURLFilterCaseSensitive); err != nil {
			add("condition.regexFilter", err.Error(), "")
		}
	}
	for _, l := range []struct {
		name string
		list []string
	}{
		{"requestDomains", c.RequestDomains}, {"excludedRequestDomains", c.ExcludedRequestDomains},
		{"initiatorDomains", c.InitiatorDomains}, {"excludedInitiatorDomains", c.ExcludedInitiatorDomains},
	} {
		checkDomains("condition."+l.name, l.list, add)
	}
	checkNames("condition.resourceTypes", c.ResourceTypes, resourceTypeNames, add)
	checkNames("condition.excludedResourceTypes", c.ExcludedResourceTypes, resourceTypeNames, add)
	checkNames("condition.requestMethods", c.RequestMethods, methodNames, add)
	checkNames("condition.excludedRequestMethods", c.ExcludedRequestMethods, methodNames, add)
	if overlaps(c.ResourceTypes, c.ExcludedResourceTypes) {
		add("condition.excludedResourceTypes", "names a type resourceTypes also names", "name each type in one list only")
	}
	if overlaps(c.RequestMethods, c.ExcludedRequestMethods) {
		add("condition.excludedRequestMethods", "names a method requestMethods also names", "name each method in one list only")
	}

	// Scope: a remixlet that runs on some sites acts only on its pages' requests; a rule that
	// names other pages as initiators would act on requests of sites it does not run on.
	if !sites.Every {
		for j, d := range c.InitiatorDomains {
			if !sites.touchesDomain(normHost(d)) {
				add(fmt.Sprintf("condition.initiatorDomains[%d]", j),
					fmt.Sprintf("%q is not one of the remixlet's sites, so the rule would act on requests of a site the remixlet does not run on", d),
					"name only hosts the manifest's matches cover")
			}
		}
	}
	return probs
}

// checkRedirect applies the redirect limits: GET only, an https address on the remixlet's own
// sites (an every-site remixlet: the registrable domain of every host the rule names).
func checkRedirect(r *Rule, sites Sites, add func(path, msg, fix string)) {
	a, c := &r.Action, &r.Condition
	for j, m := range c.RequestMethods {
		if m != "get" {
			add(fmt.Sprintf("condition.requestMethods[%d]", j), fmt.Sprintf("a redirect applies only to GET requests, not %q", m),
				`write "requestMethods": ["get"] or leave it out (redirects act on GET requests only)`)
		}
	}
	if a.Redirect == nil {
		add("action.redirect", "missing", `add {"url": "https://…"} on one of the remixlet's sites`)
		return
	}
	var target, field string
	switch {
	case a.Redirect.URL != "" && a.Redirect.RegexSubstitution != "":
		add("action.redirect", "has both url and regexSubstitution", "use one of them")
		return
	case a.Redirect.URL != "":
		target, field = a.Redirect.URL, "action.redirect.url"
	case a.Redirect.RegexSubstitution != "":
		field = "action.redirect.regexSubstitution"
		if c.RegexFilter == "" {
			add(field, "needs a regexFilter in the condition", "add condition.regexFilter, or use redirect.url")
			return
		}
		var ok bool
		if target, ok = substitutionPrefix(a.Redirect.RegexSubstitution); !ok {
			add(field, `must start with a fixed "https://HOST/" (no \digit before the path), so where it goes can be checked`,
				`write e.g. "https://example.com/\\1"`)
			return
		}
	default:
		add("action.redirect", "needs url or regexSubstitution", "")
		return
	}
	// Read as the browser reads the Location it gets (weburl): the host checked is the host
	// it goes to, whatever the spelling (fullwidth letters, other full stops, backslashes).
	u, err := weburl.Parse(target)
	if err != nil || u.Hostname() == "" {
		add(field, fmt.Sprintf("%q is not an absolute address", target), `write a full address, e.g. "https://example.com/new.js"`)
		return
	}
	if u.Scheme() != "https" {
		add(field, fmt.Sprintf("goes to %s:, not https:", u.Scheme()), "redirect only to https:// addresses")
		return
	}
	if u.HasCredentials() {
		add(field, "contains a user name or password", "leave them out")
		return
	}
	host := normHost(u.HostKey())
	if !sites.Every {
		if !sites.Covers(host) {
			add(field, fmt.Sprintf("goes to %s, which is not one of the remixlet's sites", host),
				"redirect only to hosts the manifest's matches cover")
		}
		return
	}
	named := namedHosts(c)
	if len(named) == 0 {
		add(field, "the remixlet runs on every site, so a redirect must name the hosts it acts on",
			`add condition.requestDomains, or start urlFilter with "||host^"`)
		return
	}
	want := weburl.Site(host)
	for _, h := range named {
		if weburl.Site(h) != want {
			add(field, fmt.Sprintf("goes to %s, which is not the same site as %s, a host the rule acts on", host, h),
				"redirect only within the site the rule acts on")
			return
		}
	}
}

// substitutionPrefix returns the fixed "https://host/" a regexSubstitution starts with.
func substitutionPrefix(sub string) (string, bool) {
	rest, ok := strings.CutPrefix(sub, "https://")
	if !ok {
		// Let the scheme check say what is wrong.
		if i := strings.Index(sub, "://"); i > 0 && !strings.Contains(sub[:i], `\`) {
			return sub[:i] + "://x/", true
		}
		return "", false
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 || strings.ContainsAny(rest[:i], `\@`) {
		return "", false
	}
	return "https://" + rest[:i+1], true
}

// namedHosts are the hosts a rule's condition names: requestDomains and a "||host" urlFilter's
// host.
func namedHosts(c *Condition) []string {
	var hs []string
	for _, d := range c.RequestDomains {
		hs = append(hs, normHost(d))
	}
	if h, ok := anchorHost(c.URLFilter); ok {
		hs = append(hs, h)
	}
	return hs
}

func checkHeaderOps(path string, ops []HeaderOp, add func(path, msg, fix string)) {
	for j, op := range ops {
		p := fmt.Sprintf("%s[%d]", path, j)
		if op.Header == "" {
			add(p+".header", "missing", "name the header to change")
			continue
		}
		if !validToken(op.Header) {
			add(p+".header", fmt.Sprintf("%q is not a header name", op.Header), "")
			continue
		}
		if bad, why := ForbiddenHeader(op.Header); bad {
			add(p+".header", fmt.Sprintf("%s %s", op.Header, why), "leave it out")
		}
		switch op.Operation {
		case OpSet, OpAppend:
			if op.Value == "" {
				add(p+".value", "missing: "+op.Operation+" needs a value", "")
			}
		case OpRemove:
			if op.Value != "" {
				add(p+".value", "remove takes no value", "leave value out")
			}
		case "":
			add(p+".operation", "missing", "use set, remove or append")
		default:
			add(p+".operation", fmt.Sprintf("%q is not an operation", op.Operation), "use set, remove or append")
		}
		if len(op.Value) > MaxHeaderValue {
			add(p+".value", fmt.Sprintf("is %d bytes; the limit is %d", len(op.Value), MaxHeaderValue), "")
		}
		if strings.ContainsAny(op.Value, "\r\n\x00") {
			add(p+".value", "contains a line break or NUL", "write the value on one line")
		}
	}
}

func validToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func checkDomains(path string, list []string, add func(path, msg, fix string)) {
	if list != nil && len(list) == 0 {
		add(path, "is an empty list", "leave it out, or name at least one domain")
	}
	if len(list) > MaxDomains {
		add(path, fmt.Sprintf("has %d entries; the limit is %d", len(list), MaxDomains), "")
		return
	}
	for j, d := range list {
		p := fmt.Sprintf("%s[%d]", path, j)
		switch {
		case d == "":
			add(p, "is empty", "")
		case d != strings.ToLower(d):
			add(p, fmt.Sprintf("%q has capital letters", d), "write domains in lowercase")
		case strings.ContainsAny(d, "/:*?#@ ") || strings.HasPrefix(d, ".") || strings.HasSuffix(d, "."):
			add(p, fmt.Sprintf("%q is not a domain", d), `write a bare domain such as "example.com"; it covers subdomains too`)
		default:
			for _, r := range d {
				if r > 0x7e {
					add(p, fmt.Sprintf("%q is not ASCII", d), "write internationalized domains in punycode (xn--…)")
					break
				}
			}
		}
	}
}

func checkNames(path string, list, valid []string, add func(path, msg, fix string)) {
	if list != nil && len(list) == 0 {
		add(path, "is an empty list", "leave it out, or name at least one")
	}
	for j, n := range list {
		if !slices.Contains(valid, n) {
			add(fmt.Sprintf("%s[%d]", path, j), fmt.Sprintf("%q is not one of %s", n, strings.Join(valid, ", ")), "")
		}
	}
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// compileRegex compiles a regexFilter under the size limits.
func compileRegex(expr string, caseSensitive bool) (*regexp.Regexp, error) {
	if len(expr) > MaxRegexLen {
		return nil, fmt.Errorf("is %d bytes; the limit is %d", len(expr), MaxRegexLen)
	}
	if !caseSensitive {
		expr = "(?i)" + expr
	}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("is not a valid RE2 expression: %w", err)
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil, fmt.Errorf("is not a valid RE2 expression: %w", err)
	}
	if len(prog.Inst) > MaxRegexInsts {
		return nil, fmt.Errorf("is too complex (%d instructions; the limit is %d)", len(prog.Inst), MaxRegexInsts)
	}
	return regexp.Compile(expr)
}

// normHost lowercases a host and drops a trailing dot and IPv6 brackets.
func normHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}
