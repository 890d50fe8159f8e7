package panel

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The chat protocol on the panel's socket (PanelSocketPath), in addition to State and
// ErrorMessage. panel.js documents the same at its top; chatproto_test.go checks that the two
// agree.
//
// Proxy → panel:
//
//	ChatMessage   {type:'chat', chat, providers, managerURL}: on connect and on every change
//	ItemMessage   {type:'item', item}: one item of the conversation; an item whose ID the panel
//	              already shows replaces it in place (a streaming reply is sent again and again
//	              with the text so far)
//	ClearMessage  {type:'clear'}: a new chat, remove every item
//
// Panel → proxy (decode them with ParsePanelMessage):
//
//	SendMessage   {type:'send', text}
//	StopMessage   {type:'stop'}
//	NewMessage    {type:'new'}
//	ModeMessage   {type:'mode', mode}
//	ModelMessage  {type:'model', provider, model}
//	DecideMessage {type:'decide', id, allow}: the person's click on a card's button
//	ResumeMessage {type:'resume', chat}: on connect, the chat ID the panel kept in its
//	              sessionStorage (per tab), to go on with it after a reload or a restart
//	APIAccessMessage {type:'api', on}: the person's API access switch for this chat (off by
//	              default): with it on, the agent may ask, card by card, to send POST, PUT,
//	              PATCH and DELETE requests to the page's site. Only this message changes it.
//	ActSubmitsMessage {type:'submit', on}: the person's "Act may submit forms" switch for this
//	              chat (off by default): while it is off, an Act action that would submit a form
//	              with POST or press a control named delete, pay, send … waits for the person's
//	              Allow on a card. Turning it on is itself a card, allowed in the confirmation
//	              window (it lets such actions go without asking); turning it off takes effect
//	              at once. Only this message changes it.
//	ActiveMessage {type:'active'}: the person typed or clicked in the panel (at most once a
//	              second); the page then has the person's activation too (proxy/chat/navguard.go)
//	CommandMessage {type:'command', remixlet, id}: the person chose a remixlet's command
//	              (rmx.menu) in the panel's list of this page's commands; it runs the
//	              command's callback (proxy/page/commands.go)
//	PlanMessage   {type:'plan', id, approve, steps}: the person's decision on a plan card, with
//	              the steps as they edited them (approve only). A plan grants nothing beyond
//	              Act, so the framed panel may decide it; no confirmation window.
//
// A DecideMessage means that panel.js saw a trusted click on a card that had been visible (by
// IntersectionObserver v2) for the card's ArmAfterMs and under a pointer that moved inside it;
// the proxy must still check that the card is pending, belongs to this panel's chat and was sent
// at least ArmAfterMs ago, and take each card's decision once.
const (
	TypeChat  = "chat"  // proxy → panel: ChatMessage
	TypeItem  = "item"  // proxy → panel: ItemMessage
	TypeClear = "clear" // proxy → panel: ClearMessage

	TypeSend    = "send"    // panel → proxy: SendMessage
	TypeStop    = "stop"    // panel → proxy: StopMessage
	TypeNew     = "new"     // panel → proxy: NewMessage
	TypeMode    = "mode"    // panel → proxy: ModeMessage
	TypeModel   = "model"   // panel → proxy: ModelMessage
	TypeDecide  = "decide"  // panel → proxy: DecideMessage
	TypeResume  = "resume"  // panel → proxy: ResumeMessage
	TypeAPI     = "api"     // panel → proxy: APIAccessMessage
	TypeSubmit  = "submit"  // panel → proxy: ActSubmitsMessage
	TypePlan    = "plan"    // panel → proxy: PlanMessage
	TypeActive  = "active"  // panel → proxy: ActiveMessage
	TypeCommand = "command" // panel → proxy: CommandMessage
)

// Modes of a chat.
const (
	ModeAsk   = "ask"   // read-only tools
	ModeBuild = "build" // read tools and writing remixlets
	ModeAct   = "act"   // read tools and clicking on the page
)

