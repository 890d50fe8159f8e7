package netrules

import (
	"fmt"
	"net/http"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	"github.com/remixproxy/remixproxy/internal/weburl"
)

// Action ranks at equal priority, Chrome's order: allow > block > upgradeScheme > redirect.
// modifyHeaders never decides; it applies when nothing else did.
var actionRank = map[string]int{Allow: 4, Block: 3, UpgradeScheme: 2, Redirect: 1, ModifyHeaders: 0}

// A Ruleset is one remixlet's compiled rules.
type Ruleset struct {
	Owner string // the remixlet's id, reported in Results
	Sites Sites
	Rules []Rule // the rules kept, in file order
	crs   []*compiledRule
}

type compiledRule struct {
	r        *Rule
	rank     int
	filter   *urlFilter
	re       *regexp.Regexp
	reNeed   string // a literal the (lowercased unless case-sensitive) URL must contain
	reqDom   []string
	exReqDom []string
	initDom  []string
	exInit   []string
	types    uint32 // bit per resource type
	methods  uint16 // bit per method; 0: any
	exMeth   uint16
}

var (
	typeBit   = map[string]uint32{}
	methodBit = map[string]uint16{}
)

func init() {
	for i, n := range resourceTypeNames {
		typeBit[n] = 1 << i
	}
	for i, n := range methodNames {
		methodBit[n] = 1 << i
	}
}

// Compile checks rules for a remixlet running on sites and compiles the ones that pass every
// check; the problems say which were left out and why. The result is immutable.
func Compile(owner string, rules []Rule, sites Sites) (*Ruleset, []Problem) {
	rs := &Ruleset{Owner: owner, Sites: sites}
	var probs []Problem
	for i := range rules {
		if i >= MaxRules {
			probs = append(probs, Problem{Index: rules[i].index, RuleID: rules[i].ID,
				Message: fmt.Sprintf("left out: more than %d rules", MaxRules)})
			continue
		}
		if p := checkRule(&rules[i], sites); len(p) > 0 {
			probs = append(probs, p...)
			continue
		}
		rs.Rules = append(rs.Rules, rules[i])
	}
	for i := range rs.Rules {
		cr, err := compileRule(&rs.Rules[i])
		if err != nil { // checkRule compiled the same expressions; kept for safety
			probs = append(probs, Problem{Index: rs.Rules[i].index, RuleID: rs.Rules[i].ID, Message: err.Error()})
			continue
		}
		rs.crs = append(rs.crs, cr)
	}
	return rs, probs
}

func compileRule(r *Rule) (*compiledRule, error) {
	c := &r.Condition
	cr := &compiledRule{r: r, rank: actionRank[r.Action.Type]}
	var err error
	if c.URLFilter != "" {
		if cr.filter, err = compileURLFilter(c.URLFilter, c.IsURLFilterCaseSensitive); err != nil {
			return nil, fmt.Errorf("compiling urlFilter of rule %d: %w", r.ID, err)
		}
	}
	if c.RegexFilter != "" {
		if cr.re, err = compileRegex(c.RegexFilter, c.IsURLFilterCaseSensitive); err != nil {
			return nil, fmt.Errorf("compiling regexFilter of rule %d: %w", r.ID, err)
		}
		cr.reNeed = regexNeed(c.RegexFilter, c.IsURLFilterCaseSensitive)
	}
	norm := func(l []string) []string {
		out := make([]string, len(l))
		for i, d := range l {
			out[i] = normHost(d)
		}
		return out
	}
	cr.reqDom, cr.exReqDom = norm(c.RequestDomains), norm(c.ExcludedRequestDomains)
	cr.initDom, cr.exInit = norm(c.InitiatorDomains), norm(c.ExcludedInitiatorDomains)
	// Chrome: without resourceTypes, every type but main_frame.
	if len(c.ResourceTypes) > 0 {
		for _, t := range c.ResourceTypes {
			cr.types |= typeBit[t]
		}
	} else {
		cr.types = 1<<len(resourceTypeNames) - 1
		if len(c.ExcludedResourceTypes) == 0 {
			cr.types &^= typeBit["main_frame"]
		}
	}
	for _, t := range c.ExcludedResourceTypes {
		cr.types &^= typeBit[t]
	}
	for _, m := range c.RequestMethods {
		cr.methods |= methodBit[m]
	}
	for _, m := range c.ExcludedRequestMethods {
		cr.exMeth |= methodBit[m]
	}
	return cr, nil
}

// need is a lowercase literal the lowercase URL contains whenever the rule's filter matches,
// or "".
func (cr *compiledRule) need() string {
	if cr.filter != nil {
		return strings.ToLower(cr.filter.need)
	}
	return strings.ToLower(cr.reNeed)
}

