// ---- fetch_page. ------------------------------------------------------------------------

function toolFetch(args, done) {
  checkArgs(args, 'fetch_page', allowed(['url', 'budget']));
  var raw = strArg(args, 'url', true, 4096);
  var budget = intArg(args, 'budget', 6000, 200, 100000);
  var origin = pageOriginOrEmpty();
  var u = parseURLOrNull(raw, href());
  if (!u) {
    refuse('"' + cut(raw, 200) + '" is not a valid address');
  }
  var p = urlPart(u, urlProtocolG);
  if ((p !== 'http:' && p !== 'https:') || urlPart(u, urlOriginG) !== origin) {
    refuse('open_page only opens pages of this site (' + origin + '); ' + cut(urlPart(u, urlHrefG), 200) + ' is not one');
  }
  if (typeof fetchFn !== 'function' || !respText || !promiseThen || !respStatusG || !respTypeG) {
    refuse('this browser cannot fetch for the agent');
  }
  if (thenable(respProto)) {
    // Resolving fetch's promise would hand the Response to the page's then.
    refuse('this page has made every object look like a promise (a "then" property on Object.prototype or Response.prototype); open_page does not run here');
  }
  var url = urlPart(u, urlHrefG);
  var init = dict();
  init.method = 'GET';
  init.credentials = 'same-origin';
  init.redirect = 'manual';
  init.cache = 'no-store';
  var fail = function (why) {
    done(false, why);
  };
  var promise = apply(fetchFn, win, [url, init]);
  apply(promiseThen, promise, [function (resp) {
    var type = '';
    var status = 0;
    var ctype = '';
    try {
      type = '' + apply(respTypeG, resp, []);
      status = apply(respStatusG, resp, []);
      var hs = apply(respHeadersG, resp, []);
      var ct = apply(headersGet, hs, ['content-type']);
      ctype = typeof ct === 'string' ? lower(ct) : '';
    } catch (e) {
      fail('the answer could not be read');
      return;
    }
    if (type === 'opaqueredirect') {
      fail('the site redirects ' + cut(url, 200) + ' elsewhere; open_page does not follow redirects (open the final address instead)');
      return;
    }
    if (status < 200 || status > 299) {
      fail('the site answered ' + status + ' for ' + cut(url, 200));
      return;
    }
    apply(promiseThen, apply(respText, resp, []), [function (body) {
      try {
        done(true, pageSummary(url, status, ctype, '' + body, budget));
      } catch (e) {
        fail(e !== null && typeof e === 'object' && own(e, 'mark') === REFUSAL ? e.why : 'the page could not be read');
      }
    }, function () {
      fail('reading the page failed');
    }]);
  }, function () {
    fail('fetching ' + cut(url, 200) + ' failed (network error)');
  }]);
  return PENDING;
}

// outline_html outlines a page of another origin of this site that the proxy fetched itself
// (open_page, proxy/chat/open.go): the same inert parse and summary as fetch_page, without
// fetching anything here. Only the proxy sends it; the model cannot name this tool.
function toolOutlineHTML(args) {
  checkArgs(args, 'outline_html', allowed(['url', 'status', 'contentType', 'html', 'budget']));
  var url = strArg(args, 'url', true, 4096);
  var status = intArg(args, 'status', 200, 100, 599);
  var ctype = own(args, 'contentType');
  var html = own(args, 'html');
  var budget = intArg(args, 'budget', 6000, 200, 100000);
  if (typeof html !== 'string') {
    refuse('outline_html needs the page as text');
  }
  return pageSummary(url, status, typeof ctype === 'string' ? lower(ctype) : 'text/html', html, budget);
}

// thenable reports whether objects with prototype p would be taken for promises: a "then"
// anywhere on the chain.
function thenable(p) {
  var k;
  for (k = 0; p && k < 16; k++) {
    if (getOwnPropertyDescriptor(p, 'then')) {
      return true;
    }
    p = getPrototypeOf(p);
  }
  return false;
}

function pageSummary(url, status, ctype, body, budget) {
  var r = dict();
  r.url = url;
  r.status = status;
  if (!contains(ctype, 'html')) {
    r.contentType = ctype;
    r.truncated = body.length > 8000;
    r.text = cut(body, 8000);
    return r;
  }
  if (typeof DOMParserCtor !== 'function' || !parseFromString) {
    refuse('this browser cannot parse pages for the agent');
  }
  var parsed;
  try {
    parsed = apply(parseFromString, new DOMParserCtor(), [cut(body, 4000000), 'text/html']);
  } catch (e) {
    refuse('the page could not be parsed here (the page may enforce Trusted Types)');
  }
  r.title = '';
  try {
    r.title = collapse('' + apply(documentTitle, parsed, []), 300);
  } catch (e) { /* no title */ }
  var o = newOutline('all', budget, false, url);
  var root = bodyOf ? apply(bodyOf, parsed, []) : null;
  if (root) {
    walkChildren(o, root, 0);
    flushText(o);
  }
  var res = finishOutline(o);
  r.outline = res.outline;
  r.truncated = res.truncated;
  return r;
}