// Kinds of Item.
const (
	KindUser      = "user"      // the person's message: ID, Kind, MD
	KindAssistant = "assistant" // the model's reply: ID, Kind, MD
	KindNotice    = "notice"    // a line from the proxy ("Stopped"): ID, Kind, MD
	KindTool      = "tool"      // a tool call: ID, Kind, Name, Args, Status, Result
	KindCard      = "card"      // a decision for the person: ID, Kind, Card, Title, Remixlet, Rows, Allow, Deny, State, ArmAfterMs, Data, Diff
)

// Tool call statuses.
const (
	ToolRunning = "running"
	ToolOK      = "ok"
	ToolError   = "error"
)

// Cards, their states and their default arming delay.
const (
	CardPermissions = "permissions" // "Remixlet needs permission": Allow / Not now
	CardActivation  = "activation"  // "Apply this change?": Allow and apply / Don't allow
	CardRequest     = "request"     // "Send a POST request to …": Send / Not now; Data holds the body's first bytes
	CardPlan        = "plan"        // the agent's plan: Steps (editable), Risks; Approve / Reject, decided with a PlanMessage
	CardSubmit      = "submit"      // "Let the agent press “Delete account”?" (or turn on "Act may submit forms"): Press it / Not now

	CardPending = "pending"
	CardAllowed = "allowed"
	CardDenied  = "denied"
	CardExpired = "expired"
	// CardStale: the person allowed it, but it was not applied — another version became active
	// while the card was open, so what they allowed was not the change it would make.
	CardStale = "stale"

	// DefaultArmAfterMs is how long a card must have been visible before its buttons work;
	// the panel uses it when ArmAfterMs is 0.
	DefaultArmAfterMs = 800
)

// MaxSendText is the longest message text ParsePanelMessage accepts, in bytes.
const MaxSendText = 64 << 10

// ChatMessage tells the panel about the chat of its page. Send it on connect and on every
// change.
type ChatMessage struct {
	Type       string     `json:"type"` // TypeChat
	Chat       ChatState  `json:"chat"`
	Providers  []Provider `json:"providers"`
	ManagerURL string     `json:"managerURL"` // https://remix.proxy/... (the panel links only to its own origin)
}

// ChatState is the state of one chat.
type ChatState struct {
	ID           string `json:"id"`
	Mode         string `json:"mode"` // ModeAsk, ModeBuild or ModeAct
	Provider     string `json:"provider"`
	Model        string `json:"model"`
	Running      bool   `json:"running"` // the agent is working: the panel's Send is a Stop
	Steps        int    `json:"steps"`
	MaxSteps     int    `json:"maxSteps"`
	InputTokens  int64  `json:"inputTokens"`
	OutputTokens int64  `json:"outputTokens"`
	Cost         string `json:"cost"` // e.g. "$0.012"; "" if unknown
	// APIAccess is the chat's API access switch (APIAccessMessage); off by default.
	APIAccess bool `json:"apiAccess"`
	// ActSubmits is the chat's "Act may submit forms" switch (ActSubmitsMessage); off by default.
	ActSubmits bool `json:"actSubmits"`
}

// Provider is a provider the person can pick, with its models.
type Provider struct {
	Name   string   `json:"name"`
	Models []string `json:"models"`
}

// ItemMessage carries one item of the conversation.
type ItemMessage struct {
	Type string `json:"type"` // TypeItem
	Item Item   `json:"item"`
}

