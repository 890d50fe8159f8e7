// Package scripted is a stand-in model server: a local HTTP server that speaks both the OpenAI
// Chat Completions and the Anthropic Messages wire formats, streaming, and answers each request
// with the next turn of a script. Tests use it to drive the agent end to end through the real
// providers; the binary can use it to try the panel offline.
//
// It sits where a model provider would: agent.NewOpenAI pointed at URL+"/v1", or
// agent.NewAnthropic pointed at URL, talk to it exactly as to the real services. It never dials
// out, never runs anything from the script or the requests, and does not import package testing,
// so the binary may link it.
//
// # Script format
//
//	{
//	  "turns": [
//	    {"text": "Let me look at the page."},
//	    {"text": "", "tool_calls": [{"name": "outline", "arguments": {"selector": "main"}}]},
//	    {"error": {"status": 429, "body": "slow down", "retry_after": 0}},
//	    {"expect": "Sponsored", "text": "Hiding {{grab:(\\d+) promoted}} promoted posts."}
//	  ],
//	  "repeat_last": false
//	}
//
// Each POST consumes the next turn. A turn is answered with:
//   - "error": an HTTP error with that status and body (a body in the provider's own error
//     shape when "body" is empty) and a Retry-After of "retry_after" seconds (default 0, so a
//     provider's retry comes at once); the rest of the turn is ignored;
//   - otherwise "text" (streamed in several small chunks) followed by "tool_calls" (each with
//     a fresh id, call_1, call_2… or toolu_1, toolu_2…, and its arguments streamed in two or
//     more pieces). "arguments" must be a JSON object; absent means {}. A turn with neither
//     text nor tool calls replies with empty text.
//
// "expect" (optional) is a substring the last message of the request must contain (its text,
// or the text of the tool results it carries). When it does not, the turn is still consumed but
// the reply is only a text saying which expectation failed, so the test sees it.
//
// After the last turn the server answers "(script finished)" with no tool calls, unless
// "repeat_last" is true, in which case the last turn is answered again and again.
//
// # Templates
//
// In "text" and in every string value inside "arguments", {{grab:REGEXP}} is replaced with the
// first capture group (or, without groups, the whole match) of REGEXP (Go syntax) applied to the
// text of the most recent tool result in the request: the last OpenAI "tool" message, or the
// last Anthropic tool_result block. It is empty when there is no tool result or no match. This
// lets a script play a model that obeys instructions planted in a page. The REGEXP ends at the
// first "}}".
//
// Usage figures are approximate: a quarter of the characters read and written.
package scripted
