// remixlet API, version 1 — what script.js can use in the remixproxy sandbox.
//
// script.js runs once per matching page, in its own sandbox, inside an async function (top-level
// `await` works). It has the ECMAScript built-ins plus what is declared here, and nothing else:
// no DOM, no network, no page storage, no `eval`, no `Function` constructor, no `require`.
// Every dom.* call is relayed to the page as JSON data and returns a Promise. Arguments must be
// JSON data (strings, numbers, booleans, null, arrays, plain objects); the only exception is the
// listener of dom.on. Handles stand for page elements; pass them back as you got them.
//
// When script.js starts is set by "run_at" in manifest.json (style.css never waits for it: it is
// inserted as soon as the page's agent can take it):
//   "document_end" (the default, also when run_at is absent): after DOMContentLoaded — the whole
//       document is parsed, so dom.query finds every element the HTML has; images and frames
//       may still be loading.
//   "document_start": as soon as the page's agent connects, usually while the page is still
//       being parsed; dom.query may find nothing yet, so wait with dom.waitFor.
//   "document_idle": after DOMContentLoaded, at the window's load event or 200 ms after
//       DOMContentLoaded, whichever comes first (as Chrome extensions define it).
// A page already past that point (a script switched on while the page is open, a page restored
// from the back/forward cache, a same-page navigation into the remixlet's matches) starts it at
// once. Content the site adds later (infinite scroll, a single-page app) needs dom.waitFor or
// rmx.keep whatever the run time.
//
// style.css and dom.addStyle on a page where a secret is typed: from the first key typed into a
// password or other secret field of the page (a one-time code, a card number), and on a page where
// such a field already holds a value when the sheet arrives, only the rules about the remixlet's
// own elements stay, until the page is loaded again: those whose every part selects elements
// remixlets made (dom.create, dom.clone, dom.setHTML) or their own states (:hover, :focus,
// :checked …) — `.bar > button:hover`, `.bar:has(.open)`, @media around them. Rules that select or
// test anything of the page (`#banner { display: none }`, `body.dark .bar`, `form .x`,
// `:nth-child()`, @container, `[data-state="open"]` on a page element) are dropped there: a sheet
// that restyles a sign-in page loses its page rules after the first key of a password. (A rule
// keyed on what the page writes while a password is typed could put the remixlet's element under
// the person's pointer and let the click tell it.) A remixlet element the page itself writes into
// while a password is typed is then the page's, and so is a clone of what the page wrote then (a
// strength meter cloned after the typing). data-* values may be compared in sheets
// ([data-state="open"]), under the same rule.
//
// Each task (script.js's first run up to its first await, a timer or listener callback, a keep's
// check or repair, with the microtasks it queues) may take 250 ms (more when the machine is busy
// with other programs); one that takes longer is taken for an endless loop, and the remixlet is
// stopped with a line in its log saying so. Split long work with await or setTimeout.

/** An opaque reference to a page element, valid for this page session. */
interface Handle {
  readonly $h: number;
}

/** Where dom.insert puts a node, relative to the target element: before or after it (as a sibling), or as its first (prepend) or last (append) child. */
type Position = "before" | "after" | "prepend" | "append";

/**
 * An element to build with dom.create. tag is one of: div span p a b i u s em strong small mark sub sup
 * code pre kbd samp var q blockquote cite abbr time br hr wbr h1-h6 ul ol li dl dt dd table thead tbody
 * tfoot tr td th caption colgroup col section article aside header footer nav main figure figcaption
 * details summary address del ins dfn bdi bdo ruby rt rp label fieldset legend input button select
 * option optgroup textarea datalist output progress meter img, and inside an svg: path circle rect line
 * polyline polygon g text. Never form, iframe, script, style, link, meta, object, embed, video, audio.
 * attrs are checked like dom.setAttr (no on*, style, srcset ...; href only on a, src only on img, both
 * address-checked). Children of an svg are created as SVG.
 */
