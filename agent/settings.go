package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// SettingsFile is the name of the settings file inside the data directory.
const SettingsFile = "providers.json"

// Provider kinds: the wire format a provider speaks.
const (
	KindOpenAI    = "openai"    // OpenAI-compatible Chat Completions
	KindAnthropic = "anthropic" // Anthropic Messages
)

// ProviderConfig is one configured model provider.
type ProviderConfig struct {
	// Name identifies the provider: lower-case letters, digits and dashes, unique.
	Name string `json:"name"`
	// Kind is the wire format: "openai" or "anthropic".
	Kind string `json:"kind"`
	// BaseURL is the absolute http(s) URL requests go under, e.g. https://api.openai.com/v1.
	// Empty for "anthropic" means https://api.anthropic.com; "openai" requires it.
	BaseURL string `json:"base_url,omitempty"`
	// APIKey is the secret sent to the provider; empty for local servers. It is never shown:
	// see Redacted.
	APIKey string `json:"api_key,omitempty"`
	// Models are the model names offered in the panel, the first being the default.
	Models []string `json:"models,omitempty"`
	// InputPrice and OutputPrice are USD per million tokens; 0 means unknown.
	InputPrice  float64 `json:"input_price,omitempty"`
	OutputPrice float64 `json:"output_price,omitempty"`
	// HasKey is set only by Redacted: whether the provider has a key.
	HasKey bool `json:"has_key,omitempty"`
	// KeyFromEnv says the key came from the environment; it is not saved to the file.
	KeyFromEnv bool `json:"key_from_env,omitempty"`
}

// Settings are the agent's providers and limits, kept in <data-dir>/providers.json.
type Settings struct {
	Providers []ProviderConfig `json:"providers"`
	// Default is the provider and model a new chat uses. Empty: the first provider and its first
	// model.
	Default struct {
		Provider string `json:"provider,omitempty"`
		Model    string `json:"model,omitempty"`
	} `json:"default"`
	// MaxSteps bounds the model turns one request may take, 1..200; 0 when loaded means 40.
	MaxSteps int `json:"max_steps,omitempty"`
	// PlanBeforeAct makes an Act turn show the person the model's plan (propose_plan) and wait
	// for their approval before its first page action. Default false.
	PlanBeforeAct bool `json:"plan_before_act,omitempty"`
	// RecordTraces turns on the trace recorder: each message to the agent, with its model and
	// tool calls, is kept in the store for the manager's Traces page (never sent anywhere).
	// Default false: nothing is recorded.
	RecordTraces bool `json:"record_traces,omitempty"`
}

