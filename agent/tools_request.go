package agent

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
)

// http_request (issue 6, "Mutating requests"): the agent sends an HTTP request from the proxy
// as the person, to the chat page's own site. Which site counts, whether the method is allowed
// (GET and HEAD freely; POST, PUT, PATCH and DELETE only with the chat's API access on, and
// each after the person's click on a card) and how redirects are followed is decided by the
// Env (proxy/chat/request.go); this file only checks that the model's arguments are well
// formed.

// HTTPRequest is one http_request call.
type HTTPRequest struct {
	Method  string            // upper case, one of GET HEAD POST PUT PATCH DELETE
	URL     string            // absolute, or relative to the chat's page
	Headers map[string]string // request headers the model set (checked again by the Env)
	Body    *string           // nil: no body
}

// Requester is an Env that can send http_request calls. An Env without it answers the tool
// with a refusal.
type Requester interface {
	HTTPRequest(ctx context.Context, r HTTPRequest) (string, error)
}

// Bounds on http_request's arguments.
const (
	maxRequestHeaders = 30
	maxRequestBody    = 256 << 10 // below MaxArguments: the body travels inside the arguments
)

var requestTools = []tool{
	{spec: ToolSpec{Name: "http_request", Description: "Send an HTTP request from the proxy as the person (with their cookies for that address) to this page's own site — this origin or another host of the same registrable domain, e.g. api.shop.test from www.shop.test; other sites are refused. GET and HEAD repeat what the page can read (see read_page_data for the requests the page made). POST, PUT, PATCH and DELETE are refused unless the person turned on API access for this chat in the panel (you cannot turn it on; ask them if it is needed), and even then each one waits for the person's decision on a card. Returns the status, some headers and up to 8000 characters of the body.",
		Parameters: schema(`{"type":"object","properties":{
			"method":{"type":"string","enum":["GET","HEAD","POST","PUT","PATCH","DELETE"]},
			"url":{"type":"string","description":"absolute, or relative to the page"},
			"headers":{"type":"object","description":"request headers as name: value strings (Cookie, Origin, Host and the browser's other forbidden headers are refused)"},
			"body":{"type":"string","description":"the request body as text, e.g. JSON (not for GET or HEAD)"}},
			"required":["method","url"]}`)},
		modes: []Mode{ModeAct}, run: runHTTPRequest},
}

func init() {
	tools = append(tools, requestTools...)
}

func runHTTPRequest(ctx context.Context, env Env, args map[string]any, _ json.RawMessage) (string, error) {
	rq, ok := env.(Requester)
	if !ok {
		return "", toolErrorf("http_request is not available here")
	}
	r := HTTPRequest{Method: args["method"].(string), URL: strings.TrimSpace(args["url"].(string))}
	if r.URL == "" {
		return "", toolErrorf("url is empty; give the address, e.g. \"/api/cart\"")
	}
	if h, ok := args["headers"].(map[string]any); ok {
		if len(h) > maxRequestHeaders {
			return "", toolErrorf("%d headers is too many; send at most %d", len(h), maxRequestHeaders)
		}
		names := make([]string, 0, len(h))
		for name := range h {
			names = append(names, name)
		}
		sort.Strings(names)
		r.Headers = map[string]string{}
		for _, name := range names {
			v, ok := h[name].(string)
			if !ok {
				return "", toolErrorf("header %q must be a string", truncateRunes(name, 60))
			}
			r.Headers[name] = v
		}
	}
	if b, ok := args["body"].(string); ok {
		if r.Method == "GET" || r.Method == "HEAD" {
			return "", toolErrorf("a %s request has no body; leave body out", r.Method)
		}
		if len(b) > maxRequestBody {
			return "", toolErrorf("the body is %d bytes, over the %d-byte limit", len(b), maxRequestBody)
		}
		r.Body = &b
	}
	return rq.HTTPRequest(ctx, r)
}

// MutatingMethod reports whether method changes things on the server (POST, PUT, PATCH,
// DELETE): those need the chat's API access and a card.
func MutatingMethod(method string) bool {
	switch method {
	case "POST", "PUT", "PATCH", "DELETE":
		return true
	}
	return false
}

// waitsForPerson reports whether a tool may wait for the person's decision on a card, so the
// loop does not bound it with Config.ToolTimeout (the card has its own lifetime, and the turn
// its Stop button).
func waitsForPerson(name string) bool {
	switch name {
	case "write_remixlet", "request_permissions", "http_request", "propose_plan":
		return true
	}
	return false
}
