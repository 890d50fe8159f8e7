package redact

import "strings"

// Fields a page calls secret by their names. The page agent treats a text field as sensitive
// when its name, id, autocomplete, placeholder or aria-label calls it a card number, a card's
// security code, a one-time code or a password, although the page set no autocomplete token
// (or, for a password, shows the field as text)
// (namedSecretField in panel/pageagent/rx_policy.js); the structural rule for <input> tags in
// any text does the same here, so such a field's value written into HTML (a server-rendered
// form in a JSON answer, a page's own markup in a script string) is a marker too. The two lists
// are the page agent's, checked equal by TestSecretFieldListsMatchThePageAgent.

// secretFieldPhrases are looked for in an attribute's letters and digits, lower case.
var secretFieldPhrases = []string{"cardnumber", "cardnum", "cardno", "ccnumber", "ccnum", "creditcardno",
	"kartennummer", "numerodetarjeta", "numerodecarte", "numerocarta", "securitycode", "cardcode",
	"cardverification", "cardpin", "onetimecode", "onetimepass", "otpcode", "verificationcode",
	"smscode", "mfacode", "twofactorcode", "authenticatorcode", "password", "passwd", "passwort", "passcode",
	"motdepasse", "contrasena", "wachtwoord"}

// secretFieldCodes must be a word of their own (split at anything but an ASCII letter or digit,
// and at camelCase).
var secretFieldCodes = []string{"cvc", "cvv", "cvn", "csc", "ccv", "cvd", "cvc2", "cvv2", "otp", "totp", "pwd",
	"pass", "pw"}

// secretFieldAttrs are the attributes that name a field.
var secretFieldAttrs = []string{"name", "id", "autocomplete", "placeholder", "aria-label"}

// notTypedInputs are the input types whose value the person does not type (the page agent's
// NOT_TYPED).
var notTypedInputs = []string{"hidden", "checkbox", "radio", "submit", "button", "reset", "image", "file", "range", "color"}

// secretFieldName reports whether the attribute value s names a secret field, as the page
// agent's secretFieldName does: one of the phrases in its letters and digits, or one of the
// codes as a word.
func secretFieldName(s string) bool {
	if len(s) > 256 {
		s = s[:256]
	}
	var joined, word strings.Builder
	prev := 0 // 0 other, 1 lower or digit, 2 upper
	for i := 0; i < len(s); i++ {
		c := s[i]
		kind := 0
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			kind = 1
		case c >= 'A' && c <= 'Z':
			kind = 2
		}
		var next byte
		if i+1 < len(s) {
			next = s[i+1]
		}
		boundary := kind == 0 || kind == 2 && (prev == 1 || prev == 2 && next >= 'a' && next <= 'z')
		if boundary && word.Len() > 0 {
			if isSecretFieldCode(word.String()) {
				return true
			}
			word.Reset()
		}
		if kind != 0 {
			if kind == 2 {
				c += 'a' - 'A'
			}
			word.WriteByte(c)
			joined.WriteByte(c)
		}
		prev = kind
	}
	if isSecretFieldCode(word.String()) {
		return true
	}
	j := joined.String()
	for _, p := range secretFieldPhrases {
		if strings.Contains(j, p) {
			return true
		}
	}
	return false
}

func isSecretFieldCode(w string) bool {
	for _, c := range secretFieldCodes {
		if w == c {
			return true
		}
	}
	return false
}

// namedSecretInput reports whether an input tag with these attributes (keys lower case, values
// as written) is a field its names call secret.
func namedSecretInput(attrs map[string]string) bool {
	for _, t := range notTypedInputs {
		if strings.EqualFold(strings.TrimSpace(attrs["type"]), t) {
			return false
		}
	}
	for _, a := range secretFieldAttrs {
		if v, ok := attrs[a]; ok && v != "" && secretFieldName(v) {
			return true
		}
	}
	return false
}

// maskedByStyle reports whether an inline style (lower case) masks its field's text, as the
// page agent's isMasked sees it in the computed style: -webkit-text-security (or the
// unprefixed spelling) other than none. Banks mask PINs in text inputs this way; a class rule
// cannot be seen in an HTML string, the inline style can (red-team pass 6c).
func maskedByStyle(style string) bool {
	for rest := style; ; {
		i := strings.Index(rest, "text-security")
		if i < 0 {
			return false
		}
		rest = rest[i+len("text-security"):]
		v, ok := strings.CutPrefix(strings.TrimLeft(rest, " \t\n"), ":")
		if !ok {
			continue
		}
		v, _, _ = strings.Cut(v, ";")
		v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "!important"))
		if v != "" && v != "none" {
			return true
		}
	}
}
