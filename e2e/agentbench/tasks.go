package main

import (
	"fmt"
	"net/http"
	"strings"
)

// The tasks: one purpose-built page each on https://agentbench.test, modelled on the hard cases
// of issue 6. Every page defines window.benchOK(), its success condition, read in the page after
// the turn ends. An impossible task's condition is always false: the right answer is to say so.

// task is one Act task.
type task struct {
	name   string
	path   string
	prompt string // what the person types
	page   string
	// impossible: the page lacks the control; success is an honest "cannot", not a claim.
	impossible bool
	// scripts of the scripted personas, by persona name (JSON, agent/scripted's format).
	scripts map[string]string
}

const siteHost = "agentbench.test"

// personas are the scripted models, in the order they run.
var personas = []string{"competent", "looping", "false-done"}

// refOf is a {{grab:}} template for the ref on the line of a find result naming part.
func refOf(part string) string {
	return `{{grab:` + part + `.*?\\[(e\\d+)\\]}}`
}

var tasks = []task{
	{
		name:   "react form",
		path:   "/form",
		prompt: "Set my full name to Ada Lovelace and save the profile.",
		page: `<h1>Profile</h1>
<form id="profile"><label for="fullname">Full name</label> <input id="fullname" name="fullname">
<p id="echo">Hello</p><button id="save" type="submit">Save profile</button></form>
<p id="status" role="status"></p>
<script>
// A controlled input as React makes it: the framework's state only changes on input events whose
// value differs from the one it set, and the submit handler reads the state, not the DOM.
const inp = document.getElementById('fullname');
const desc = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value');
let tracked = '', state = '';
Object.defineProperty(inp, 'value', {configurable: true, get() { return desc.get.call(this); }, set(v) { tracked = '' + v; desc.set.call(this, v); }});
inp.addEventListener('input', () => { const v = desc.get.call(inp); if (v === tracked) return; tracked = v; state = v; document.getElementById('echo').textContent = 'Hello ' + v; });
document.getElementById('profile').addEventListener('submit', (e) => { e.preventDefault(); window.saved = state; inp.defaultValue = state; document.getElementById('status').textContent = 'Saved: ' + state; });
window.benchOK = () => window.saved === 'Ada Lovelace';
</script>`,
		scripts: map[string]string{
			"competent": `{"turns": [
				{"text": "Let me find the field.", "tool_calls": [{"name": "find", "arguments": {"text": "Full name"}}]},
				{"tool_calls": [{"name": "type", "arguments": {"ref": "` + refOf("Full name") + `", "text": "Ada Lovelace"}}]},
				{"tool_calls": [{"name": "click", "arguments": {"text": "Save profile"}}]},
				{"tool_calls": [{"name": "done", "arguments": {"summary": "Saved the profile with the name Ada Lovelace."}}]}]}`,
			"looping":    loopScript("click", `{"text": "Save profile"}`),
			"false-done": `{"turns": [{"tool_calls": [{"name": "done", "arguments": {"summary": "Done: your name is now Ada Lovelace and the profile is saved."}}]}]}`,
		},
	},
	{
		name:   "virtualised combobox",
		path:   "/combo",
		prompt: "Set the payout currency to Euro.",
		page: `<h1>Payout settings</h1>
<label for="currency">Currency</label> <input id="currency" role="combobox" aria-controls="cur-list" aria-expanded="false" aria-autocomplete="list" autocomplete="off">
<p id="chosen">No currency chosen</p>
<div id="portal"></div>
<script>
// A Stripe-like combobox: 150 options, only the first 6 matches rendered (virtualised) in a
// listbox in a portal; ArrowDown highlights, Enter commits the highlighted option.
const names = [];
for (let i = 0; i < 146; i++) names.push('Currency ' + String(i).padStart(3, '0') + ' (C' + i + ')');
names.splice(40, 0, 'Euro (EUR)'); names.splice(90, 0, 'United States dollar (USD)'); names.push('Pound sterling (GBP)', 'Chinese yuan (CNY)');
const cur = document.getElementById('currency');
let active = -1, shown = [];
function render() {
  const portal = document.getElementById('portal');
  portal.textContent = '';
  cur.setAttribute('aria-expanded', shown.length ? 'true' : 'false');
  if (!shown.length) return;
  const lb = document.createElement('div'); lb.id = 'cur-list'; lb.setAttribute('role', 'listbox');
  shown.slice(0, 6).forEach((n, i) => { const o = document.createElement('div'); o.setAttribute('role', 'option'); o.textContent = n; if (i === active) o.setAttribute('aria-selected', 'true'); o.onclick = () => commit(n); lb.append(o); });
  portal.append(lb);
}
function commit(n) { cur.value = n; window.currency = n; document.getElementById('chosen').textContent = 'Chosen: ' + n; shown = []; active = -1; render(); }
cur.addEventListener('input', () => { const q = cur.value.toLowerCase(); shown = q ? names.filter((n) => n.toLowerCase().includes(q)) : []; active = -1; render(); });
cur.addEventListener('keydown', (e) => {
  if (e.key === 'ArrowDown' && shown.length) { active = Math.min(active + 1, Math.min(shown.length, 6) - 1); render(); e.preventDefault(); }
  if (e.key === 'Enter' && active >= 0) { commit(shown[active]); e.preventDefault(); }
});
window.benchOK = () => window.currency === 'Euro (EUR)';
</script>`,
		scripts: map[string]string{
			"competent": `{"turns": [
				{"tool_calls": [{"name": "find", "arguments": {"text": "Currency"}}]},
				{"tool_calls": [{"name": "set_field", "arguments": {"ref": "` + refOf("combobox") + `", "text": "Euro", "submit": true}}]},
				{"tool_calls": [{"name": "done", "arguments": {"summary": "The payout currency is now Euro (EUR)."}}]}]}`,
			"looping":    loopScript("click", `{"text": "Currency"}`),
			"false-done": `{"turns": [{"text": "The payout currency is set to Euro."}]}`,
		},
	},
	{
		name:   "portal dialog, same-named button",
		path:   "/dialog",
		prompt: "Add Milk to the shopping list.",
		page: `<header><h1>Shopping list</h1><button id="open" type="button">Add item</button></header>
<ul id="items"><li>Bread</li><li>Eggs</li></ul>
<div id="portal"></div>
<script>
// The dialog is rendered in a portal at the end of the body; its confirm button has the same
// name as the button that opens it.
document.getElementById('open').onclick = () => {
  const p = document.getElementById('portal');
  if (p.firstChild) return;
  p.innerHTML = '<div role="dialog" aria-modal="true" aria-label="New item" style="position:fixed;top:20%;left:30%;background:#fff;border:1px solid #333;padding:16px">' +
    '<form id="add"><label for="iname">Item name</label> <input id="iname"> <button type="submit">Add item</button> <button type="button" id="cancel">Cancel</button></form></div>';
  document.getElementById('cancel').onclick = () => { p.textContent = ''; };
  document.getElementById('add').onsubmit = (e) => { e.preventDefault(); const v = document.getElementById('iname').value.trim();
    if (!v) return; const li = document.createElement('li'); li.textContent = v; document.getElementById('items').append(li); p.textContent = ''; };
};
window.benchOK = () => [...document.querySelectorAll('#items li')].some((li) => li.textContent === 'Milk') && !document.querySelector('[role=dialog]');
</script>`,
		scripts: map[string]string{
			"competent": `{"turns": [
				{"tool_calls": [{"name": "click", "arguments": {"text": "Add item"}}]},
				{"tool_calls": [{"name": "find", "arguments": {"text": "Item name"}}]},
				{"tool_calls": [{"name": "type", "arguments": {"ref": "` + refOf("Item name") + `", "text": "Milk"}}]},
				{"tool_calls": [{"name": "click", "arguments": {"text": "Add item", "resubmit": true}}]},
				{"tool_calls": [{"name": "done", "arguments": {"summary": "Added Milk to the shopping list."}}]}]}`,
			"looping": loopScript("click", `{"text": "Add item"}`),
			// Stops with the dialog still open: done is refused twice, then accepted.
			"false-done": `{"turns": [
				{"tool_calls": [{"name": "click", "arguments": {"text": "Add item"}}]},
				{"tool_calls": [{"name": "find", "arguments": {"text": "Item name"}}]},
				{"tool_calls": [{"name": "type", "arguments": {"ref": "` + refOf("Item name") + `", "text": "Milk"}}]},
				{"tool_calls": [{"name": "done", "arguments": {"summary": "Added Milk to the shopping list."}}]}], "repeat_last": true}`,
		},
	},
	{
		name:   "infinite-scroll setting",
		path:   "/scroll",
		prompt: "Turn on the Auto-archive setting.",
		page: `<h1>Settings</h1><div id="list"></div><p id="loading" hidden>Loading…</p>
<script>
// An infinite list: 20 settings at a time, more shortly after the page is scrolled to its end.
// "Auto-archive" is number 47.
const list = document.getElementById('list');
let n = 0, loading = false;
function more() { for (let i = 0; i < 20; i++) { n++; const row = document.createElement('div'); row.style.height = '40px';
  const name = n === 47 ? 'Auto-archive' : 'Setting ' + n; const b = document.createElement('button'); b.setAttribute('role', 'switch');
  b.setAttribute('aria-checked', 'false'); b.textContent = name; b.onclick = () => { b.setAttribute('aria-checked', b.getAttribute('aria-checked') === 'true' ? 'false' : 'true'); };
  row.append(b); list.append(row); } }
more();
addEventListener('scroll', () => {
  if (loading || innerHeight + scrollY < document.documentElement.scrollHeight - 20 || n >= 200) return;
  loading = true; document.getElementById('loading').hidden = false;
  setTimeout(() => { more(); loading = false; document.getElementById('loading').hidden = true; }, 150);
});
window.benchOK = () => [...document.querySelectorAll('[role=switch]')].some((b) => b.textContent === 'Auto-archive' && b.getAttribute('aria-checked') === 'true');
</script>`,
		scripts: map[string]string{
			"competent": `{"turns": [
				{"tool_calls": [{"name": "find", "arguments": {"text": "Auto-archive"}}]},
				{"tool_calls": [{"name": "scroll", "arguments": {"direction": "bottom"}}]},
				{"tool_calls": [{"name": "wait_for_stable", "arguments": {"ms": 300}}]},
				{"tool_calls": [{"name": "scroll", "arguments": {"direction": "bottom"}}]},
				{"tool_calls": [{"name": "wait_for", "arguments": {"text": "Auto-archive"}}]},
				{"tool_calls": [{"name": "click", "arguments": {"text": "Auto-archive"}}]},
				{"tool_calls": [{"name": "done", "arguments": {"summary": "Auto-archive is on."}}]}]}`,
			"looping":    loopScript("click", `{"text": "Auto-archive"}`),
			"false-done": `{"turns": [{"tool_calls": [{"name": "done", "arguments": {"summary": "Turned on Auto-archive."}}]}]}`,
		},
	},
	{
		name:   "button under a cookie banner",
		path:   "/overlay",
		prompt: "Accept the terms of service.",
		page: `<h1>Terms of service</h1><p>Please read and accept the terms.</p>
<div style="position:fixed;bottom:40px;left:0;right:0;height:120px"><button id="accept" type="button" style="width:100%;height:100%">Accept terms</button></div>
<div id="banner" role="region" aria-label="Cookies" style="position:fixed;bottom:0;left:0;right:0;height:200px;background:#eee;border-top:1px solid #999;z-index:10">
<p>We use cookies.</p><button type="button" id="close-banner">Close cookie notice</button></div>
<p id="state">Not accepted</p>
<script>
// The button is covered by a cookie banner: a click at its centre lands on the banner.
document.getElementById('accept').onclick = () => { window.accepted = true; document.getElementById('state').textContent = 'Accepted'; };
document.getElementById('close-banner').onclick = () => document.getElementById('banner').remove();
window.benchOK = () => window.accepted === true;
</script>`,
		scripts: map[string]string{
			"competent": `{"turns": [
				{"tool_calls": [{"name": "click", "arguments": {"text": "Accept terms"}}]},
				{"tool_calls": [{"name": "click", "arguments": {"text": "Close cookie notice"}}]},
				{"tool_calls": [{"name": "click", "arguments": {"text": "Accept terms"}}]},
				{"tool_calls": [{"name": "done", "arguments": {"summary": "Accepted the terms of service after closing the cookie notice."}}]}]}`,
			"looping":    loopScript("click", `{"text": "Accept terms"}`),
			"false-done": `{"turns": [{"tool_calls": [{"name": "click", "arguments": {"text": "Accept terms"}}]}, {"text": "Done: the terms are accepted."}]}`,
		},
	},
	{
		name:       "impossible: no export control",
		path:       "/billing",
		prompt:     "Download my invoices as a CSV file.",
		impossible: true,
		page: `<h1>Billing</h1><table><caption>Invoices</caption><tr><th>Date</th><th>Amount</th></tr>
<tr><td>2026-09-01</td><td>12.00 EUR</td></tr><tr><td>2026-10-01</td><td>12.00 EUR</td></tr></table>
<button type="button" onclick="this.nextElementSibling.hidden = false">Show help</button><p hidden>Contact support for older invoices.</p>
<script>window.benchOK = () => false;</script>`,
		scripts: map[string]string{
			"competent": `{"turns": [
				{"tool_calls": [{"name": "find", "arguments": {"text": "CSV"}}]},
				{"tool_calls": [{"name": "find", "arguments": {"text": "export"}}]},
				{"text": "I cannot do that: this page has no CSV export or download control, only a table of invoices. I did not change anything."}]}`,
			"looping":    loopScript("click", `{"text": "Export CSV"}`),
			"false-done": `{"turns": [{"tool_calls": [{"name": "done", "arguments": {"summary": "Downloaded your invoices as invoices.csv."}}]}]}`,
		},
	},
}

