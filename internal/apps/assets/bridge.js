// The bridge every Sisyphus view shares: JSON-RPC 2.0 over postMessage to
// the host (the MCP Apps protocol). The view reaches nothing else: no
// fetch, no outside URL; the host relays tools/call to the server.
const bridge = (() => {
  let nextId = 1;
  const pending = new Map();
  const handlers = {};
  let hostContext = {};
  const post = (msg) => window.parent.postMessage(msg, '*');
  window.addEventListener('message', (ev) => {
    if (ev.source !== window.parent) return; // only the host speaks to a view
    const m = ev.data;
    if (!m || typeof m !== 'object' || m.jsonrpc !== '2.0') return;
    if (m.method === undefined && m.id !== undefined) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.error) p.reject(new Error(m.error.message || 'the host refused the request'));
      else p.resolve(m.result);
      return;
    }
    if (typeof m.method !== 'string') return;
    if (m.id !== undefined) {
      // Host requests: teardown and ping need nothing kept.
      if (m.method === 'ui/resource-teardown' || m.method === 'ping') post({ jsonrpc: '2.0', id: m.id, result: {} });
      else post({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'Method not found' } });
      return;
    }
    if (m.method === 'ui/notifications/host-context-changed') {
      hostContext = Object.assign({}, hostContext, m.params || {});
      applyTheme();
    }
    const h = handlers[m.method];
    if (h) h(m.params || {});
  });
  function request(method, params) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      post({ jsonrpc: '2.0', id, method, params });
    });
  }
  function notify(method, params) { post({ jsonrpc: '2.0', method, params: params || {} }); }
  function applyTheme() {
    if (hostContext.theme === 'dark' || hostContext.theme === 'light') document.documentElement.dataset.theme = hostContext.theme;
  }
  let lastSize = '';
  function reportSize() {
    const w = Math.ceil(document.documentElement.scrollWidth), h = Math.ceil(document.documentElement.scrollHeight);
    if (w + 'x' + h === lastSize) return;
    lastSize = w + 'x' + h;
    notify('ui/notifications/size-changed', { width: w, height: h });
  }
  async function connect(name) {
    const res = await request('ui/initialize', {
      protocolVersion: '2026-01-26',
      appInfo: { name, version: '1.0.0' },
      appCapabilities: { availableDisplayModes: ['inline'] },
    });
    hostContext = (res && res.hostContext) || {};
    applyTheme();
    notify('ui/notifications/initialized', {});
    if (typeof ResizeObserver === 'function') new ResizeObserver(reportSize).observe(document.body);
    reportSize();
    return res;
  }
  // payload is a tool result's object: structuredContent, or its JSON text.
  function payload(res) {
    if (!res) return null;
    if (res.structuredContent && typeof res.structuredContent === 'object') return res.structuredContent;
    const t = (res.content || []).find((c) => c.type === 'text');
    if (!t) return null;
    try { return JSON.parse(t.text); } catch (e) { return null; }
  }
  // failure turns an error result into an Error carrying its code.
  function failure(res) {
    const p = payload(res) || {};
    const e = p.error || {};
    const err = new Error(e.message || 'the call failed');
    err.code = e.code || 'error';
    err.result = p;
    return err;
  }
  async function call(tool, args) {
    const res = await request('tools/call', { name: tool, arguments: args });
    if (!res || res.isError) throw failure(res);
    return payload(res) || {};
  }
  // write runs a Strict Safe Write: the preflight (validateOnly) and then
  // the commit with the requestId and credential it handed out, copied
  // unchanged. With strict mode off there is no preflight: the call runs
  // once as it is.
  async function write(tool, args) {
    let pre;
    try {
      pre = await call(tool, Object.assign({}, args, { validateOnly: true }));
    } catch (e) {
      if (e.code === 'strict_mode_disabled') return call(tool, args);
      throw e;
    }
    const add = pre.nextCall && pre.nextCall.add;
    if (!add || !add.requestId) throw Object.assign(new Error('the preflight handed out no requestId'), { code: 'preflight_unavailable' });
    return call(tool, Object.assign({}, args, add));
  }
  return {
    connect, call, write, request, notify,
    on: (method, fn) => { handlers[method] = fn; },
    context: () => hostContext,
    resized: reportSize,
  };
})();

// esc makes text safe to put in HTML.
function esc(s) {
  return String(s == null ? '' : s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}
