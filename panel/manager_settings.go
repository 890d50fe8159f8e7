package panel

import "io"

var managerSettingsTemplate = mustManagerPage("manager_settings.html")

// ManagerSettings is the agent's Settings page: model providers, the default model, the step
// cap. It never holds an API key: HasKey says whether a provider has one.
type ManagerSettings struct {
	ManagerBase
	Providers []SettingsProvider
	// DefaultProvider and DefaultModel are the settings file's default ("" for the first
	// provider's first model).
	DefaultProvider string
	DefaultModel    string
	MaxSteps        int
	// PlanBeforeAct: in Act mode the agent's plan waits for the person's approval (off by default).
	PlanBeforeAct bool
	// RecordTraces: the trace recorder is on (the Traces page lists what it kept).
	RecordTraces bool
	// Chats is how many chats the store keeps.
	Chats int
	// ModelURL is --model-url, shown as provider "local" when set.
	ModelURL string
	// Error is a problem with the settings file, shown at the top; the page still works.
	Error string
}

// SettingsProvider is one provider on the Settings page.
type SettingsProvider struct {
	Name, Kind, BaseURL string
	Models              string // comma-separated
	HasKey              bool
	// FromEnv: the provider or its key comes from the environment (OPENAI_API_KEY, …), which
	// the page cannot change.
	FromEnv                 bool
	InputPrice, OutputPrice float64
}

// RenderManagerSettings writes the Settings page.
func RenderManagerSettings(w io.Writer, p ManagerSettings) error {
	return render(w, managerSettingsTemplate, "manager settings", p)
}