// LoadSettings reads <dataDir>/providers.json (a missing file gives the defaults), then adds what
// the environment provides through env (os.Getenv in the binary):
//
//	OPENAI_API_KEY     provider "openai", https://api.openai.com/v1
//	ANTHROPIC_API_KEY  provider "anthropic", https://api.anthropic.com
//	OLLAMA_HOST        provider "ollama", OpenAI-compatible at $OLLAMA_HOST/v1, no key
//
// An environment key fills a provider of that name whose file entry has no key, and is marked
// KeyFromEnv so SaveSettings does not write it. Loading never writes the file.
func LoadSettings(dataDir string, env func(string) string) (*Settings, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	path := filepath.Join(dataDir, SettingsFile)
	s := &Settings{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("loading settings: %w", err)
	default:
		if err := decodeSettings(b, s); err != nil {
			return nil, fmt.Errorf("loading settings: %s: %w", path, err)
		}
		if err := s.validate(); err != nil {
			return nil, fmt.Errorf("loading settings: %s: %w", path, err)
		}
	}
	for i := range s.Providers {
		s.Providers[i].HasKey = false
		s.Providers[i].KeyFromEnv = false
	}
	if key := strings.TrimSpace(env("OPENAI_API_KEY")); key != "" {
		s.mergeEnv(ProviderConfig{Name: "openai", Kind: KindOpenAI, BaseURL: "https://api.openai.com/v1",
			Models: []string{"gpt-4.1", "gpt-4.1-mini"}}, key)
	}
	if key := strings.TrimSpace(env("ANTHROPIC_API_KEY")); key != "" {
		s.mergeEnv(ProviderConfig{Name: "anthropic", Kind: KindAnthropic, BaseURL: anthropicDefaultBaseURL,
			Models: []string{"claude-sonnet-4-5", "claude-haiku-4-5"}}, key)
	}
	if host := strings.TrimSpace(env("OLLAMA_HOST")); host != "" {
		base, err := ollamaBaseURL(host)
		if err != nil {
			return nil, fmt.Errorf("loading settings: OLLAMA_HOST: %w", err)
		}
		s.mergeEnv(ProviderConfig{Name: "ollama", Kind: KindOpenAI, BaseURL: base}, "")
	}
	if s.MaxSteps == 0 {
		s.MaxSteps = DefaultMaxSteps
	}
	if s.find(s.Default.Provider) == nil {
		// Unset, or it named a provider that only the environment gave and it no longer does.
		s.Default.Provider, s.Default.Model = "", ""
	}
	if s.Default.Provider == "" && len(s.Providers) > 0 {
		s.Default.Provider = s.Providers[0].Name
	}
	if s.Default.Model == "" {
		if p := s.find(s.Default.Provider); p != nil && len(p.Models) > 0 {
			s.Default.Model = p.Models[0]
		}
	}
	return s, nil
}

// decodeSettings parses the file, naming the line and column of a syntax or type error.
func decodeSettings(b []byte, s *Settings) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err := dec.Decode(s)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			return fmt.Errorf("unexpected content after the settings object at %s", position(b, dec.InputOffset()))
		}
		return nil
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		return fmt.Errorf("broken JSON at %s: %w", position(b, syn.Offset), err)
	case errors.As(err, &typ):
		return fmt.Errorf("wrong type at %s: %w", position(b, typ.Offset), err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("the file ends too early (at %s): %w", position(b, int64(len(b))), err)
	}
	return fmt.Errorf("not valid settings: %w", err)
}

