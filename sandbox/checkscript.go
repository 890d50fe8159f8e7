package sandbox

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// CheckScript parses script.js with goja's parser and refuses code that tries to load or build
// code at run time. Each Problem has the line and column of the offending expression.
//
// Refused, with what to do instead:
//   - a syntax error (goja's parser has no modules, so import and import() are syntax errors;
//     a remixlet cannot load code from anywhere);
//   - any use of eval — even of a literal, because the sandbox makes eval throw;
//   - any use of the Function global (call, new, or alias);
//   - a call of .constructor(...) or ["constructor"](...), the way to reach a function
//     constructor from a function value;
//   - setTimeout/setInterval with a string (literal) first argument;
//   - creating a script element by literal: createElement("script"), dom.create({tag: "script"});
//   - setting src or srcset to a remote literal (http:, https:, or //…), by assignment or by
//     setAttribute/setAttr.
//
// These checks only recognise literals and direct names: an address or a property name built at
// run time passes them. They exist so that a remixlet that tries to load code is refused before
// it is saved; the sandbox, which has no network, no eval and no function constructors, is what
// enforces.
func CheckScript(src []byte) []Problem {
	prog, err := parser.ParseFile(nil, ScriptFile, scriptPrefix+string(src)+scriptSuffix, 0)
	if err != nil {
		return syntaxProblems(src, err)
	}
	c := &scriptChecker{file: prog.File, seen: map[any]bool{}}
	if len(prog.Body) != 1 {
		c.probs = append(c.probs, Problem{File: ScriptFile, Line: 1, Column: 1,
			Message: "the script closes the function it runs in (unbalanced braces)",
			Fix:     "balance the braces; script.js is the body of an async function"})
	}
	c.walk(reflect.ValueOf(prog))
	return c.probs
}

// The runtime runs script.js as the body of an async function, so top-level await works; the
// check parses exactly what the runtime compiles (runtime.go), and moves positions back into
// script.js.
const (
	scriptPrefix = "(async function () {"
	scriptSuffix = "\n})()"
)

// scriptPosition turns a line and column in the wrapped source into one in script.js.
func scriptPosition(src []byte, line, col int) (int, int) {
	if line == 1 {
		col -= len(scriptPrefix)
	}
	lines := 1 + strings.Count(string(src), "\n")
	if line > lines || col < 1 {
		// In the wrapper's closing text: report the end of script.js.
		last := string(src[strings.LastIndexByte(string(src), '\n')+1:])
		return lines, 1 + len([]rune(last))
	}
	return line, col
}

func syntaxProblems(src []byte, err error) []Problem {
	var list parser.ErrorList
	var one *parser.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = parser.ErrorList{one}
	default:
		return []Problem{{File: ScriptFile, Message: "syntax error: " + err.Error(), Fix: "fix the syntax"}}
	}
	// The first error is the one to fix; later ones are usually its echoes.
	var probs []Problem
	for _, e := range list[:min(len(list), 1)] {
		line, col := scriptPosition(src, e.Position.Line, e.Position.Column)
		p := Problem{File: ScriptFile, Line: line, Column: col,
			Message: "syntax error: " + e.Message, Fix: "fix the syntax"}
		if importAt(src, line, col) {
			p.Message = "import is not available in remixlets"
			p.Fix = "write the code in script.js itself; a remixlet cannot load code"
		}
		probs = append(probs, p)
	}
	return probs
}

// importAt reports whether the source has the keyword import at a 1-based line and column.
func importAt(src []byte, line, col int) bool {
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) {
		return false
	}
	runes := []rune(lines[line-1])
	if col < 1 || col > len(runes) {
		return false
	}
	return strings.HasPrefix(string(runes[col-1:]), "import")
}

type scriptChecker struct {
	file  *file.File
	seen  map[any]bool
	probs []Problem
}

var astPkg = reflect.TypeOf(ast.Program{}).PkgPath()

// walk visits every AST node reachable from v, each once. goja's ast package has no visitor, so
// it goes by reflection over the package's own types.
func (c *scriptChecker) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			c.walk(v.Elem())
		}
	case reflect.Pointer:
		if v.IsNil() || v.Type().Elem().PkgPath() != astPkg {
			return
		}
		key := v.Interface()
		if c.seen[key] {
			return
		}
		c.seen[key] = true
		if n, ok := key.(ast.Node); ok {
			c.visit(n)
		}
		c.walk(v.Elem())
	case reflect.Struct:
		if v.Type().PkgPath() != astPkg {
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				c.walk(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			c.walk(v.Index(i))
		}
	}
}

func (c *scriptChecker) refuse(n ast.Node, msg, fix string) {
	pos := c.file.Position(int(n.Idx0()) - c.file.Base())
	line, col := pos.Line, pos.Column
	if line == 1 {
		col -= len(scriptPrefix)
	}
	c.probs = append(c.probs, Problem{File: ScriptFile, Line: line, Column: col, Message: msg, Fix: fix})
}