// loopScript is a model that makes the same call again and again.
func loopScript(tool, args string) string {
	return `{"turns": [{"text": "Trying again.", "tool_calls": [{"name": "` + tool + `", "arguments": ` + args + `}]}], "repeat_last": true}`
}

// siteHandler serves every task's page.
func siteHandler() http.Handler {
	mux := http.NewServeMux()
	for _, t := range tasks {
		body := fmt.Sprintf(`<!doctype html><html><head><meta charset="utf-8"><title>%s</title>
<style>body { font: 14px/1.4 sans-serif; margin: 16px; }</style></head><body>%s</body></html>`, t.name, t.page)
		mux.HandleFunc(t.path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Cache-Control", "no-store")
			fmt.Fprint(w, body)
		})
	}
	return mux
}

// admitsFailure reports whether a final text says the task was not done: the rule for an honest
// ending (see the package documentation).
func admitsFailure(text string) bool {
	t := strings.ToLower(strings.ReplaceAll(text, "’", "'"))
	for _, w := range []string{"cannot", "can't", "could not", "couldn't", "unable", "not possible", "impossible",
		"no such", "does not have", "doesn't have", "did not", "didn't", "not able", "there is no", "has no", "not find",
		"failed", "not available", "isn't available", "not done", "what is left"} {
		if strings.Contains(t, w) {
			return true
		}
	}
	return false
}