// Item is one entry of the conversation. Which fields count depends on Kind (see the Kind
// constants); the others are left empty.
type Item struct {
	ID   string `json:"id"`
	Kind string `json:"kind"`

	// user, assistant, notice: the text, from RenderMarkdown (or PlainNodes).
	MD []Node `json:"md,omitempty"`

	// tool: a compact line "Name Status Args" that opens to the full Args and Result.
	Name   string `json:"name,omitempty"`
	Args   string `json:"args,omitempty"`   // the call's arguments (JSON text)
	Status string `json:"status,omitempty"` // ToolRunning, ToolOK, ToolError
	Result string `json:"result,omitempty"`

	// card: a decision only the person can take. Every text on it is written by the proxy
	// (never by the model), except the remixlet's name, which the panel shows as a name.
	Card       string        `json:"card,omitempty"`  // CardPermissions or CardActivation
	Title      string        `json:"title,omitempty"` // the heading; "" for the panel's default
	Remixlet   *CardRemixlet `json:"remixlet,omitempty"`
	Rows       []string      `json:"rows,omitempty"`  // one fixed text per permission or change
	Allow      string        `json:"allow,omitempty"` // "Allow" / "Allow and apply"
	Deny       string        `json:"deny,omitempty"`  // "Not now" / "Don't allow"
	State      string        `json:"state,omitempty"` // CardPending, CardAllowed, CardDenied, CardExpired, CardStale
	ArmAfterMs int           `json:"armAfterMs,omitempty"`
	// Data is text the card quotes as data, never as the proxy's words (a request's body,
	// its first bytes); the panel shows it apart, preformatted.
	Data string `json:"data,omitempty"`
	// Diff is an activation card's change of code (CardDiffs): the panel shows a summary, the
	// confirmation window the lines.
	Diff []CodeDiff `json:"diff,omitempty"`
	// Steps and Risks are a plan card's: the steps the person may edit before approving.
	Steps []string `json:"steps,omitempty"`
	Risks []string `json:"risks,omitempty"`
}

// CardRemixlet names the remixlet a card is about; URL is its page in the manager. The name is
// the agent's and can be made to look like one the person knows, so the card adds the proxy's
// words that tell them apart: New says no remixlet of that name runs yet (the card says "New
// remixlet"), Made who made it and when ("made by the agent 2 min ago").
type CardRemixlet struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	New  bool   `json:"new,omitempty"`
	Made string `json:"made,omitempty"`
}

// ClearMessage starts a new chat in the panel: every item is removed.
type ClearMessage struct {
	Type string `json:"type"` // TypeClear
}

// SendMessage is a message the person wrote.
type SendMessage struct {
	Type string `json:"type"` // TypeSend
	Text string `json:"text"`
}

// StopMessage asks to stop the agent.
type StopMessage struct {
	Type string `json:"type"` // TypeStop
}

// NewMessage asks for a new chat.
type NewMessage struct {
	Type string `json:"type"` // TypeNew
}

// ModeMessage switches the chat's mode.
type ModeMessage struct {
	Type string `json:"type"` // TypeMode
	Mode string `json:"mode"`
}

// ModelMessage picks a provider and model for the chat.
type ModelMessage struct {
	Type     string `json:"type"` // TypeModel
	Provider string `json:"provider"`
	Model    string `json:"model"`
}

// DecideMessage is the person's click on a card's button: Allow is true for the allow button.
type DecideMessage struct {
	Type  string `json:"type"` // TypeDecide
	ID    string `json:"id"`
	Allow bool   `json:"allow"`
}

// ResumeMessage asks to go on with a stored chat in this tab.
type ResumeMessage struct {
	Type string `json:"type"` // TypeResume
	Chat string `json:"chat"`
}

// APIAccessMessage turns the chat's API access on or off.
type APIAccessMessage struct {
	Type string `json:"type"` // TypeAPI
	On   bool   `json:"on"`
}

// ActSubmitsMessage asks to turn the chat's "Act may submit forms" switch on (the proxy then
// asks for an Allow on a card) or off.
type ActSubmitsMessage struct {
	Type string `json:"type"` // TypeSubmit
	On   bool   `json:"on"`
}

// ActiveMessage says the person just typed or clicked in the panel (at most once a second).
// Chromium gives the page around the panel the person's activation too, so a navigation the
// page starts in the next seconds carries Sec-Fetch-User as if the person had clicked in the
// page; the proxy does not take it as the person's then (proxy/chat/navguard.go). It can only
// make the proxy stricter, so it needs no check.
type ActiveMessage struct {
	Type string `json:"type"` // TypeActive
}

