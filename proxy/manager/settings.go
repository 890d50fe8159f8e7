package manager

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/remixproxy/remixproxy/agent"
	"github.com/remixproxy/remixproxy/panel"
	"github.com/remixproxy/remixproxy/store"
)

// The agent's Settings page in the manager: providers, keys, default model, step cap, and
// deleting the stored chats. Keys are written to <data-dir>/providers.json (0600) and never
// rendered: the page shows only whether a provider has one.

func (s *Manager) registerSettings(mux *http.ServeMux, post func(string, func(http.ResponseWriter, *http.Request, *store.Store))) {
	mux.HandleFunc("GET /manager/settings", s.managerSettings)
	post("/manager/settings/provider", s.managerSettingsProvider)
	post("/manager/settings/provider/delete", s.managerSettingsDeleteProvider)
	post("/manager/settings/general", s.managerSettingsGeneral)
	post("/manager/settings/chats/delete", s.managerDeleteChats)
}

func noEnv(string) string { return "" }

func (s *Manager) managerSettings(w http.ResponseWriter, r *http.Request) {
	p := panel.ManagerSettings{ManagerBase: s.base(r), ModelURL: s.cfg.ModelURL, MaxSteps: agent.DefaultMaxSteps}
	fileOnly, err := agent.LoadSettings(s.cfg.DataDir, noEnv)
	if err != nil {
		p.Error = err.Error() + " — fix or remove the file; saving here replaces it."
		fileOnly = &agent.Settings{}
	}
	all, err := agent.LoadSettings(s.cfg.DataDir, os.Getenv)
	if err != nil {
		all = fileOnly
	}
	inFile := map[string]bool{}
	for _, pc := range fileOnly.Providers {
		inFile[pc.Name] = true
	}
	for _, pc := range all.Redacted().Providers {
		p.Providers = append(p.Providers, panel.SettingsProvider{
			Name: pc.Name, Kind: pc.Kind, BaseURL: pc.BaseURL, Models: strings.Join(pc.Models, ", "),
			HasKey: pc.HasKey, FromEnv: !inFile[pc.Name] || pc.KeyFromEnv,
			InputPrice: pc.InputPrice, OutputPrice: pc.OutputPrice,
		})
	}
	p.DefaultProvider, p.DefaultModel = fileOnly.Default.Provider, fileOnly.Default.Model
	if fileOnly.MaxSteps > 0 {
		p.MaxSteps = fileOnly.MaxSteps
	}
	p.PlanBeforeAct = fileOnly.PlanBeforeAct
	p.RecordTraces = fileOnly.RecordTraces
	if st := s.cfg.Store; st != nil {
		chats, err := st.ListChats(r.Context(), 100000)
		if err == nil {
			p.Chats = len(chats)
		}
	}
	writeManager(w, http.StatusOK, func(b *bytes.Buffer) error { return panel.RenderManagerSettings(b, p) })
}

// editSettings loads the settings file alone (never the environment, whose keys must not be
// written to it), applies f and saves; failures are shown to the person.
func (s *Manager) editSettings(w http.ResponseWriter, f func(*agent.Settings) error) {
	if s.cfg.DataDir == "" {
		s.managerFail(w, http.StatusConflict, "Not saved", "This proxy runs without a data folder, so settings cannot be kept.", "/manager/settings")
		return
	}
	set, err := agent.LoadSettings(s.cfg.DataDir, noEnv)
	if err != nil {
		set = &agent.Settings{} // the page said so; saving replaces the broken file
	}
	if err := f(set); err != nil {
		s.managerFail(w, http.StatusUnprocessableEntity, "Not saved", err.Error(), "/manager/settings")
		return
	}
	if err := agent.SaveSettings(s.cfg.DataDir, set); err != nil {
		s.managerFail(w, http.StatusUnprocessableEntity, "Not saved", err.Error(), "/manager/settings")
		return
	}
	s.chats.SettingsChanged()
	seeOther(w, "/manager/settings", "settings")
}

type settingsError string

func (e settingsError) Error() string { return string(e) }

func (s *Manager) managerSettingsProvider(w http.ResponseWriter, r *http.Request, _ *store.Store) {
	f := r.PostForm
	name := strings.TrimSpace(f.Get("name"))
	var models []string
	for _, m := range strings.Split(f.Get("models"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			models = append(models, m)
		}
	}
	price := func(field string) (float64, error) {
		v := strings.TrimSpace(f.Get(field))
		if v == "" {
			return 0, nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 {
			return 0, settingsError("the " + strings.ReplaceAll(field, "_", " ") + " must be a number of US dollars, such as 2.5")
		}
		return x, nil
	}
	s.editSettings(w, func(set *agent.Settings) error {
		in, err := price("input_price")
		if err != nil {
			return err
		}
		out, err := price("output_price")
		if err != nil {
			return err
		}
		pc := agent.ProviderConfig{Name: name, Kind: f.Get("kind"), BaseURL: strings.TrimSpace(f.Get("base_url")),
			APIKey: strings.TrimSpace(f.Get("api_key")), Models: models, InputPrice: in, OutputPrice: out}
		for i := range set.Providers {
			if set.Providers[i].Name == name {
				if pc.APIKey == "" {
					pc.APIKey = set.Providers[i].APIKey // an empty field keeps the saved key
				}
				set.Providers[i] = pc
				return nil
			}
		}
		set.Providers = append(set.Providers, pc)
		return nil
	})
}

func (s *Manager) managerSettingsDeleteProvider(w http.ResponseWriter, r *http.Request, _ *store.Store) {
	name := r.PostForm.Get("name")
	s.editSettings(w, func(set *agent.Settings) error {
		for i := range set.Providers {
			if set.Providers[i].Name == name {
				set.Providers = append(set.Providers[:i], set.Providers[i+1:]...)
				if set.Default.Provider == name {
					set.Default.Provider, set.Default.Model = "", ""
				}
				return nil
			}
		}
		return settingsError("there is no saved provider named " + strconv.Quote(name) + " (providers from the environment cannot be removed here)")
	})
}

func (s *Manager) managerSettingsGeneral(w http.ResponseWriter, r *http.Request, _ *store.Store) {
	f := r.PostForm
	s.editSettings(w, func(set *agent.Settings) error {
		n, err := strconv.Atoi(strings.TrimSpace(f.Get("max_steps")))
		if err != nil || n < 1 || n > 200 {
			return settingsError("steps per message must be a whole number from 1 to 200")
		}
		set.MaxSteps = n
		set.PlanBeforeAct = f.Get("plan_before_act") == "on"
		set.Default.Provider = strings.TrimSpace(f.Get("default_provider"))
		set.Default.Model = strings.TrimSpace(f.Get("default_model"))
		return nil
	})
}

func (s *Manager) managerDeleteChats(w http.ResponseWriter, r *http.Request, st *store.Store) {
	if _, err := st.DeleteAllChats(r.Context()); err != nil {
		s.managerError(w, err)
		return
	}
	s.chats.ForgetAll(context.Background())
	seeOther(w, "/manager/settings", "chatsgone")
}
