package proxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers of proxy/ (doc.go): each package may import only the proxy packages listed for
// it, all of them below it, so no package reaches up into one that uses it. A new package
// under proxy/ must be added here. The test-fixture packages (testOnlyLayers) sit outside the
// order: they import no proxy package, every package's tests may import them, and no
// package's own code may.

const modulePath = "github.com/remixproxy/remixproxy/"

// proxyLayers maps each proxy package to the proxy packages it may import (directly, in its
// code or its tests).
var proxyLayers = map[string][]string{
	"proxy":                     {"proxy/manager", "proxy/chat", "proxy/remixlet", "proxy/page", "proxy/fetch", "proxy/internal/redact", "proxy/internal/httpx"},
	"proxy/manager":             {"proxy/chat", "proxy/remixlet", "proxy/internal/httpx"},
	"proxy/chat":                {"proxy/remixlet", "proxy/page", "proxy/fetch", "proxy/internal/redact", "proxy/internal/httpx"},
	"proxy/remixlet":            {"proxy/page", "proxy/fetch", "proxy/internal/httpx", "proxy/internal/sessionlog"},
	"proxy/page":                {"proxy/internal/httpx", "proxy/internal/sessionlog"},
	"proxy/fetch":               {"proxy/internal/httpx"},
	"proxy/internal/redact":     {"proxy/internal/httpx"},
	"proxy/internal/httpx":      {},
	"proxy/internal/sessionlog": {},
	// test fixtures (testOnlyLayers)
	"proxy/internal/testsite": {},
}

// testOnlyLayers are the packages of test fixtures shared between the proxy packages' tests
// (proxy/internal/testsite): allowed in every package's test imports, refused in its code.
var testOnlyLayers = []string{"proxy/internal/testsite"}

// listedPackage is what go list -json says of a package that the layering reads.
type listedPackage struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

// layerViolations returns, for each package, the proxy packages it imports without the table
// allowing it, and the packages the table does not know.
func layerViolations(pkgs []listedPackage, layers map[string][]string) []string {
	var bad []string
	for _, p := range pkgs {
		name := strings.TrimPrefix(p.ImportPath, modulePath)
		allowed, known := layers[name]
		if !known {
			bad = append(bad, fmt.Sprintf("%s is not in the layer table (proxyLayers)", name))
			continue
		}
		for i, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			dep, ok := strings.CutPrefix(imp, modulePath)
			if !ok || dep == name || (dep != "proxy" && !strings.HasPrefix(dep, "proxy/")) {
				continue // outside proxy/, or an external test of the package itself
			}
			if slices.Contains(testOnlyLayers, dep) {
				if i < len(p.Imports) {
					bad = append(bad, fmt.Sprintf("%s imports %s in its code; only tests may import test fixtures", name, dep))
				}
				continue
			}
			if !slices.Contains(allowed, dep) {
				bad = append(bad, fmt.Sprintf("%s imports %s, which its layer may not import (allowed: %v)", name, dep, allowed))
			}
		}
	}
	slices.Sort(bad)
	return slices.Compact(bad)
}

// TestProxyLayers: no proxy package imports one above it or beside it that the table does not
// allow (as Tailscale's depaware checks), read from go list.
func TestProxyLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < len(proxyLayers) {
		t.Fatalf("go list gave %d packages, want at least the %d of the table", len(pkgs), len(proxyLayers))
	}
	for _, v := range layerViolations(pkgs, proxyLayers) {
		t.Error(v)
	}
}

// TestLayerViolationsCatches: the check fires on an upward import, on one beside a package,
// in test imports too, and on a package the table does not know.
func TestLayerViolationsCatches(t *testing.T) {
	pkg := func(name string, imports ...string) listedPackage {
		p := listedPackage{ImportPath: modulePath + name}
		for _, i := range imports {
			p.Imports = append(p.Imports, modulePath+i)
		}
		return p
	}
	for _, tt := range []struct {
		name string
		pkg  listedPackage
		want string
	}{
		{"up", pkg("proxy/page", "proxy/chat"), "proxy/page imports proxy/chat"},
		{"up to the root", pkg("proxy/remixlet", "proxy"), "proxy/remixlet imports proxy,"},
		{"beside", pkg("proxy/fetch", "proxy/page"), "proxy/fetch imports proxy/page"},
		{"in a test", listedPackage{ImportPath: modulePath + "proxy/page", TestImports: []string{modulePath + "proxy/remixlet"}}, "proxy/page imports proxy/remixlet"},
		{"unknown package", pkg("proxy/dev", "proxy/internal/httpx"), "proxy/dev is not in the layer table"},
		{"test fixtures in code", pkg("proxy/chat", "proxy/internal/testsite"), "proxy/chat imports proxy/internal/testsite in its code"},
		{"test fixtures importing up", listedPackage{ImportPath: modulePath + "proxy/internal/testsite", TestImports: []string{modulePath + "proxy/fetch"}}, "proxy/internal/testsite imports proxy/fetch"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := layerViolations([]listedPackage{tt.pkg}, proxyLayers)
			if len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
				t.Errorf("got %q, want one violation starting %q", got, tt.want)
			}
		})
	}
	if got := layerViolations([]listedPackage{pkg("proxy/chat", "proxy/page", "store", "proxy/internal/redact")}, proxyLayers); len(got) != 0 {
		t.Errorf("allowed imports: got %q, want none", got)
	}
	fixtures := listedPackage{ImportPath: modulePath + "proxy/page",
		TestImports: []string{modulePath + "proxy/internal/testsite"}, XTestImports: []string{modulePath + "proxy/internal/testsite"}}
	if got := layerViolations([]listedPackage{fixtures}, proxyLayers); len(got) != 0 {
		t.Errorf("test fixtures in tests: got %q, want none", got)
	}
}