// regexNeed returns the longest literal every match of the expression contains (a literal
// that is one of the parts of a top-level concatenation), lowercased unless caseSensitive.
func regexNeed(expr string, caseSensitive bool) string {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return ""
	}
	re = re.Simplify()
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	best := ""
	for _, p := range parts {
		if p.Op != syntax.OpLiteral || caseSensitive && p.Flags&syntax.FoldCase != 0 {
			continue
		}
		if len(string(p.Rune)) > len(best) {
			best = string(p.Rune)
		}
	}
	if !caseSensitive {
		best = strings.ToLower(best)
	}
	return best
}

// domainIn reports whether host is one of the domains or a subdomain of one.
func domainIn(host string, domains []string) bool {
	for _, d := range domains {
		if host == d || len(host) > len(d) && strings.HasSuffix(host, d) && host[len(host)-len(d)-1] == '.' {
			return true
		}
	}
	return false
}

// matches reports whether the rule's condition holds for req.
func (cr *compiledRule) matches(req *Request) bool {
	if cr.types&typeBit[req.Type] == 0 {
		return false
	}
	mb := methodBit[req.Method]
	if cr.methods != 0 && cr.methods&mb == 0 || cr.exMeth&mb != 0 {
		return false
	}
	switch cr.r.Action.Type {
	case Redirect: // limit: redirects act on GET only
		if req.Method != "get" {
			return false
		}
	case UpgradeScheme: // only http → https
		if req.Scheme != "http" {
			return false
		}
	}
	if len(cr.reqDom) > 0 && !domainIn(req.Host, cr.reqDom) || domainIn(req.Host, cr.exReqDom) {
		return false
	}
	if len(cr.initDom) > 0 && (req.InitiatorState != InitiatorKnown || !domainIn(req.Initiator, cr.initDom)) {
		return false
	}
	if len(cr.exInit) > 0 && (req.InitiatorState == InitiatorUnknown ||
		req.InitiatorState == InitiatorKnown && domainIn(req.Initiator, cr.exInit)) {
		return false
	}
	if cr.filter != nil && !cr.filter.match(req.url, req.lower, req.hostStart, req.hostEnd) {
		return false
	}
	if cr.re != nil {
		s := req.url
		if cr.reNeed != "" {
			t := req.url
			if !cr.r.Condition.IsURLFilterCaseSensitive {
				t = req.lower
			}
			if !strings.Contains(t, cr.reNeed) {
				return false
			}
		}
		if !cr.re.MatchString(s) {
			return false
		}
	}
	return true
}

// applies reports whether the ruleset's rules act on req: every request for a remixlet that
// runs on every site; otherwise only requests whose initiator is known and one of its sites.
func (rs *Ruleset) applies(req *Request) bool {
	if rs.Sites.Every {
		return true
	}
	return req.InitiatorState == InitiatorKnown && rs.Sites.Covers(req.Initiator)
}

// A Set is the rules of every remixlet in effect, indexed by host. It is immutable and safe
// for concurrent use.
type Set struct {
	sets   []*Ruleset
	byHost map[string][]entry // by requestDomains entry or "||host^" anchor host
	byGram map[uint64][]entry // the rest, by a 5-byte piece of a literal every match contains
	any    []entry            // the rest of the rest
	n      int
}

// gramLen is the length of the URL pieces the catch-all rules are indexed by (Chrome's
// url_pattern_index uses the same idea).
const gramLen = 5

func gramAt(s string, i int) uint64 {
	var g uint64
	for j := i; j < i+gramLen; j++ {
		g = g<<8 | uint64(s[j])
	}
	return g
}

type entry struct {
	set int // index into sets
	cr  *compiledRule
}

// NewSet joins rulesets; earlier ones win ties between remixlets (see the package doc).
func NewSet(rulesets ...*Ruleset) *Set {
	s := &Set{byHost: map[string][]entry{}, byGram: map[uint64][]entry{}}
	for _, rs := range rulesets {
		if rs == nil || len(rs.crs) == 0 {
			continue
		}
		si := len(s.sets)
		s.sets = append(s.sets, rs)
		for _, cr := range rs.crs {
			e := entry{set: si, cr: cr}
			s.n++
			switch {
			case len(cr.reqDom) > 0:
				for _, d := range slices.Compact(slices.Sorted(slices.Values(cr.reqDom))) {
					s.byHost[d] = append(s.byHost[d], e)
				}
			default:
				if h, ok := anchorHost(cr.r.Condition.URLFilter); ok {
					s.byHost[h] = append(s.byHost[h], e)
				} else if need := cr.need(); len(need) >= gramLen {
					// The least used piece of the literal, to keep buckets small.
					best, bestN := uint64(0), -1
					for i := 0; i+gramLen <= len(need); i++ {
						g := gramAt(need, i)
						if n := len(s.byGram[g]); bestN < 0 || n < bestN {
							best, bestN = g, n
						}
					}
					s.byGram[best] = append(s.byGram[best], e)
				} else {
					s.any = append(s.any, e)
				}
			}
		}
	}
	return s
}