// CommandMessage is the person's choice of a remixlet's command in the panel (State lists them,
// Commands). panel.js sends it for a trusted click on a command of a list that IntersectionObserver
// v2 has seen visible, not covered, for DefaultArmAfterMs; the proxy runs it only when the
// panel's page has that command now.
type CommandMessage struct {
	Type     string `json:"type"` // TypeCommand
	Remixlet string `json:"remixlet"`
	ID       string `json:"id"`
}

// PlanMessage decides a plan card: approve with the person's version of the steps, or reject.
type PlanMessage struct {
	Type    string   `json:"type"` // TypePlan
	ID      string   `json:"id"`
	Approve bool     `json:"approve"`
	Steps   []string `json:"steps"`
}

// Bounds on a PlanMessage's steps (the agent's plan has the same).
const (
	MaxPlanSteps    = 12
	MaxPlanStepText = 300 // characters
)

// ParsePanelMessage decodes one message from the panel into a *SendMessage, *StopMessage,
// *NewMessage, *ModeMessage, *ModelMessage, *DecideMessage, *ResumeMessage, *APIAccessMessage,
// *ActSubmitsMessage, *PlanMessage, *ActiveMessage or *CommandMessage. It refuses unknown types, a
// mode that is not a Mode constant, an empty or oversized text (MaxSendText), text that is not
// UTF-8, and a decide without an id. The panel is on remix.proxy, but its messages are still
// the person's input: check IDs against the chat's own items.
func ParsePanelMessage(b []byte) (any, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("panel message: %w", err)
	}
	var v any
	switch head.Type {
	case TypeSend:
		v = new(SendMessage)
	case TypeStop:
		v = new(StopMessage)
	case TypeNew:
		v = new(NewMessage)
	case TypeMode:
		v = new(ModeMessage)
	case TypeModel:
		v = new(ModelMessage)
	case TypeDecide:
		v = new(DecideMessage)
	case TypeResume:
		v = new(ResumeMessage)
	case TypeAPI:
		v = new(APIAccessMessage)
	case TypePlan:
		v = new(PlanMessage)
	case TypeSubmit:
		v = new(ActSubmitsMessage)
	case TypeActive:
		v = new(ActiveMessage)
	case TypeCommand:
		v = new(CommandMessage)
	default:
		return nil, fmt.Errorf("panel message: unknown type %q", head.Type)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("panel message %s: %w", head.Type, err)
	}
	switch m := v.(type) {
	case *SendMessage:
		if m.Text == "" {
			return nil, errors.New("panel message send: empty text")
		}
		if len(m.Text) > MaxSendText {
			return nil, fmt.Errorf("panel message send: text longer than %d bytes", MaxSendText)
		}
		if !utf8.ValidString(m.Text) {
			return nil, errors.New("panel message send: text is not UTF-8")
		}
	case *ModeMessage:
		if m.Mode != ModeAsk && m.Mode != ModeBuild && m.Mode != ModeAct {
			return nil, fmt.Errorf("panel message mode: unknown mode %q", m.Mode)
		}
	case *ModelMessage:
		if m.Provider == "" || m.Model == "" {
			return nil, errors.New("panel message model: provider and model are needed")
		}
	case *DecideMessage:
		if m.ID == "" {
			return nil, errors.New("panel message decide: no id")
		}
	case *CommandMessage:
		if m.Remixlet == "" || m.ID == "" {
			return nil, errors.New("panel message command: remixlet and id are needed")
		}
	case *PlanMessage:
		if m.ID == "" {
			return nil, errors.New("panel message plan: no id")
		}
		if !m.Approve {
			m.Steps = nil
			break
		}
		if len(m.Steps) == 0 || len(m.Steps) > MaxPlanSteps {
			return nil, fmt.Errorf("panel message plan: a plan has 1 to %d steps", MaxPlanSteps)
		}
		for i, s := range m.Steps {
			if !utf8.ValidString(s) || strings.TrimSpace(s) == "" || utf8.RuneCountInString(s) > MaxPlanStepText {
				return nil, fmt.Errorf("panel message plan: step %d must be 1 to %d characters of text", i+1, MaxPlanStepText)
			}
			m.Steps[i] = strings.TrimSpace(s)
		}
	}
	return v, nil
}