interface ElementSpec {
  tag: string;
  attrs?: { [name: string]: string };
  text?: string;
  children?: ElementSpec[];
}

/** An element's box in viewport pixels. */
interface Rect {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The event a dom.on listener receives (data only; no methods). */
interface DOMEventData {
  type: string;
  target: Handle | null;
  /** The key (keydown, keyup). Events of a password or other secret field (autocomplete one-time-code, cc-*, a field called a password, card number or code, a masked one), also inside a shadow root, or of an element that may hide a closed shadow root (a custom element, a div …, an editable one without the caret in it) are not delivered at all. */
  key?: string;
  /** The field's value (input, change). */
  value?: string;
}

/** The page the remixlet runs on. */
interface PageInfo {
  url: string;
  title: string;
}

/** The options of rmx.fetch. */
interface FetchOptions {
  /** GET (the default), HEAD, POST, PUT, PATCH or DELETE. */
  method?: string;
  /** Request headers; Cookie, Host, Origin, Referer, Sec-* and the browser's other forbidden names are refused (your cookies are added by the proxy). */
  headers?: Record<string, string>;
  /** A request body (not for GET or HEAD): at most 1 MB, and within the sandbox's 256 KB per call. */
  body?: string;
  /** How the body is returned: "text" (the default), "json" (parsed) or "bytes" (base64). */
  as?: "text" | "json" | "bytes";
}

/** What rmx.fetch resolves to: one of text, json and bytes, as options.as asked. */
interface FetchResult {
  status: number;
  statusText: string;
  ok: boolean;
  /** The address finally answered, after redirects. */
  url: string;
  redirected: boolean;
  /** Response headers by lowercase name, repeated ones joined with ", "; never Set-Cookie. */
  headers: Record<string, string>;
  text?: string;
  json?: unknown;
  /** The body in base64. */
  bytes?: string;
}

/** One response the page received from an observed host, as rmx.network.responses returns it. */
interface ObservedResponse {
  url: string;
  method: string;
  status: number;
  contentType: string;
  /** The body if it is text, at most 256 KB; otherwise "". */
  body: string;
  /** The body was longer, not text, or did not arrive whole. */
  truncated: boolean;
  /** When it arrived, in milliseconds since 1970 (pass it as since to get only newer ones). */
  at: number;
}

/** What rmx.keep keeps true while the site redraws itself. */
interface KeepSpec {
  /** Returns true (or a Promise of true) when all is as it should be. */
  check(): boolean | Promise<boolean>;
  /** Puts it right; called when check returns false. */
  repair(): void | Promise<void>;
}

/** Page content, through the page agent, under the page policy. */
declare namespace dom {
  /**
   * The first element matching a CSS selector, or null. Refused: CSS escapes and comments, the value
   * attribute, field-state pseudo-classes (:placeholder-shown, :valid, :invalid, :autofill, :state() …), and
   * comparing the value of an attribute other than id, class, href, src, type, name, role, aria-* (not
   * aria-value*), data-testid and a few more ([data-x] tests presence and is fine; read the value with dom.attr),
   * or any test of an attribute the page writes while a password is typed, and comparing the value of one it
   * wrote while a password was held, or set on an element it inserted then, while such an element is on the
   * page (a title or aria-label too; [title] still answers). data-* values ([data-state="open"])
   * may be compared until a password or other secret is typed on the page (or while one is filled in); after
   * that they are refused for the rest of the page, and a dom.waitFor waiting on one ends refused.
   * Example: `const h = await dom.query("h1")`
   */
  function query(selector: string, within?: Handle): Promise<Handle | null>;
  /** Every element matching a CSS selector. Example: `for (const el of await dom.queryAll(".ad")) await dom.hide(el)` */
  function queryAll(selector: string, within?: Handle): Promise<Handle[]>;
  /**
   * Waits until an element matches a CSS selector and resolves with the first one, at once when one matches
   * already (a page change the page itself makes is seen within a frame). The selector is checked as
   * dom.query's, each time it is tried. options.timeout is in milliseconds: 10000 by default, at most 60000;
   * when nothing matched by then it rejects with an Error saying so. A remixlet may have at most 32 waits
   * pending on a page. Waiting ends when the page goes or the remixlet is paused or stopped.
   * Example: `const feed = await dom.waitFor("#feed .post", { timeout: 5000 })`
   */
  function waitFor(selector: string, options?: { timeout?: number }): Promise<Handle>;
  /** The element's text content (without the text the page writes while a password is typed or held in its field, and for two seconds after it is emptied: a strength meter, a counter, a message). Example: `const t = await dom.text(h)` */
  function text(el: Handle): Promise<string>;
  /** An attribute's value, or null ("" for an attribute the page copies a typed password into, for any attribute but class the page writes while a password is typed or held in its field, or that an element the page inserted then, or one inside it, carries, and for a password field's attributes other than id, class, name, type and the like). Example: `const href = await dom.attr(link, "href")` */
  function attr(el: Handle, name: string): Promise<string | null>;
  /** A form control's current value (always "" for password fields and fields the page marks secret with autocomplete one-time-code or cc-*, and for a value the page set while a typed password was held: a length in a counter field, a choice it made in a select, a field it added then). Example: `const q = await dom.value(input)` */
  function value(el: Handle): Promise<string>;
  /** The element's box in viewport pixels (refused on a page whose password field is sized by its text, field-sizing: content, and on a page that writes into its elements while a password is typed). Example: `const { width } = await dom.rect(h)` */
  function rect(el: Handle): Promise<Rect>;
  /** A computed style property (password fields too; never their value; refused where dom.rect is). Example: `const c = await dom.style(h, "color")` */
  function style(el: Handle, property: string): Promise<string>;
  /** Several computed style properties at once. Example: `const { color, fontSize } = await dom.style(h, ["color", "fontSize"])` */
  function style(el: Handle, properties: string[]): Promise<{ [property: string]: string }>;
  /** Builds a detached element (marked as the remixlet's) from allow-listed tags; insert it with dom.insert. Example: `const b = await dom.create({ tag: "button", attrs: { class: "rx-hide" }, text: "Hide" })` */
  function create(spec: ElementSpec): Promise<Handle>;
  /** Replaces the element's text (not of elements that load or navigate, see setAttr; a form's is fine). Example: `await dom.setText(h, "Hello")` */
  function setText(el: Handle, text: string): Promise<void>;
  /**
   * Sets an attribute. Refused: on*, style, srcset, action, formaction, target and other attributes that load
   * or run something, and those that matter only to loading (content, rel, referrerpolicy, crossorigin,
   * sandbox, attributeName ...); id/name values that shadow document or window properties (cookie, location ...);
   * a password field's type, autocomplete, pattern, minlength, maxlength and value. On elements that load,
   * navigate or change how the page is fetched (meta, link, base, script, style, iframe, object, embed, form,
   * video, audio, source, track, picture, input type=image, svg a/image/use/animate/set/foreignObject ...)
   * only class, hidden, title (not on link or style), lang, dir and aria-* may be set. An address anywhere in
   * any attribute's value (data-src="https://…", "//host/…") follows the rule for src below. src (images only)
   * must resolve to the page's origin, one of the remixlet's own sites (its matches) within the page's site (on example.com
   * pages not its other site example-cdn.com), a fetch: permission's
   * host, or a data:image/png, gif, jpeg or webp URL — an image from another host needs a fetch: permission,
   * even when the page shows it; href (links only) may also be a link the page already has exactly. Never
   * javascript: or blob:; relative addresses resolve against the page's URL
   * (refused when a <base> element would send them elsewhere) and the element gets the absolute address.
   * Example: `await dom.setAttr(a, "href", "/cart")`
   */
  function setAttr(el: Handle, name: string, value: string): Promise<void>;
  /** Adds a class (marked as the remixlet's). Example: `await dom.addClass(row, "cheap")` */
  function addClass(el: Handle, name: string): Promise<void>;
  /** Removes a class. Example: `await dom.removeClass(row, "cheap")` */
  function removeClass(el: Handle, name: string): Promise<void>;
  /** Sets inline style properties (no url(), no field-sizing, no -webkit-text-security or all). Example: `await dom.setStyle(h, { color: "red", fontWeight: "bold" })` */
  function setStyle(el: Handle, styles: { [property: string]: string }): Promise<void>;
  /** Puts node (created, cloned or from the page) before or after target, or first or last inside it (default "append"). Elements that load or run something (script, iframe ...) cannot be moved, nothing goes inside elements that load or navigate (a form excepted), and a password field stays in its form. Example: `await dom.insert(h, b, "after")` */
  function insert(target: Handle, node: Handle, position?: Position): Promise<void>;
  /** Removes an element from the page. Example: `await dom.remove(banner)` */
  function remove(el: Handle): Promise<void>;
  /** A detached copy of an element, marked as the remixlet's: password fields blanked (value and value attribute), on* and other refused attributes and elements (script, iframe, style ...) stripped. Example: `const copy = await dom.clone(card, true)` */
  function clone(el: Handle, deep?: boolean): Promise<Handle>;
  /** Hides an element; it gets the attribute data-remixlet-hidden, so `.promoted:not([data-remixlet-hidden])` finds those still shown. Example: `await dom.hide(await dom.query(".promoted"))` */
  function hide(el: Handle): Promise<void>;
  /** Shows an element hidden with dom.hide. Example: `await dom.show(h)` */
  function show(el: Handle): Promise<void>;
  /** Calls listener on an event of the element. Example: `await dom.on(b, "click", () => dom.hide(panel))` */
  function on(el: Handle, type: string, listener: (event: DOMEventData) => void): Promise<void>;
  /** Clicks an element (el.click()) if what it would activate is allowed: a link must go to the page's origin (no other target, no ping); a label clicks its control; a submit button's form must be sent to the page's origin with GET or POST, without formaction or another target. Example: `await dom.click(await dom.query("button.more"))` */
  function click(el: Handle): Promise<void>;
  /** Focuses an HTML element. Example: `await dom.focus(await dom.query("input[name=q]"))` */
  function focus(el: Handle): Promise<void>;
  /** Scrolls the element into view. Example: `await dom.scrollIntoView(h)` */
  function scrollIntoView(el: Handle): Promise<void>;
  /** Adds CSS after the remixlet's style.css, as a stylesheet of its own (each call one, at most 256 per page), with the same checks as style.css: url() only to its own sites within the page's site, or fetch: hosts; no @import, @font-face, image-set() ...; no selector on the value attribute or on :placeholder-shown, :valid, :invalid, :autofill, :state() ..., none comparing the value of an attribute other than id, class, href, src, type, name, role, aria-* (not aria-value*), data-* and a few more; no field-sizing, -webkit-text-security or all; after a secret is typed on the page only its rules about the remixlet's own elements apply (see the top of this file); animations only on rules whose subject has a class, id or attribute selector (animation: none anywhere); it must end outside any comment, string or block. Refused whole if any part is refused. Example: `await dom.addStyle(".promoted { display: none }")` */
  function addStyle(css: string): Promise<void>;
  /** Replaces the element's content with HTML parsed inert in the page; only dom.create's elements and dom.setAttr's attributes are kept (no on*, style, script, iframe, svg use/animate/foreignObject, math; addresses checked as for setAttr); the rest is left out. It answers with a description of each part left out (also written to the log). Prefer dom.create. Example: `const leftOut = await dom.setHTML(h, "<b>Sale</b> ends <a href='/sale'>today</a>")` */
  function setHTML(el: Handle, html: string): Promise<string[]>;
}

/** Remixlet services, each checked against the remixlet's approved manifest. */
declare namespace rmx {
  /** The API version this runtime implements. Example: `if (rmx.version >= 1) rmx.log("ok")` */
  const version: number;
  /** Writes a line to the remixlet's log. Example: `rmx.log("hid", n, "posts")` */
  function log(...values: unknown[]): void;
  /** Keeps a condition true while the site redraws itself: check runs after page changes, repair when it fails. Example: `rmx.keep("no promoted", { check: async () => (await dom.query(".promoted")) === null, repair: async () => { for (const el of await dom.queryAll(".promoted")) await dom.remove(el) } })` */
  function keep(name: string, spec: KeepSpec): void;
  /** The page's current URL and title. Example: `const { url } = await rmx.page()` */
  function page(): Promise<PageInfo>;
  /** Sends a request from the proxy as you, with the cookies your browser would send, to a host a fetch:HOST permission names (http or https, standard port; redirects only to such hosts, Authorization dropped when one leaves the origin; 20 s; the proxy reads at most 5 MB of a response, and a result, like a request body, must fit in the sandbox's 256 KB per call). Example: `const r = await rmx.fetch("https://api.shop.test/cart", { as: "json" }); rmx.log(r.status, r.json.items.length)` */
  function fetch(url: string, options?: FetchOptions): Promise<FetchResult>;
  /** The responses this page itself receives from a host (needs network:observe:HOST); it loads nothing. */
  namespace network {
    /** What this page received from host, oldest first (the last 100 per page, text bodies up to 256 KB; when they do not all fit in one 256 KB answer, the newest that fit); path filters by prefix, since (an `at` value) keeps only later ones. Example: `for (const r of await rmx.network.responses({ host: "api.shop.test", path: "/v1/prices" })) rmx.log(r.url, r.status)` */
    function responses(query: { host: string; path?: string; since?: number }): Promise<ObservedResponse[]>;
    /** Calls callback with each response this page receives from host from now on (needs network:observe:HOST); path filters by prefix. Example: `await rmx.network.onResponse({ host: "api.shop.test", path: "/v1/prices" }, (r) => rmx.log(r.url, r.status))` */
    function onResponse(query: { host: string; path?: string }, callback: (response: ObservedResponse) => void): Promise<void>;
  }
  /** Per-remixlet storage (needs the storage permission), with a quota. */
  namespace storage {
    /** A stored value, or null. Example: `const n = (await rmx.storage.get("count")) ?? 0` */
    function get(key: string): Promise<unknown>;
    /** Stores a JSON value. Example: `await rmx.storage.set("count", n + 1)` */
    function set(key: string, value: unknown): Promise<void>;
    /** Deletes a key. Example: `await rmx.storage.remove("count")` */
    function remove(key: string): Promise<void>;
    /** Every stored key. Example: `const keys = await rmx.storage.keys()` */
    function keys(): Promise<string[]>;
    /** Calls callback when another page of this remixlet changes a key (value null when removed); not for this page's own changes. Example: `await rmx.storage.onChange(({ key, value }) => { if (key === "theme") apply(value) })` */
    function onChange(callback: (change: { key: string; value: unknown }) => void): Promise<void>;
  }
  /** Writing text to the clipboard (needs the clipboard permission; never reads it). */
  namespace clipboard {
    /** Copies text (at most 100 KB) to the clipboard; only right after the person clicked or pressed a key on the page (e.g. in a dom.on listener), else it rejects. On a page where no remixlet ran when it loaded (a remixlet just saved in the chat's tab), it rejects with "reload the page to let this remixlet write the clipboard" until the page is reloaded. The page's own scripts may see the text, as they see what dom writes: copy nothing the page must not know. Example: `await dom.on(b, "click", () => rmx.clipboard.write(code))` */
    function write(text: string): Promise<void>;
  }
  /** Shows a text notification (needs the notifications permission): a toast on the page, and a system notification if the site already has that permission; title at most 100 characters, body 500, at most 5 a minute; never HTML. The page's own scripts may see the text, as they see what dom writes: show nothing the page must not know. Example: `await rmx.notify("Price dropped", "Now 12.50")` */
  function notify(title: string, body?: string): Promise<void>;
  /** Commands of this remixlet on this page, listed in the remixproxy panel (the small button next to the launcher opens it) and chosen there by the person, never by the page (needs the menu permission; at most 10, labels up to 60 characters). */
  namespace menu {
    /** Adds (or replaces) a command; callback runs when the person chooses it. Example: `await rmx.menu.add("expand", "Expand all posts", () => expandAll())` */
    function add(id: string, label: string, callback: (event: MenuEvent) => void): Promise<void>;
    /** Removes a command. Example: `await rmx.menu.remove("expand")` */
    function remove(id: string): Promise<void>;
  }
  /** Actions the proxy runs later, with no remixlet code running (needs the schedule permission; at most 10 per remixlet, names up to 100 characters). */
  namespace schedule {
    /** Runs action every `minutes` minutes (at least 1), first after one interval; replaces a schedule of the same name. Example: `await rmx.schedule.every("check", { minutes: 60, action: { message: { kind: "check" } } })` */
    function every(name: string, spec: { minutes: number; action: ScheduleAction }): Promise<void>;
    /** Runs action once at time (an ISO 8601 date-time or milliseconds since 1970, within a year). Example: `await rmx.schedule.at("remind", { time: "2030-01-01T09:00:00Z", action: { notify: { title: "Sale starts" } } })` */
    function at(name: string, spec: { time: string | number; action: ScheduleAction }): Promise<void>;
    /** Cancels a schedule; cancelling a missing one is not an error. Example: `await rmx.schedule.cancel("check")` */
    function cancel(name: string): Promise<void>;
  }
  /** Receives the messages schedules queued for this remixlet ({message: ...} actions), each delivered once, on a later page load. Example: `await rmx.onMessage((m) => rmx.log("scheduled", m.data))` */
  function onMessage(callback: (message: ScheduledMessage) => void): Promise<void>;
}

/** What a menu command's callback receives. */
interface MenuEvent {
  type: "menu";
  id: string;
}

/** A queued message from a schedule, as rmx.onMessage receives it. */
interface ScheduledMessage {
  /** The schedule's name. */
  schedule: string;
  /** The JSON value of its {message} action. */
  data: unknown;
  /** When it was queued, in milliseconds since 1970. */
  at: number;
}

/**
 * The one thing a schedule does, exactly one of: a text notification (written to the remixlet's log
 * and shown on the open pages its matches cover, never on another site's), opening or focusing one of the remixlet's own pages (an address its matches
 * cover, in an open tab of that site), or a JSON message (at most 16 KB) queued for rmx.onMessage.
 */
type ScheduleAction =
  | { notify: { title: string; body?: string } }
  | { open: string }
  | { message: unknown };

/** Writes to the remixlet's log. Example: `console.log("ready")` */
declare const console: {
  log(...values: unknown[]): void;
  info(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
  debug(...values: unknown[]): void;
};

/** Runs fn once after ms milliseconds; a string instead of a function does nothing. Example: `setTimeout(() => dom.hide(h), 500)` */
declare function setTimeout(fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): number;
/** Runs fn every ms milliseconds (at least 4). Example: `const id = setInterval(tick, 1000)` */
declare function setInterval(fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): number;
/** Cancels a setTimeout. Example: `clearTimeout(id)` */
declare function clearTimeout(id: number): void;
/** Cancels a setInterval. Example: `clearInterval(id)` */
declare function clearInterval(id: number): void;
/** Runs fn after the current task, before the next. Example: `queueMicrotask(() => rmx.log("soon"))` */
declare function queueMicrotask(fn: () => void): void;

/** The page's address, read-only (present when the page is known). Example: `if (location.pathname === "/") …` */
declare const location: {
  readonly href: string;
  readonly origin: string;
  readonly protocol: string;
  readonly host: string;
  readonly hostname: string;
  readonly port: string;
  readonly pathname: string;
  readonly search: string;
  readonly hash: string;
};
/** A read-only stand-in for the page's window: only location. Example: `window.location.hostname` */
declare const window: { readonly location: typeof location };
