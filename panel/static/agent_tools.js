  // ---- Page tools of the AI agent (included into agent.js by panel.go). -----------------------
  //
  // The proxy sends {type:'tool', id, tool, args} when the agent of a chat on this tab calls one
  // of its page tools; the answer is {type:'toolResult', id, ok, value | error}. The arguments
  // are data filled in by the model: nothing here evaluates them as code.

  function runTool(req) {
    var m = message('toolResult');
    m.id = own(req, 'id');
    m.ok = false;
    m.error = 'this page agent has no tool ' + own(req, 'tool');
    send(m);
  }
