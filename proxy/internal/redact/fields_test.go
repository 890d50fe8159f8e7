package redact

import (
	"slices"
	"strings"
	"testing"

	"github.com/remixproxy/remixproxy/internal/jslist"
)

func TestRedactNamedSecretInputsByStructure(t *testing.T) {
	var r *Redactor // no known values: structure alone
	tests := []struct {
		name, in, want string
	}{
		{"card number by name", `<input name="cardnumber" value="4000 1234">`, `<input name="cardnumber" value="[redacted: password]">`},
		{"security code by id", `<input id=cardCvc value=123>`, `<input id="cardCvc" value="[redacted: password]">`},
		{"one-time code by placeholder", `<input placeholder="OTP" value="482913">`, `<input placeholder="OTP" value="[redacted: password]">`},
		{"one-time code by autocomplete", `<input autocomplete="one-time-code" value="482913">`, `<input autocomplete="one-time-code" value="[redacted: password]">`},
		{"card by autocomplete", `<input autocomplete="cc-csc" value="123">`, `<input autocomplete="cc-csc" value="[redacted: password]">`},
		{"security code by label", `<input aria-label="Security code" value="123">`, `<input aria-label="Security code" value="[redacted: password]">`},
		{"a hidden input keeps its value", `<input type="hidden" name="cvc" value="x">`, `<input type="hidden" name="cvc" value="x">`},
		{"a coupon keeps its value", `<input name="coupon_code" value="SAVE10">`, `<input name="coupon_code" value="SAVE10">`},
		{"a postcode keeps its value", `<input name="pincode" value="560001">`, `<input name="pincode" value="560001">`},
		{"no code inside a word", `<input name="hotpink" value="x">`, `<input name="hotpink" value="x">`},
		// Red-team pass 6c: a password field the page shows as text, a PIN masked inline.
		{"password by name shown as text", `<input type="text" name="password" value="hunter2">`, `<input type="text" name="password" value="[redacted: password]">`},
		{"password by id word", `<input id="login-pwd" value="hunter2">`, `<input id="login-pwd" value="[redacted: password]">`},
		{"drupal pass", `<input name="pass" value="hunter2">`, `<input name="pass" value="[redacted: password]">`},
		{"a passport number keeps its value", `<input name="passport" value="X123">`, `<input name="passport" value="X123">`},
		{"inline mask", `<input name="pin" style="color: red; -webkit-text-security: disc" value="8642">`, `<input name="pin" style="color: red; -webkit-text-security: disc" value="[redacted: password]">`},
		{"inline mask important", `<input style="text-security:square !important" value="8642">`, `<input style="text-security:square !important" value="[redacted: password]">`},
		{"a password's data-value copy", `<input type="password" data-value="hunter2" data-len="7" value="">`, `<input type="password" data-value="[redacted: password]" data-len="[redacted: password]" value="">`},
		{"inline unmask keeps its value", `<input name="pin" style="-webkit-text-security: none" value="8642">`, `<input name="pin" style="-webkit-text-security: none" value="8642">`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Redact(tt.in); got != tt.want {
				t.Errorf("Redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestSecretFieldListsMatchThePageAgent: the Go lists and the page agent's (rx_policy.js) are
// the same, so a field the page agent keeps from the model is not shown by the structural rule.
func TestSecretFieldListsMatchThePageAgent(t *testing.T) {
	read := jslist.FileReader(t, "../../../panel/pageagent/rx_policy.js")
	for _, c := range []struct {
		js  string
		go_ []string
	}{
		{"SECRET_FIELD_PHRASES", secretFieldPhrases},
		{"SECRET_FIELD_CODES", secretFieldCodes},
		{"SECRET_FIELD_ATTRS", secretFieldAttrs},
		{"NOT_TYPED", notTypedInputs},
	} {
		if js := read(c.js); !slices.Equal(js, c.go_) {
			t.Errorf("%s in rx_policy.js is %s, the Go list %s", c.js, strings.Join(js, ","), strings.Join(c.go_, ","))
		}
	}
}
