package rewrite

import (
	"testing"
)

const testOwnAttr = "data-remixlet-own"

func TestOwnSheet(t *testing.T) {
	const m = ":where([data-remixlet-own])"
	tests := []struct {
		name, css, want string
	}{
		{"own rule", `.rx-bar { outline: 3px solid red }`, `.rx-bar` + m + `{ outline: 3px solid red }`},
		{"descendants and children", `.rx-bar > .rx-btn span{color:red}`, `.rx-bar` + m + ` > .rx-btn` + m + ` span` + m + `{color:red}`},
		{"siblings", `.a+.b ~ .c{x:y}`, `.a` + m + ` + .b` + m + ` ~ .c` + m + `{x:y}`},
		{"keyed on page state: kept, restricted (it cannot match)", `body:has(#wrap.s3) .rx-p3 { display: block }`,
			`body:has(#wrap.s3` + m + `)` + m + ` .rx-p3` + m + `{ display: block }`},
		{"a page element: restricted", `#banner { display: none }`, `#banner` + m + `{ display: none }`},
		{"root, html, body kept", `:root { --c: red } html body > .rx {}`, `:root{ --c: red } html body > .rx` + m + `{}`},
		{"root with a class is page state", `html.dark .rx {}`, `html.dark` + m + ` .rx` + m + `{}`},
		{"structural pseudo-classes left out", `.rx-p:nth-child(2) {} .a:first-child {} .b:only-of-type{}`, ``},
		{"a list keeps its own part", `.a, .b:nth-child(1), .c { color: red }`, `.a` + m + `, .c` + m + `{ color: red }`},
		{"container queries left out", `@container (min-width: 1px) { .rx { color: red } } .b{}`, ` .b` + m + `{}`},
		{"media kept", `@media (min-width: 1px) { .rx-btn { color: red } }`, `@media (min-width: 1px) { .rx-btn` + m + `{ color: red } }`},
		{"pseudo-elements after the mark", `.a::before, .b:hover::after:hover, .c::part(x) {}`,
			`.a` + m + `::before, .b:hover` + m + `::after:hover, .c` + m + `::part(x){}`},
		{"legacy pseudo-elements", `.a:before {}`, `.a` + m + `:before{}`},
		{":not of the element itself", `.x:not(.y, [data-testid="1"], :hover) {}`, `.x:not(.y, [data-testid="1"], :hover)` + m + `{}`},
		{":not with a combinator left out", `.x:not(.a .b) {}`, ``},
		{":not with a function left out", `.x:not(:has(.a)) {}`, ``},
		{":is and :where", `:is(.a, .b > .c):where(.d) {}`, `:is(.a` + m + `, .b` + m + ` > .c` + m + `):where(.d` + m + `)` + m + `{}`},
		{":has relative", `.rx-bar:has(> .rx-btn:not(:active)) {}`, `.rx-bar:has(> .rx-btn:not(:active)` + m + `)` + m + `{}`},
		{":has with a page-only argument narrows", `.a:has(.b:nth-child(2), .c) {}`, `.a:has(.c` + m + `)` + m + `{}`},
		{"nesting", `.a { color: red; .b { x: y } & > .c:hover { x: z } }`,
			`.a` + m + `{ color: red; .b` + m + `{ x: y } &` + m + ` > .c:hover` + m + `{ x: z } }`},
		{"nested page rule left out", `.a { color: red; .b:nth-child(1) { x: y } }`, `.a` + m + `{ color: red;  }`},
		{"scope", `@scope (.rx) to (.lim) { .p { color: red } }`, `@scope (.rx` + m + `) to (.lim` + m + `) { .p` + m + `{ color: red } }`},
		{"scope on page state left out", `@scope (:nth-child(2)) { .p { color: red } }`, ``},
		{"a comment in a selector", `.a/**/.b {} .c /**/ .d {}`, ``},
		{"column combinator", `.a || .b {}`, ``},
		{"states a page's fieldset or form decides", `.a:disabled {} .b:enabled {} .c:read-only {} .d:read-write {} .e:default {} .f:not(:disabled) {}`, ``},
		{":lang, :dir, :target, :scope, :host", `:lang(en) .x {} .y:dir(rtl) {} .z:target {} :scope .w {} :host .v {}`, ``},
		{"keyframes, property, layer statements copied", `@layer a, b; @keyframes k { from { opacity: 0 } } @property --x { syntax: "*"; inherits: false } .a{}`,
			`@layer a, b; @keyframes k { from { opacity: 0 } } @property --x { syntax: "*"; inherits: false } .a` + m + `{}`},
		{"nothing but at-rules without elements", `@keyframes k { from { opacity: 0 } }`, ``},
		{"namespaces and universal", `*|div.a, svg|rect, * {}`, `*|div.a` + m + `, svg|rect` + m + `, *` + m + `{}`},
		{"a leading combinator is left to the browser", `> .a {}`, `> .a` + m + `{}`},
		{"empty sheet", ``, ``},
		{"only page rules", `.a:first-child {}`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clean, problems := CheckStylesheet([]byte(tt.css), func(string) bool { return true })
			if len(problems) > 0 {
				t.Fatalf("the test sheet is refused: %v", problems)
			}
			got := string(OwnSheet(clean, testOwnAttr))
			if got != tt.want {
				t.Errorf("OwnSheet(%q)\n got %q\nwant %q", tt.css, got, tt.want)
			}
			ownPassesTheCheck(t, got)
		})
	}
}

// TestOwnSheetBounded: a sheet of many one-letter compounds does not make a copy many times its
// size; the copy stops taking rules.
func TestOwnSheetBounded(t *testing.T) {
	var css []byte
	for range 2000 {
		css = append(css, "a b c d e f g h i j {}\n"...)
	}
	clean, _ := CheckStylesheet(css, nil)
	got := OwnSheet(clean, testOwnAttr)
	if limit := 4*len(clean) + 4096; len(got) > limit || len(got) == 0 {
		t.Errorf("the copy of a %d-byte sheet is %d bytes, want 1 to %d", len(clean), len(got), limit)
	}
}

// ownPassesTheCheck fails t unless the own copy is a sheet the checker keeps whole: the split
// adds nothing the checker would refuse.
func ownPassesTheCheck(t *testing.T, own string) {
	t.Helper()
	if own == "" {
		return
	}
	clean, problems := CheckStylesheet([]byte(own), func(string) bool { return true })
	if len(problems) > 0 || string(clean) != own {
		t.Errorf("the own copy %q does not pass the stylesheet check whole: %v", own, problems)
	}
}

func FuzzOwnSheet(f *testing.F) {
	for _, s := range []string{`.a > .b:hover::before { color: red }`, `@scope (.a) to (.b) { .c {} }`, `.a:not(.b, :focus) { .c { x: y } }`,
		`:is(.a, :has(+ .b)) {}`, `@media x { @layer y { .z {} } }`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, css string) {
		clean, _ := CheckStylesheet([]byte(css), func(string) bool { return true })
		if clean == nil {
			return
		}
		ownPassesTheCheck(t, string(OwnSheet(clean, testOwnAttr)))
	})
}
