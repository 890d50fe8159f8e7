package redact

import (
	"encoding/base64"
	"strings"
	"testing"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Keys in the formats of keys.go, made up for the tests (the GitHub and npm ones with their
// checksums right; the JWT with a registered claim).
const (
	kGitHub      = "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"
	kGitHubOAuth = "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"
	kNPM         = "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"
	kGitHubPAT   = "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"
	kStripe      = "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"
	kStripeRK    = "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"
	kSlack       = "xoxb-7621377823606-8794679503400-r5m3xyUM7zscoN1qRCwu4V3Y"
	kGitLab      = "glpat-i1YAaJXb0yiFx7taAYZ0"
	kOpenAI      = "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"
	kOpenAIOld   = "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"
	kAnthropic   = "sk-ant-api03-bI09w0XRqX9ab1C-CYuaT5ROGdc2DLovn_5st9kscsE2TBM0TPM-jt363p-mwCJzwbw3Oxy3xPwaGUs1EZXOL4CkdKgmqAA"
	kGoogle      = "AIzay75-i0IoFucAbqrEABESQClyec1_06Zn72N"
	kPyPI        = "pypi-AgEIcHlwaS5vcmc2IOf9qa_ckPZL132Ux620aoECY9rYDOk-n9APMZ7gKnTs4tNjGRA2XJmN9WH0JPpCwDuP2"
	kHF          = "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"
	kSendGrid    = "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"
	kTwilio      = "SKd3bd93fdc7a7d015ab554dcf0ba527ba"
	kShopify     = "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"
	kDO          = "dop_v1_f14be381442c4d096846db6db278076f0e7478f85dddaa5c2e4bc5d42ccffc0b"
	kTelegram    = "8600864617:AAdRpr14PuqRSG8SbitraihzMQLad91Q98k"
	kAWSID       = "AKIAIOSFODNN7EXAMPLE"
	kAWSTemp     = "ASIAGPRS5KZW6XMO4FCI"
	kAWSSecret   = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	kJWT         = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1c2VyLTg4MTIiLCJleHAiOjE5OTk5OTk5OTl9.GExX6KG5qxLJXNr2W5J_vxNtmcyX6kZgRTqrIz5PpIX"
	kPEM         = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----"
	// Signed article data, as news sites put in their share widgets: no registered claim.
	kArticleJWT = "eyJhbGciOiJIUzI1NiJ9.eyJ0aXRsZSI6IkEgc3RvcnkiLCJhcnRpY2xlSWQiOiI4ODEyIn0.AWx6_A-9W_d3ZuEhMQBrniE6V5DgoLJ0FhSINfuvXEM"
)

// TestRedactKeys: every format, alone, in sentences, HTML, JSON, addresses and logs, is replaced
// whole; look-alikes (a wrong checksum, a wrong length, part of a longer word, words) are kept.
func TestRedactKeys(t *testing.T) {
	const m = "[redacted: key]"
	for _, c := range []struct{ name, in, want string }{
		{"GitHub classic", "Your new token: " + kGitHub + ". Copy it now.", "Your new token: " + m + ". Copy it now."},
		{"GitHub OAuth", kGitHubOAuth, m},
		{"GitHub fine-grained", "token " + kGitHubPAT, "token " + m},
		{"npm", "//registry.npmjs.org/:_authToken=" + kNPM, "//registry.npmjs.org/:_authToken=" + m},
		{"Stripe secret", `<code data-key="` + kStripe + `">`, `<code data-key="` + m + `">`},
		{"Stripe restricted", "rk: " + kStripeRK, "rk: " + m},
		{"Slack", "SLACK_BOT_TOKEN=" + kSlack + "\n", "SLACK_BOT_TOKEN=" + m + "\n"},
		{"Slack webhook", "curl https://hooks.slack.com/services/T0123ABCD/B0456EFGH/aBcDeFgHiJkLmNoPqRsTuVwX", "curl https://hooks.slack.com/services/" + m},
		{"GitLab", "glpat: " + kGitLab + ".", "glpat: " + m + "."},
		{"OpenAI project", `{"k":"` + kOpenAI + `"}`, `{"k":"` + m + `"}`},
		{"OpenAI legacy", "OPENAI_API_KEY=" + kOpenAIOld, "OPENAI_API_KEY=" + m},
		{"Anthropic", "x-api-key: " + kAnthropic, "x-api-key: " + m},
		{"Google", "https://maps.googleapis.com/maps/api/js?key=" + kGoogle + "&v=3", "https://maps.googleapis.com/maps/api/js?key=" + m + "&v=3"},
		{"Google, nested address", "next=%2Fmap%3Fkey%3D" + kGoogle, "next=%2Fmap%3Fkey%3D" + m},
		{"PyPI", "password = " + kPyPI, "password = " + m},
		{"Hugging Face", "HF_TOKEN=" + kHF, "HF_TOKEN=" + m},
		{"SendGrid", "SENDGRID_API_KEY=" + kSendGrid, "SENDGRID_API_KEY=" + m},
		{"Twilio", "sid " + kTwilio, "sid " + m},
		{"Shopify", kShopify + " (admin)", m + " (admin)"},
		{"DigitalOcean", "do: " + kDO, "do: " + m},
		{"Telegram", "bot token " + kTelegram, "bot token " + m},
		{"Telegram address", "https://api.telegram.org/bot" + kTelegram + "/getMe", "https://api.telegram.org/bot" + m + "/getMe"},
		{"AWS key id and secret", "aws_access_key_id = " + kAWSID + "\naws_secret_access_key = " + kAWSSecret + "\n",
			"aws_access_key_id = " + m + "\naws_secret_access_key = " + m + "\n"},
		{"AWS temporary id", "AccessKeyId: " + kAWSTemp, "AccessKeyId: " + m},
		{"AWS secret in JSON", `{"AWS_SECRET_ACCESS_KEY": "` + kAWSSecret + `"}`, `{"AWS_SECRET_ACCESS_KEY": "` + m + `"}`},
		{"AWS secret escaped", `aws_secret_access_key=wJalrXUtnFEMI%2FK7MDENG%2FbPxRfiCYEXAMPLEKEY&x=1`, `aws_secret_access_key=` + m + `&x=1`},
		{"JWT", "Authorization header value " + kJWT + " expires", "Authorization header value " + m + " expires"},
		{"JWT in a JSON log line", `\n` + kJWT + `\n`, `\n` + m + `\n`},
		{"private key block", "key.pem:\n" + kPEM + "\ndone", "key.pem:\n" + m + "\ndone"},
		{"private key block, JSON-escaped", `{"t":"` + strings.ReplaceAll(kPEM, "\n", `\n`) + `"}`, `{"t":"` + m + `"}`},
		{"private key block, no end line", `{"t":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7"}`, `{"t":"` + m + `"}`},
		{"two side by side", kGitHub + " " + kNPM, m + " " + m},
		// Encoded in base64, on their own (a Kubernetes secret's data).
		{"base64 GitHub", "token: " + b64(kGitHub), "token: " + m},
		{"base64 GitHub and a line break", `  token: "` + b64(kGitHub+"\n") + `"`, `  token: "` + m + `"`},
		{"base64 URL alphabet", "k=" + base64.RawURLEncoding.EncodeToString([]byte(kAnthropic)), "k=" + m},
		{"base64 private key block", "tls.key: " + b64(kPEM+"\n"), "tls.key: " + m},
		{"base64 of no key", "x: " + b64("ghp_abc") + " y: " + b64("AKIA is a prefix"), "x: " + b64("ghp_abc") + " y: " + b64("AKIA is a prefix")},
		// Cut keys: the first characters of a key where a text stops.
		{"cut GitHub", "token: " + kGitHub[:30], "token: " + m},
		{"cut Stripe before an ellipsis", "key " + kStripe[:18] + "… more", "key " + m + "… more"},
		{"a cut key's first half shows", "token: " + kGitHub[:21], "token: " + kGitHub[:21]},
		{"cut JWT", "t=" + kJWT[:50], "t=" + m},
		{"cut Telegram", kTelegram[:32] + "[truncated]", m + "[truncated]"},
		{"cut AWS secret", "aws_secret_access_key=" + kAWSSecret[:10], "aws_secret_access_key=" + m},
		// Kept.
		{"GitHub, checksum wrong", kGitHub[:39] + "n", kGitHub[:39] + "n"},
		{"GitHub, too long", kGitHub + "x", kGitHub + "x"},
		{"GitHub prefix in a word", "x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", "x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"},
		{"article JWT", "share " + kArticleJWT, "share " + kArticleJWT},
		{"AWS id too short", "AKIAIOSFODNN7EXAMPL is short", "AKIAIOSFODNN7EXAMPL is short"},
		{"short pieces at a cut", "the hf_home", "the hf_home"},
		{"AWS secret placeholder", "aws_secret_access_key=YOUR_SECRET_KEY", "aws_secret_access_key=YOUR_SECRET_KEY"},
		{"public key block", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq\n-----END PUBLIC KEY-----"},
		{"words", "sk-8 skates, the ghp_ prefix, AKIA and AIza are names; eyJ too. npm_install, hf_hub, SG.Group", "sk-8 skates, the ghp_ prefix, AKIA and AIza are names; eyJ too. npm_install, hf_hub, SG.Group"},
		{"short prefix at a cut", "the prefix sk_live_", "the prefix sk_live_"},
		{"class names", `<div class="sk-proj-header gl-pat-row xoxb-widget">`, `<div class="sk-proj-header gl-pat-row xoxb-widget">`},
		{"a hash", "commit SKa94a8fe5ccb19ba61c4c0873d391e98712345678 and 1234567890:AAbc", "commit SKa94a8fe5ccb19ba61c4c0873d391e98712345678 and 1234567890:AAbc"},
		{"markers stay", m + " " + m, m + " " + m},
	} {
		if got := redactKeys(c.in); got != c.want {
			t.Errorf("%s: redactKeys(%q)\n got %q\nwant %q", c.name, c.in, got, c.want)
		}
	}
}

// TestRedactPageTakesKeysRedactDoesNot: a tool result (RedactPage) loses keys wherever JSON
// carries them, \u escapes included, and a JSON string's end is a cut; the person's own text
// (Redact) keeps the key they wrote.
func TestRedactPageTakesKeysRedactDoesNot(t *testing.T) {
	r := New(nil)
	in := "my token is " + kGitHub
	if got := r.Redact(in); got != in {
		t.Errorf("Redact(%q) = %q, want the person's key kept", in, got)
	}
	for _, c := range []struct{ name, in, want string }{
		{"text", in, "my token is [redacted: key]"},
		{"a \\u escape in JSON", `{"text":"\u0067hp_IKrpwAM08O8zOsbGKSrSY0pLJf5R7L30RXfm"}`, `{"text":"[redacted: key]"}`},
		{"cut at a JSON string's end", `{"text":"token ` + kNPM[:24] + `","truncated":true}`, `{"text":"token [redacted: key]","truncated":true}`},
		{"JSON in a JSON string", `{"body":"{\"apiKey2\":\"` + kStripe + `\"}"}`, `{"body":"{\"apiKey2\":\"[redacted: key]\"}"}`},
		{"card too", `{"t":"` + kDO + ` 4111 1111 1111 1111"}`, `{"t":"[redacted: key] [redacted: card number]"}`},
	} {
		if got := r.RedactPage(c.in); got != c.want {
			t.Errorf("%s: RedactPage(%q)\n got %q\nwant %q", c.name, c.in, got, c.want)
		}
	}
}
