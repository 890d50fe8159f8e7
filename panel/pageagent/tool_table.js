// ---- Answers. ---------------------------------------------------------------------------

function utf8Length(s) {
  var n = 0;
  var i;
  for (i = 0; i < s.length; i++) {
    var c = apply(charCodeAt, s, [i]);
    n = n + (c < 128 ? 1 : c < 2048 ? 2 : 3);
  }
  return n;
}
function sendText(s) {
  var ws = sock;
  if (!ws || apply(wsReadyState, ws, []) !== 1) {
    return;
  }
  try {
    apply(wsSend, ws, [s]);
  } catch (e) { /* closing */ }
}
function answer(id, tool, ok, value, error) {
  reportSecrets(); // before the answer, so the proxy knows what to redact from it
  var m = message('toolResult');
  m.id = id;
  m.ok = ok;
  if (ok) {
    m.value = value;
  } else {
    m.error = cut('' + error, 2000);
  }
  var s;
  try {
    s = apply(jsonStringify, null, [m]);
    s = scrubSecrets(s, secrets(tool === 'read_page_data'));
    apply(jsonParse, null, [s]); // a secret cut across JSON syntax would break it
  } catch (e) {
    s = null;
  }
  if (s === null) {
    m = message('toolResult');
    m.id = id;
    m.ok = false;
    m.error = 'the result could not be sent safely';
    s = apply(jsonStringify, null, [m]);
  } else if (utf8Length(s) > MAX_ANSWER_BYTES) {
    m = message('toolResult');
    m.id = id;
    m.ok = false;
    m.error = 'the result is too large (' + utf8Length(s) + ' bytes); ask for less (a smaller budget, limit or maxChars, or a ref)';
    s = apply(jsonStringify, null, [m]);
  }
  sendText(s);
}

// TOOLS is the tools table: name -> function (args, done) that returns the answer's value, or
// PENDING and calls done later. Its names are checked against the proxy's pageToolNames and the
// agent's tool definitions (proxy/pagetools_names_test.go).
var TOOLS = dict();
TOOLS.capture_page = toolCapture;
TOOLS.outline = toolOutline;
TOOLS.query = toolQuery;
TOOLS.inspect_styles = toolStyles;
TOOLS.read_page_data = toolPageData;
TOOLS.click = watchedLeave(toolClick); // tool_act.js: a handler's new page
TOOLS.fetch_page = toolFetch;
TOOLS.outline_html = toolOutlineHTML;
TOOLS.type = toolType;
TOOLS.set_field = watchedLeave(toolSetField);
TOOLS.select = watchedLeave(toolSelect);
TOOLS.press_keys = watchedLeave(toolPressKeys);
TOOLS.scroll = toolScroll;
TOOLS.hover = toolHover;
TOOLS.navigate = toolNavigate;
TOOLS.back = toolBack;
TOOLS.forward = toolForward;
TOOLS.wait_for = toolWaitFor;
TOOLS.wait_for_stable = toolWaitStable;
TOOLS.find = toolFind;
TOOLS.page_state = toolPageState;
TOOLS.report_secrets = function () { return null; }; // the proxy's: a report comes with every answer

// runTool runs one {type:'tool'} call and answers it.
function runTool(req) {
  if (!toolsReady()) { // the tools' captures, from a fresh realm at the first call (tool_capture.js)
    answer(own(req, 'id'), own(req, 'tool'), false, null, 'the page tools cannot start on this page (the page gives the page agent no frame of its own to take them from); ask the person to reload the page, and answer from what the chat already shows until then');
    return;
  }
  framesMoved(); // frames are found and measured again for each call
  reportSecrets(); // the values as the tool starts (proxy/redact_sources.go)
  var id = own(req, 'id');
  var tool = own(req, 'tool');
  var args = own(req, 'args');
  var fn = typeof tool === 'string' ? own(TOOLS, tool) : undefined;
  if (typeof fn !== 'function') {
    answer(id, tool, false, null, 'this page agent has no tool ' + cut('' + tool, 60));
    return;
  }
  if (args === undefined || args === null) {
    args = dict();
  }
  if (typeof args !== 'object' || isArray(args)) {
    answer(id, tool, false, null, tool + ': the arguments must be a JSON object');
    return;
  }
  var settled = false;
  var done = function (ok, v) {
    if (settled) {
      return;
    }
    settled = true;
    answer(id, tool, ok, ok ? v : null, ok ? '' : v);
  };
  try {
    var v = fn(args, done);
    if (v !== PENDING) {
      done(true, v === undefined ? null : v);
    }
  } catch (e) {
    done(false, e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : tool + ' failed in the page');
  }
}