// Len is the number of rules in the set.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Matched names a rule that acted.
type Matched struct {
	Owner  string // the Ruleset's Owner
	RuleID int
}

// HeaderChange is one header operation of a modifyHeaders rule, in the order to apply.
type HeaderChange struct {
	Matched
	HeaderOp
}

// A Result is what the rules decided for one request.
type Result struct {
	// Action is Block, Redirect, UpgradeScheme or "" (the request goes on, possibly with
	// header changes).
	Action string
	By     Matched // the rule that decided Action
	// Location is where a Redirect or UpgradeScheme sends the request.
	Location string
	// Withheld names the first redirect rule that matched but may not send this request where
	// it would have (WithheldTo): outside the requesting page's site (redirectscope.go).
	Withheld        Matched
	WithheldTo      string
	RequestHeaders  []HeaderChange
	ResponseHeaders []HeaderChange
}

// Empty reports whether the rules change nothing.
func (r *Result) Empty() bool {
	return r.Action == "" && len(r.RequestHeaders) == 0 && len(r.ResponseHeaders) == 0
}

type perSet struct {
	scope   int8 // 0 not yet decided, 1 applies, -1 not
	best    *compiledRule
	headers []*compiledRule
}

// Match decides what the rules do to req.
func (s *Set) Match(req *Request) Result {
	var res Result
	if s == nil || s.n == 0 {
		return res
	}
	var stack [8]perSet
	per := stack[:0]
	if len(s.sets) <= len(stack) {
		per = stack[:len(s.sets)]
	} else {
		per = make([]perSet, len(s.sets))
	}
	nav := req.Type == "main_frame" || req.Type == "sub_frame"
	visit := func(es []entry) {
		for _, e := range es {
			p := &per[e.set]
			if p.scope == 0 {
				p.scope = -1
				if s.sets[e.set].applies(req) {
					p.scope = 1
				}
			}
			if p.scope < 0 || !e.cr.matches(req) {
				continue
			}
			if e.cr.r.Action.Type == ModifyHeaders {
				// A remixlet's page navigating to another site does not let it change that
				// site's document headers: on navigations, header changes need the
				// destination to be one of its sites too.
				if nav && !s.sets[e.set].Sites.Covers(req.Host) {
					continue
				}
				p.headers = append(p.headers, e.cr)
				continue
			}
			if p.best == nil || better(e.cr, p.best) {
				p.best = e.cr
			}
		}
	}
	// The host and each parent domain: "a.b.example.com", "b.example.com", "example.com", "com".
	for h := req.Host; h != ""; {
		if es, ok := s.byHost[h]; ok {
			visit(es)
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			break
		}
		h = h[i+1:]
	}
	if len(s.byGram) > 0 && len(req.lower) >= gramLen {
		var gstack [128]uint64
		grams := gstack[:0]
		for i := 0; i+gramLen <= len(req.lower); i++ {
			g := gramAt(req.lower, i)
			if _, ok := s.byGram[g]; ok {
				grams = append(grams, g)
			}
		}
		slices.Sort(grams)
		for _, g := range slices.Compact(grams) {
			visit(s.byGram[g])
		}
	}
	visit(s.any)

	// Across remixlets: a block wins; then the first redirect or upgrade in set order.
	for i := range per {
		if b := per[i].best; b != nil && b.r.Action.Type == Block {
			res.Action, res.By = Block, Matched{s.sets[i].Owner, b.r.ID}
			return res
		}
	}
	for i := range per {
		b := per[i].best
		if b == nil {
			continue
		}
		switch b.r.Action.Type {
		case Redirect:
			u, ok := redirectLocation(b, req)
			if !ok {
				continue
			}
			m := Matched{s.sets[i].Owner, b.r.ID}
			if !s.sets[i].Sites.redirectAllowed(req, u.HostKey()) {
				if res.Withheld.Owner == "" {
					res.Withheld, res.WithheldTo = m, u.Href()
				}
				continue
			}
			res.Action, res.By, res.Location = Redirect, m, u.Href()
			return res
		case UpgradeScheme:
			res.Action, res.By = UpgradeScheme, Matched{s.sets[i].Owner, b.r.ID}
			res.Location = "https" + strings.TrimPrefix(req.url, "http")
			return res
		}
	}
	// Header changes: per remixlet, those above its deciding allow rule, highest priority first.
	for i := range per {
		p := &per[i]
		if len(p.headers) == 0 {
			continue
		}
		floor := 0
		if p.best != nil && p.best.r.Action.Type == Allow {
			floor = p.best.r.Priority
		}
		slices.SortStableFunc(p.headers, func(a, b *compiledRule) int {
			if a.r.Priority != b.r.Priority {
				return b.r.Priority - a.r.Priority
			}
			return a.r.ID - b.r.ID
		})
		for _, cr := range p.headers {
			if cr.r.Priority <= floor {
				break
			}
			m := Matched{s.sets[i].Owner, cr.r.ID}
			for _, op := range cr.r.Action.RequestHeaders {
				res.RequestHeaders = append(res.RequestHeaders, HeaderChange{m, op})
			}
			for _, op := range cr.r.Action.ResponseHeaders {
				res.ResponseHeaders = append(res.ResponseHeaders, HeaderChange{m, op})
			}
		}
	}
	return res
}

