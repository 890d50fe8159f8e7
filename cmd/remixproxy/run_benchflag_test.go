package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"
)

// TestBenchNoInjectFlag: `run --bench-no-inject` reaches the config, is off by default, and is
// left out of -h while the other flags stay in it.
func TestBenchNoInjectFlag(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want bool
	}{
		{"default", nil, false},
		{"set", []string{"--bench-no-inject"}, true},
		{"set false", []string{"--bench-no-inject=false"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := parseRunFlags(c.args)
			if err != nil {
				t.Fatalf("parseRunFlags(%q): %v", c.args, err)
			}
			if f.benchNoInject != c.want {
				t.Errorf("benchNoInject = %v, want %v", f.benchNoInject, c.want)
			}
		})
	}

	fs := flag.NewFlagSet("remixproxy run", flag.ContinueOnError)
	var out bytes.Buffer
	fs.SetOutput(&out)
	fs.String("listen", "127.0.0.1:8080", "address to serve the proxy on")
	fs.Bool(benchNoInjectFlag, false, "benchmarks only")
	printVisibleDefaults(fs, benchNoInjectFlag)
	if got := out.String(); strings.Contains(got, benchNoInjectFlag) || !strings.Contains(got, `-listen string`) || !strings.Contains(got, `(default "127.0.0.1:8080")`) {
		t.Errorf("-h text = %q, want -listen with its default and no %s", got, benchNoInjectFlag)
	}
}
