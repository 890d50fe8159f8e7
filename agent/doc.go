// Package agent is the AI agent of the chat panel: model providers, the tool loop, and the
// tools it may call.
//
// Data flow:
//
//	panel (remix.proxy iframe) ─ws→ proxy/chat/chat.go ─→ Chat.Send (loop.go)
//	    loop.go       one turn at a time: Provider.Stream, then each tool call through Tools
//	    provider.go   the Provider interface and the wire-neutral request/response types
//	    openai.go     OpenAI-compatible Chat Completions (OpenAI, Groq, OpenRouter, LM Studio,
//	                  llama.cpp, Ollama /v1), streaming with tool calls
//	    anthropic.go  Anthropic Messages API, streaming with tool calls
//	    sse.go        the server-sent-events reader both use
//	    tools*.go     fixed Go tools by mode (tools_act.go: Act; tools_plan.go, tools_request.go);
//	                  page tools go to the page agent as data (proxy/page/tools.go)
//	    compact.go    context trimming: a model-written summary, pinned messages, the last 16
//	    loopdetect.go identical and A-B-A-B calls → a nudge, then the turn ends
//	    trace.go      a per-turn record of model and tool calls for the Traces page
//	    prompt.go     the system prompt; sitenotes.go adds one site's guidance (sitenotes/*.md)
//	    settings.go   providers, models and keys in <data-dir>/providers.json (0600)
//
// It must never: run model-written code on a page (model code runs only as a remixlet, through
// the sandbox), let the model approve anything (permissions and activations are decided by the
// person's clicks in the panel, through proxy code), or put an API key in a page, a log line, a
// URL or an error message.
package agent