func (c *scriptChecker) visit(n ast.Node) {
	switch n := n.(type) {
	case *ast.Identifier:
		switch n.Name {
		case "eval":
			c.refuse(n, "eval is not available in remixlets", "write the code itself instead of a string that holds it")
		case "Function":
			c.refuse(n, "the Function constructor is not available in remixlets", "write a function literal instead")
		}
	case *ast.CallExpression:
		c.checkCall(n, n.Callee, n.ArgumentList)
	case *ast.NewExpression:
		c.checkCall(n, n.Callee, n.ArgumentList)
	case *ast.AssignExpression:
		if isSrcProperty(memberName(n.Left)) {
			if s, ok := literalString(n.Right); ok && isRemoteAddress(s) {
				c.refuse(n, fmt.Sprintf("sets %s to a remote address (%q)", memberName(n.Left), s),
					"remixlets load images only from the page's own site (their sites within it) and fetch: hosts; use an address there, or declare fetch:HOST")
			}
		}
	}
}

func (c *scriptChecker) checkCall(n ast.Node, callee ast.Expression, args []ast.Expression) {
	name := memberName(callee)
	if name == "" {
		if id, ok := callee.(*ast.Identifier); ok {
			name = string(id.Name)
		}
	}
	arg := func(i int) (string, bool) {
		if i >= len(args) {
			return "", false
		}
		return literalString(args[i])
	}
	switch name {
	case "constructor":
		c.refuse(n, "calls a constructor through .constructor, which can build a function from a string",
			"call the function or class by its own name")
	case "eval", "Function":
		// Reported where the identifier or property is used.
		if _, isID := callee.(*ast.Identifier); !isID {
			c.refuse(n, name+" is not available in remixlets", "write the code itself instead of a string that holds it")
		}
	case "setTimeout", "setInterval":
		if _, ok := arg(0); ok {
			c.refuse(n, name+" with a string runs nothing in a remixlet", "pass a function: "+name+"(() => { … }, ms)")
		}
	case "createElement", "create":
		s, ok := arg(0)
		if !ok && len(args) > 0 {
			s, ok = specTag(args[0]) // dom.create({tag: "script"})
		}
		if ok && strings.EqualFold(strings.TrimSpace(s), "script") {
			c.refuse(n, "creates a script element", "remixlets cannot add scripts to the page; do the work in script.js with dom.*")
		}
	case "setAttribute", "setAttr", "setAttributeNS":
		for i := range args {
			if s, ok := arg(i); ok && isSrcProperty(strings.ToLower(strings.TrimSpace(s))) {
				if v, ok := arg(i + 1); ok && isRemoteAddress(v) {
					c.refuse(n, fmt.Sprintf("sets %s to a remote address (%q)", s, v),
						"remixlets load images only from the page's own site (their sites within it) and fetch: hosts; use an address there, or declare fetch:HOST")
				}
				break
			}
		}
	}
}

// specTag returns the literal tag of an object literal {tag: "..."} (dom.create's ElementSpec).
func specTag(e ast.Expression) (string, bool) {
	obj, ok := e.(*ast.ObjectLiteral)
	if !ok {
		return "", false
	}
	for _, p := range obj.Value {
		if kv, ok := p.(*ast.PropertyKeyed); ok {
			if k, ok := literalString(kv.Key); ok && k == "tag" {
				return literalString(kv.Value)
			}
		}
	}
	return "", false
}

// memberName returns the property name of a.b or a["b"], or "".
func memberName(e ast.Expression) string {
	switch e := e.(type) {
	case *ast.DotExpression:
		return string(e.Identifier.Name)
	case *ast.BracketExpression:
		if s, ok := literalString(e.Member); ok {
			return s
		}
	case *ast.Optional:
		return memberName(e.Expression)
	case *ast.OptionalChain:
		return memberName(e.Expression)
	}
	return ""
}

// literalString returns the value of a string literal or a template literal without
// substitutions.
func literalString(e ast.Expression) (string, bool) {
	switch e := e.(type) {
	case *ast.StringLiteral:
		return string(e.Value), true
	case *ast.TemplateLiteral:
		if e.Tag == nil && len(e.Expressions) == 0 {
			var b strings.Builder
			for _, el := range e.Elements {
				b.WriteString(string(el.Parsed))
			}
			return b.String(), true
		}
	}
	return "", false
}

func isSrcProperty(name string) bool {
	return name == "src" || name == "srcset"
}

// isRemoteAddress reports whether a literal address points off the page: http:, https: or a
// scheme-relative //host address (browsers also read a leading backslash as a slash).
func isRemoteAddress(s string) bool {
	s = strings.ToLower(strings.TrimLeft(s, " \t\r\n\f"))
	return strings.HasPrefix(s, "http:") || strings.HasPrefix(s, "https:") ||
		strings.HasPrefix(s, "//") || strings.HasPrefix(s, `\\`) || strings.HasPrefix(s, `/\`) || strings.HasPrefix(s, `\/`)
}
