package agent

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestLoadSettingsMissingFileGivesDefaults(t *testing.T) {
	s, err := LoadSettings(t.TempDir(), nil)
	if err != nil {
		t.Fatalf("LoadSettings: %v", err)
	}
	if len(s.Providers) != 0 || s.MaxSteps != DefaultMaxSteps {
		t.Errorf("got %+v, want no providers and MaxSteps %d", s, DefaultMaxSteps)
	}
}

func TestSettingsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := &Settings{MaxSteps: 25}
	in.Providers = []ProviderConfig{
		{Name: "work-openai", Kind: KindOpenAI, BaseURL: "https://api.openai.com/v1", APIKey: "sk-1", Models: []string{"gpt-4.1"}, InputPrice: 2, OutputPrice: 8},
		{Name: "lmstudio", Kind: KindOpenAI, BaseURL: "http://127.0.0.1:1234/v1", Models: []string{"qwen3"}},
		{Name: "claude", Kind: KindAnthropic, APIKey: "sk-ant-2", Models: []string{"claude-haiku-4-5"}},
	}
	in.Default.Provider, in.Default.Model = "claude", "claude-haiku-4-5"
	if err := SaveSettings(dir, in); err != nil {
		t.Fatalf("SaveSettings: %v", err)
	}
	out, err := LoadSettings(dir, nil)
	if err != nil {
		t.Fatalf("LoadSettings: %v", err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip:\ngot  %+v\nwant %+v", out, in)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("the data directory holds %d entries, want only %s (no temp files left)", len(entries), SettingsFile)
	}
}

func TestSaveSettingsMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, SettingsFile)
	if err := os.WriteFile(path, []byte(`{"providers":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := &Settings{MaxSteps: 40, Providers: []ProviderConfig{{Name: "a", Kind: KindAnthropic, APIKey: "k"}}}
	if err := SaveSettings(dir, s); err != nil {
		t.Fatalf("SaveSettings: %v", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o600 {
		t.Errorf("mode: got %o, want 600", got)
	}
}

func TestLoadSettingsEnv(t *testing.T) {
	dir := t.TempDir()
	file := &Settings{MaxSteps: 40, Providers: []ProviderConfig{
		{Name: "anthropic", Kind: KindAnthropic, APIKey: "sk-ant-file", Models: []string{"claude-opus-4-1"}},
		{Name: "openai", Kind: KindOpenAI, BaseURL: "https://proxy.example/v1"},
	}}
	if err := SaveSettings(dir, file); err != nil {
		t.Fatal(err)
	}
	env := envOf(map[string]string{
		"OPENAI_API_KEY":    "sk-env-openai",
		"ANTHROPIC_API_KEY": "sk-env-ant",
		"OLLAMA_HOST":       "0.0.0.0:11500",
	})
	s, err := LoadSettings(dir, env)
	if err != nil {
		t.Fatalf("LoadSettings: %v", err)
	}
	byName := map[string]ProviderConfig{}
	for _, p := range s.Providers {
		byName[p.Name] = p
	}
	if p := byName["anthropic"]; p.APIKey != "sk-ant-file" || p.KeyFromEnv {
		t.Errorf("anthropic: the file's key must win, got %q (from env %v)", p.APIKey, p.KeyFromEnv)
	}
	if p := byName["openai"]; p.APIKey != "sk-env-openai" || !p.KeyFromEnv || p.BaseURL != "https://proxy.example/v1" {
		t.Errorf("openai: want the env key filled into the file's entry, got %+v", p)
	}
	if p := byName["ollama"]; p.Kind != KindOpenAI || p.BaseURL != "http://127.0.0.1:11500/v1" || p.APIKey != "" {
		t.Errorf("ollama: got %+v", p)
	}
	if s.Default.Provider != "anthropic" || s.Default.Model != "claude-opus-4-1" {
		t.Errorf("default: got %+v, want the first provider and its first model", s.Default)
	}

	// Saving what was loaded keeps the env key out of the file.
	if err := SaveSettings(dir, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, SettingsFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-env-openai") || !strings.Contains(string(b), "sk-ant-file") {
		t.Errorf("saved file: want the file key and not the env key:\n%s", b)
	}
}

func TestLoadSettingsEnvOnly(t *testing.T) {
	s, err := LoadSettings(t.TempDir(), envOf(map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "OLLAMA_HOST": "http://gpu.lan"}))
	if err != nil {
		t.Fatal(err)
	}
	want := []ProviderConfig{
		{Name: "anthropic", Kind: KindAnthropic, BaseURL: "https://api.anthropic.com", APIKey: "sk-ant", KeyFromEnv: true, Models: []string{"claude-sonnet-4-5", "claude-haiku-4-5"}},
		{Name: "ollama", Kind: KindOpenAI, BaseURL: "http://gpu.lan:11434/v1"},
	}
	if !reflect.DeepEqual(s.Providers, want) {
		t.Errorf("providers:\ngot  %+v\nwant %+v", s.Providers, want)
	}
	if s.Default.Provider != "anthropic" || s.Default.Model != "claude-sonnet-4-5" {
		t.Errorf("default: got %+v", s.Default)
	}
}

func TestLoadSettingsBrokenFile(t *testing.T) {
	tests := []struct {
		name, content string
		want          []string
	}{
		{"syntax", "{\n  \"providers\": [\n    {\"name\": \"a\",, }\n  ]\n}", []string{SettingsFile, "line 3, column 19"}},
		{"type", "{\n \"max_steps\": \"ten\"\n}", []string{SettingsFile, "line 2", "wrong type"}},
		{"truncated", "{\"providers\": [", []string{SettingsFile, "ends too early"}},
		{"unknown field", `{"providers": [], "maxsteps": 3}`, []string{SettingsFile, "maxsteps"}},
		{"invalid content", `{"providers": [{"name": "A b", "kind": "openai", "base_url": "https://x"}]}`, []string{SettingsFile, "lower-case"}},
		{"trailing", `{"providers": []} {}`, []string{SettingsFile, "after the settings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, SettingsFile)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadSettings(dir, envOf(map[string]string{"OPENAI_API_KEY": "sk-x"}))
			if err == nil {
				t.Fatal("LoadSettings succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Errorf("the broken file was changed to %q", b)
			}
		})
	}
}

func TestSaveSettingsValidation(t *testing.T) {
	good := func() *Settings {
		return &Settings{MaxSteps: 40, Providers: []ProviderConfig{{Name: "a", Kind: KindOpenAI, BaseURL: "https://x.example/v1"}}}
	}
	tests := []struct {
		name   string
		change func(s *Settings)
		want   string
	}{
		{"upper-case name", func(s *Settings) { s.Providers[0].Name = "OpenAI" }, "lower-case"},
		{"empty name", func(s *Settings) { s.Providers[0].Name = "" }, "lower-case"},
		{"duplicate name", func(s *Settings) { s.Providers = append(s.Providers, s.Providers[0]) }, "used twice"},
		{"unknown kind", func(s *Settings) { s.Providers[0].Kind = "gemini" }, `kind "gemini"`},
		{"relative URL", func(s *Settings) { s.Providers[0].BaseURL = "/v1" }, "absolute http or https"},
		{"ftp URL", func(s *Settings) { s.Providers[0].BaseURL = "ftp://x/v1" }, "absolute http or https"},
		{"openai without URL", func(s *Settings) { s.Providers[0].BaseURL = "" }, "absolute http or https"},
		{"max steps 0", func(s *Settings) { s.MaxSteps = 0 }, "between 1 and 200"},
		{"max steps 201", func(s *Settings) { s.MaxSteps = 201 }, "between 1 and 200"},
		{"negative price", func(s *Settings) { s.Providers[0].InputPrice = -1 }, "negative"},
		{"unknown default", func(s *Settings) { s.Default.Provider = "nope" }, `"nope" is not configured`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := good()
			tt.change(s)
			err := SaveSettings(dir, s)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error containing %q", err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(dir, SettingsFile)); !os.IsNotExist(err) {
				t.Errorf("an invalid save wrote the file")
			}
		})
	}
	if err := SaveSettings(t.TempDir(), good()); err != nil {
		t.Errorf("the valid settings were refused: %v", err)
	}
}

func TestRedacted(t *testing.T) {
	s := &Settings{MaxSteps: 40, Providers: []ProviderConfig{
		{Name: "a", Kind: KindOpenAI, BaseURL: "https://x/v1", APIKey: "sk-REDACTME-1"},
		{Name: "b", Kind: KindOpenAI, BaseURL: "http://localhost:11434/v1"},
		{Name: "c", Kind: KindAnthropic, APIKey: "sk-REDACTME-2", KeyFromEnv: true},
	}}
	r := s.Redacted()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "REDACTME") {
		t.Errorf("a key survived redaction: %s", b)
	}
	if got := []bool{r.Providers[0].HasKey, r.Providers[1].HasKey, r.Providers[2].HasKey}; !reflect.DeepEqual(got, []bool{true, false, true}) {
		t.Errorf("HasKey: got %v, want [true false true]", got)
	}
	if s.Providers[0].APIKey != "sk-REDACTME-1" {
		t.Errorf("Redacted changed the original")
	}
}

func TestSettingsProvider(t *testing.T) {
	s := &Settings{Providers: []ProviderConfig{
		{Name: "o", Kind: KindOpenAI, BaseURL: "https://x/v1", Models: []string{"m"}},
		{Name: "a", Kind: KindAnthropic},
	}}
	s.Default.Provider = "a"
	p, cfg, err := s.Provider("", nil)
	if _, ok := p.(*anthropic); err != nil || !ok || cfg.Name != "a" {
		t.Errorf("default: got %T %+v %v, want the anthropic provider a", p, cfg, err)
	}
	p, cfg, err = s.Provider("o", nil)
	if _, ok := p.(*openAI); err != nil || !ok || cfg.Name != "o" {
		t.Errorf("o: got %T %+v %v, want the openai provider o", p, cfg, err)
	}
	if _, _, err := s.Provider("missing", nil); err == nil || !strings.Contains(err.Error(), `"missing"`) {
		t.Errorf("missing: got %v, want an error naming it", err)
	}
}

func TestCost(t *testing.T) {
	u := Usage{InputTokens: 1_000_000, OutputTokens: 500_000}
	if usd, known := Cost(ProviderConfig{InputPrice: 3, OutputPrice: 15}, u); !known || math.Abs(usd-10.5) > 1e-9 {
		t.Errorf("got %v %v, want 10.5 true", usd, known)
	}
	if _, known := Cost(ProviderConfig{}, u); known {
		t.Errorf("no prices: want unknown")
	}
}