// position turns a byte offset into "line L, column C" (both from 1).
func position(b []byte, off int64) string {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	before := b[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// mergeEnv adds p with key, or fills the key of an existing provider of that name.
func (s *Settings) mergeEnv(p ProviderConfig, key string) {
	if cur := s.find(p.Name); cur != nil {
		if cur.APIKey == "" && key != "" {
			cur.APIKey = key
			cur.KeyFromEnv = true
		}
		return
	}
	p.APIKey = key
	p.KeyFromEnv = key != ""
	s.Providers = append(s.Providers, p)
}

func (s *Settings) find(name string) *ProviderConfig {
	for i := range s.Providers {
		if s.Providers[i].Name == name {
			return &s.Providers[i]
		}
	}
	return nil
}

// ollamaBaseURL turns OLLAMA_HOST ("host:port", "http://host:port", "0.0.0.0") into the URL of
// Ollama's OpenAI-compatible API.
func ollamaBaseURL(host string) (string, error) {
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not a host or URL", host)
	}
	if u.Port() == "" {
		u.Host += ":11434"
	}
	switch u.Hostname() {
	case "0.0.0.0", "::": // the address Ollama listens on, not one to dial
		u.Host = strings.Replace(u.Host, u.Hostname(), "127.0.0.1", 1)
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/v1"
	return u.String(), nil
}

var providerNameRE = regexp.MustCompile(`^[a-z0-9-]+$`)

// validate checks what SaveSettings writes and LoadSettings reads.
func (s *Settings) validate() error {
	seen := map[string]bool{}
	for i, p := range s.Providers {
		what := fmt.Sprintf("provider %d (%q)", i+1, p.Name)
		if !providerNameRE.MatchString(p.Name) {
			return fmt.Errorf("%s: the name must be lower-case letters, digits and dashes", what)
		}
		if seen[p.Name] {
			return fmt.Errorf("%s: the name is used twice", what)
		}
		seen[p.Name] = true
		switch p.Kind {
		case KindOpenAI, KindAnthropic:
		default:
			return fmt.Errorf("%s: kind %q is not %q or %q", what, p.Kind, KindOpenAI, KindAnthropic)
		}
		if p.BaseURL == "" && p.Kind == KindAnthropic {
			continue
		}
		u, err := url.Parse(p.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("%s: the base URL %q is not an absolute http or https URL", what, redact(p.BaseURL, p.APIKey))
		}
		if p.InputPrice < 0 || p.OutputPrice < 0 {
			return fmt.Errorf("%s: prices cannot be negative", what)
		}
	}
	if s.MaxSteps != 0 && (s.MaxSteps < 1 || s.MaxSteps > 200) {
		return fmt.Errorf("max_steps %d is not between 1 and 200", s.MaxSteps)
	}
	return nil
}

// SaveSettings validates s and writes it to <dataDir>/providers.json atomically, readable only
// by the owner (0600, tightening an existing file). Keys that came from the environment are not
// written.
func SaveSettings(dataDir string, s *Settings) error {
	if s.MaxSteps == 0 {
		return errors.New("saving settings: max_steps 0 is not between 1 and 200")
	}
	if err := s.validate(); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	if s.Default.Provider != "" && s.find(s.Default.Provider) == nil {
		return fmt.Errorf("saving settings: the default provider %q is not configured", s.Default.Provider)
	}
	out := s.clone()
	for i := range out.Providers {
		p := &out.Providers[i]
		if p.KeyFromEnv {
			p.APIKey = ""
		}
		p.KeyFromEnv, p.HasKey = false, false
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	b = append(b, '\n')
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	path := filepath.Join(dataDir, SettingsFile)
	tmp, err := os.CreateTemp(dataDir, SettingsFile+".*.tmp")
	if err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	defer os.Remove(tmp.Name()) // after a successful rename there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("saving settings: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("saving settings: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("saving settings: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	// The rename replaced any looser file; make sure even on filesystems that keep modes oddly.
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("saving settings: %w", err)
	}
	return nil
}

func (s *Settings) clone() *Settings {
	c := *s
	c.Providers = make([]ProviderConfig, len(s.Providers))
	for i, p := range s.Providers {
		p.Models = append([]string(nil), p.Models...)
		c.Providers[i] = p
	}
	return &c
}

// Provider builds the named provider (the default one when name is ""), using client for its
// requests.
func (s *Settings) Provider(name string, client *http.Client) (Provider, ProviderConfig, error) {
	if name == "" {
		name = s.Default.Provider
	}
	p := s.find(name)
	if p == nil {
		return nil, ProviderConfig{}, fmt.Errorf("building provider: no provider named %q is configured", name)
	}
	cfg := *p
	cfg.Models = append([]string(nil), p.Models...)
	switch cfg.Kind {
	case KindOpenAI:
		return NewOpenAI(cfg, client), cfg, nil
	case KindAnthropic:
		return NewAnthropic(cfg, client), cfg, nil
	}
	return nil, ProviderConfig{}, fmt.Errorf("building provider %q: unknown kind %q", name, cfg.Kind)
}

// Redacted returns a copy of s for showing: every APIKey is "" and HasKey says whether there was
// one.
func (s *Settings) Redacted() *Settings {
	c := s.clone()
	for i := range c.Providers {
		p := &c.Providers[i]
		p.HasKey = p.APIKey != ""
		p.APIKey = ""
	}
	return c
}

// Cost returns what u cost at cfg's prices; known is false when cfg has no prices.
func Cost(cfg ProviderConfig, u Usage) (usd float64, known bool) {
	if cfg.InputPrice <= 0 && cfg.OutputPrice <= 0 {
		return 0, false
	}
	return (float64(u.InputTokens)*cfg.InputPrice + float64(u.OutputTokens)*cfg.OutputPrice) / 1e6, true
}
