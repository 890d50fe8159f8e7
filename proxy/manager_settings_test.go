package proxy

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/agent"
)

// TestManagerSettings: adding a provider with a key, changing it without retyping the key,
// the step cap, and removing it; the key is kept but never shown, and cross-site posts fail.
func TestManagerSettings(t *testing.T) {
	f := newManagerFixture(t)
	const key = "sk-settings-test-0123456789"
	resp, body := f.post(managerURL+"/settings/provider", managerOriginHTTPS, url.Values{
		"name": {"openai"}, "kind": {"openai"}, "base_url": {"https://api.openai.test/v1"}, "api_key": {key},
		"models": {"gpt-a, gpt-b"}, "input_price": {"2.5"}, "output_price": {"10"},
	}, true)
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("saving a provider: %s\n%s", resp.Status, body)
	}
	page := f.page(managerURL + "/settings")
	if strings.Contains(page, key) {
		t.Fatal("the Settings page shows the API key")
	}
	for _, want := range []string{"openai", "https://api.openai.test/v1", "gpt-a, gpt-b", ">set<"} {
		if !strings.Contains(page, want) {
			t.Errorf("the Settings page lacks %q", want)
		}
	}
	// Changing the models without typing the key keeps the key.
	f.post(managerURL+"/settings/provider", managerOriginHTTPS, url.Values{
		"name": {"openai"}, "kind": {"openai"}, "base_url": {"https://api.openai.test/v1"}, "models": {"gpt-c"},
	}, true)
	set, err := agent.LoadSettings(f.srv.cfg.DataDir, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Providers) != 1 || set.Providers[0].APIKey != key || set.Providers[0].Models[0] != "gpt-c" {
		t.Errorf("providers after the edit = %+v", set.Providers)
	}
	// Bad input is refused with a clear message, and nothing changes.
	for _, form := range []url.Values{
		{"name": {"Bad Name"}, "kind": {"openai"}, "base_url": {"https://x.test/v1"}},
		{"name": {"x"}, "kind": {"openai"}, "base_url": {"https://x.test/v1"}, "input_price": {"cheap"}},
		{"name": {"x"}, "kind": {"gopher"}, "base_url": {"https://x.test/v1"}},
	} {
		resp, body := f.post(managerURL+"/settings/provider", managerOriginHTTPS, form, true)
		if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "Not saved") {
			t.Errorf("%v: %s, want 422 Not saved", form, resp.Status)
		}
	}
	resp, body = f.post(managerURL+"/settings/general", managerOriginHTTPS, url.Values{"max_steps": {"500"}}, true)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "from 1 to 200") {
		t.Errorf("max_steps 500: %s", resp.Status)
	}
	f.post(managerURL+"/settings/general", managerOriginHTTPS, url.Values{"max_steps": {"12"}, "default_provider": {"openai"}, "default_model": {"gpt-c"}}, true)
	// A cross-site form cannot change settings.
	resp, _ = f.post(managerURL+"/settings/provider/delete", "https://evil.test", url.Values{"name": {"openai"}}, true)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("cross-site delete: %s, want 403", resp.Status)
	}
	set, _ = agent.LoadSettings(f.srv.cfg.DataDir, noEnv)
	if set.MaxSteps != 12 || set.Default.Provider != "openai" || len(set.Providers) != 1 {
		t.Errorf("settings = %+v", set)
	}
	f.post(managerURL+"/settings/provider/delete", managerOriginHTTPS, url.Values{"name": {"openai"}}, true)
	set, _ = agent.LoadSettings(f.srv.cfg.DataDir, noEnv)
	if len(set.Providers) != 0 || set.Default.Provider != "" {
		t.Errorf("after removing: %+v", set)
	}
}

// noEnv is an environment without variables: the settings as stored, without the keys the
// environment may add.
func noEnv(string) string { return "" }
