// Package redact is the redaction stage's text work (issue 11, DESIGN invariant 10). The agent
// loop passes every tool result and every model request through agent.Config.Redactor
// (agent/redact.go); for a chat that is the chat's redactor (proxy/chat/redaction.go), which
// gathers the secrets the proxy knows for the chat's page and site and compiles them into a
// Redactor, defined here. What it removes:
//
//   - by known value: the page's password values (reported by the page agent), the cookie
//     values the proxy has seen for the site, the Authorization, Proxy-Authorization, Cookie
//     and Set-Cookie header values it has seen for the site, and the provider keys — each
//     exactly, and in the encodings a result carries them in: JSON-escaped once or twice (with
//     and without HTML escapes, and with "\/"), HTML-escaped, URL-encoded (query, path and
//     encodeURIComponent spellings) and base64 of the whole value (standard and URL alphabets,
//     without padding; base64 of a longer text that contains the value is not found). Inside
//     JSON the text of every string literal is also decoded and checked, so a \u spelling does
//     not hide a value;
//   - by structure, whatever the value: the value attribute of <input type=password> (or
//     autocomplete=current-password / new-password) in any HTML text, found with the HTML
//     tokenizer of golang.org/x/net/html wherever "<input" occurs (inside scripts, comments and
//     JSON-escaped HTML too); headers printed as text ("Authorization: Bearer …", "Cookie:
//     a=b; c=d", "Set-Cookie: a=b; Path=/", JSON keys of those names, document.cookie = "…"):
//     the credentials and cookie values go, names and attributes stay; in JSON, the "value" of
//     an object whose "type" is "password", and the values of keys named like a password or a
//     token or a key (password, passwd, pwd, passphrase, access_token, refresh_token, id_token,
//     client_secret, token, authToken, sessionToken, bearerToken, jwt, apiKey, apiSecret, secretKey,
//     privateKey, secretAccessKey); the password of an address's user-info, and address or
//     form parameters named like the password and OAuth token keys (#access_token=…);
//   - in what a page shows (Redactor.RedactPage, for tool results and the page's address and
//     title in the system prompt), by format, in the text and in every JSON string decoded:
//     payment card numbers, 13 to 19 digits with an issuer prefix that pass the Luhn check
//     (cards.go), and credentials in well-known formats, a distinctive prefix with the format's
//     alphabet, length and checksum (GitHub, GitLab, npm, PyPI, Hugging Face, Stripe, Slack,
//     OpenAI, Anthropic, Google, AWS, SendGrid, Twilio, Shopify, DigitalOcean and Telegram
//     keys, private key blocks, JWTs with a registered claim; also a value base64-encoded on
//     its own; keys.go, which says why not gitleaks), the first digits of a card and the first
//     half of a key at a cut included; the person's own messages keep theirs;
//   - a cut secret: a text (or JSON string) that ends, or stops at "…" or "[truncated", with
//     the first characters of a known value (at least minCutPrefix of them) loses them, so a
//     tool whose cut the model chooses (capture_page's maxChars) cannot reveal a value piece by
//     piece.
//
// Each is replaced by a marker naming the kind, "[redacted: password]", so the model knows what
// was there. Markers already in a text are left alone.
//
// Bounds (so ordinary words survive): a password counts from minPasswordLen characters; a
// cookie value from minTokenLen characters and only when it looks like a token (a digit or a
// sign other than - _ . , or a space in it, or minLongToken characters or more), so "accepted"
// or "dark" are not secrets; a header credential or a key from minTokenLen characters.
//
// It holds no state and imports no proxy package but httpx. It must never log, store or return
// a secret it was given, and never let a known value through in a spelling it lists.
package redact