// better reports whether a outranks b: higher priority, then Chrome's action order, then the
// lower id (for a stable choice).
func better(a, b *compiledRule) bool {
	if a.r.Priority != b.r.Priority {
		return a.r.Priority > b.r.Priority
	}
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	return a.r.ID < b.r.ID
}

// redirectLocation is the address a redirect rule sends req to, as the browser reads it
// (weburl's serialisation: the Location sent is the address that was checked). A
// regexSubstitution result must still be an https address on the host of the https://host/
// that was checked at install.
func redirectLocation(cr *compiledRule, req *Request) (*weburl.URL, bool) {
	rd := cr.r.Action.Redirect
	if rd.URL != "" {
		u, err := weburl.Parse(rd.URL)
		if err != nil {
			return nil, false
		}
		return u, true
	}
	m := cr.re.FindStringSubmatchIndex(req.url)
	if m == nil {
		return nil, false
	}
	// Chrome's substitution syntax: \0 … \9; \\ is a backslash.
	var b strings.Builder
	sub := rd.RegexSubstitution
	for i := 0; i < len(sub); i++ {
		c := sub[i]
		if c == '\\' && i+1 < len(sub) {
			n := sub[i+1]
			if n >= '0' && n <= '9' {
				g := int(n - '0')
				if 2*g+1 < len(m) && m[2*g] >= 0 {
					b.WriteString(req.url[m[2*g]:m[2*g+1]])
				}
				i++
				continue
			}
			if n == '\\' {
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(c)
	}
	loc := b.String()
	prefix, ok := substitutionPrefix(sub)
	if !ok || !strings.HasPrefix(loc, prefix) {
		return nil, false
	}
	u, err := weburl.Parse(loc)
	if err != nil || u.Scheme() != "https" || u.HasCredentials() {
		return nil, false
	}
	want, err := weburl.Parse(prefix)
	if err != nil || u.HostKey() != want.HostKey() || u.Port() != want.Port() {
		return nil, false
	}
	return u, true
}

// ApplyRequestHeaders applies the request header changes to h, with Chrome's rules for several
// changes to one header: after a remove or set, lower rules may not change it, except appends
// by the remixlet that set it; after an append, lower rules may only append. Appends to a
// request header join the values with ", ". No change ever touches a ForbiddenHeader.
func (r *Result) ApplyRequestHeaders(h http.Header) { applyHeaders(h, r.RequestHeaders, true) }

// ApplyResponseHeaders applies the response header changes to h, as ApplyRequestHeaders does,
// except that an append adds a header line.
func (r *Result) ApplyResponseHeaders(h http.Header) { applyHeaders(h, r.ResponseHeaders, false) }

func applyHeaders(h http.Header, changes []HeaderChange, request bool) {
	if len(changes) == 0 {
		return
	}
	type state struct {
		op    string
		owner string
	}
	done := map[string]state{}
	for _, c := range changes {
		if bad, _ := ForbiddenHeader(c.Header); bad {
			continue
		}
		key := http.CanonicalHeaderKey(c.Header)
		st, seen := done[key]
		switch c.Operation {
		case OpRemove, OpSet:
			if seen {
				continue
			}
		case OpAppend:
			if seen && st.op == OpRemove || seen && st.op == OpSet && st.owner != c.Owner {
				continue
			}
		default:
			continue
		}
		switch c.Operation {
		case OpRemove:
			h.Del(key)
		case OpSet:
			h.Set(key, c.Value)
		case OpAppend:
			if old := h.Values(key); request && len(old) > 0 {
				h.Set(key, strings.Join(old, ", ")+", "+c.Value)
			} else {
				h.Add(key, c.Value)
			}
		}
		if !seen {
			done[key] = state{c.Operation, c.Owner}
		}
	}
}
