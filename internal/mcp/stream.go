package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// serveGET serves the legacy standalone SSE stream of a session: it sends
// notifications/tools/list_changed at once, then again whenever the tools
// snapshot changes (checked every StreamPollInterval and on ToolsChanged),
// plus prompt/resource list changes and updates of subscribed resources.
// Closing the stream never cancels tool calls.
func (h *httpHandler) serveGET(w http.ResponseWriter, r *http.Request, principal string) {
	if modernHeader(r) {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, ID{}, errInvalidRequest("Method not allowed"))
		return
	}
	if accept := r.Header.Values("Accept"); len(accept) != 1 || strings.TrimSpace(accept[0]) != "text/event-stream" {
		writeError(w, http.StatusNotAcceptable, ID{}, errInvalidRequest("Not Acceptable: Accept must be text/event-stream"))
		return
	}
	sess, status, e := h.lookupSession(r, principal)
	if e != nil {
		writeError(w, status, ID{}, e)
		return
	}
	ctx, evict := context.WithCancel(r.Context())
	defer evict()
	sl := h.srv.streamSlots.take(h.streamCaps(), sess.client, sess, evict)
	if sl == nil {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusTooManyRequests, ID{}, errInvalidRequest("Too many open streams"))
		return
	}
	defer h.srv.streamSlots.release(sl)
	h.srv.getStreams.Add(1)
	defer h.srv.getStreams.Add(-1)
	sess.touch()

	st := newHTTPStream(w)
	sess.addStream(st)
	defer sess.removeStream(st)
	defer st.close() // no write may reach w once the handler returns
	sub := h.srv.hub.subscribe()
	defer h.srv.hub.unsubscribe(sub)
	st.openLongLived()

	notify := func(method string, params any) bool {
		msg, err := encodeNotification(method, params)
		return err == nil && st.send(msg) == nil
	}
	last := h.opts.ToolsSnapshot()
	if !notify("notifications/tools/list_changed", nil) {
		return
	}
	recheck := func() bool {
		snap := h.opts.ToolsSnapshot()
		if snap == last {
			return true
		}
		last = snap
		return notify("notifications/tools/list_changed", nil)
	}
	poll := time.NewTicker(h.opts.StreamPollInterval)
	defer poll.Stop()
	keepAlive := time.NewTicker(h.opts.KeepAliveInterval)
	defer keepAlive.Stop()
	maxAge := time.NewTimer(h.opts.StreamMaxDuration)
	defer maxAge.Stop()
	for {
		ok := true
		select {
		case <-ctx.Done(): // the client left, or a newcomer took the place
			return
		case <-sess.ctx.Done():
			return
		case <-h.srv.hub.done:
			return
		case <-maxAge.C:
			return
		case <-poll.C:
			if h.srv.sessions.get(sess.id) == nil {
				return // expired or deleted
			}
			ok = recheck()
		case ev := <-sub.ch:
			switch ev.kind {
			case evTools:
				ok = recheck()
			case evPrompts:
				if h.srv.hasPrompts() {
					ok = notify("notifications/prompts/list_changed", nil)
				}
			case evResources:
				if h.srv.hasResources() {
					ok = notify("notifications/resources/list_changed", nil)
				}
			case evResourceUpdated:
				if sess.subscribed(ev.uri) {
					ok = notify("notifications/resources/updated", map[string]any{"uri": ev.uri})
				}
			}
		case <-keepAlive.C:
			ok = st.comment() == nil
		}
		if !ok {
			return
		}
	}
}

// streamCaps are the caps of event streams under this handler's options
// (the places are the server's, shared by its handlers).
func (h *httpHandler) streamCaps() slotCaps {
	return slotCaps{perGroup: h.opts.MaxStreamsPerSession, perClient: h.opts.MaxStreamsPerClient, total: h.opts.MaxStreams, evictOwn: true}
}

// metaClientName is the clientInfo.name of a modern request's _meta.
func metaClientName(meta map[string]json.RawMessage) string {
	var info struct {
		Name string `json:"name"`
	}
	if raw, ok := meta[MetaClientInfo]; ok && json.Unmarshal(raw, &info) == nil {
		return info.Name
	}
	return ""
}

// listenFilter is the honoured part of a subscriptions/listen request.
type listenFilter struct {
	tools, prompts, resources bool
	uris                      map[string]bool
	ack                       map[string]any
}

// parseListen validates params.notifications and keeps the supported subset.
func (s *Server) parseListen(params map[string]json.RawMessage) (*listenFilter, *Error) {
	raw, ok := params["notifications"]
	if !ok || !isJSONObject(raw) {
		return nil, InvalidParamsError("subscriptions/listen: notifications must be an object")
	}
	var req struct {
		Tools     bool     `json:"toolsListChanged"`
		Prompts   bool     `json:"promptsListChanged"`
		Resources bool     `json:"resourcesListChanged"`
		URIs      []string `json:"resourceSubscriptions"`
	}
	if json.Unmarshal(raw, &req) != nil {
		return nil, InvalidParamsError("subscriptions/listen: malformed notifications filter")
	}
	f := &listenFilter{uris: map[string]bool{}, ack: map[string]any{}}
	if req.Tools {
		f.tools = true
		f.ack["toolsListChanged"] = true
	}
	if req.Prompts && s.hasPrompts() {
		f.prompts = true
		f.ack["promptsListChanged"] = true
	}
	if s.hasResources() {
		if req.Resources {
			f.resources = true
			f.ack["resourcesListChanged"] = true
		}
		if len(req.URIs) > 0 {
			for _, u := range req.URIs {
				f.uris[u] = true
			}
			f.ack["resourceSubscriptions"] = req.URIs
		}
	}
	return f, nil
}

// runListen serves one subscriptions/listen stream until ctx ends (client
// gone or cancelled: no final message) or the server closes (final result).
func (s *Server) runListen(ctx context.Context, id ID, f *listenFilter, send func([]byte) error, keepAlive func() error, every time.Duration) {
	s.listens.Add(1)
	defer s.listens.Add(-1)
	sub := s.hub.subscribe()
	defer s.hub.unsubscribe(sub)
	tag := map[string]any{MetaSubscriptionID: id}
	notify := func(method string, params map[string]any) bool {
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = tag
		msg, err := encodeNotification(method, params)
		return err == nil && send(msg) == nil
	}
	if !notify("notifications/subscriptions/acknowledged", map[string]any{"notifications": f.ack}) {
		return
	}
	var tick <-chan time.Time
	if keepAlive != nil && every > 0 {
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		ok := true
		select {
		case <-ctx.Done():
			select {
			case <-s.hub.done:
				s.endListen(id, send)
			default:
			}
			return
		case <-s.hub.done:
			s.endListen(id, send)
			return
		case ev := <-sub.ch:
			switch {
			case ev.kind == evTools && f.tools:
				ok = notify("notifications/tools/list_changed", nil)
			case ev.kind == evPrompts && f.prompts:
				ok = notify("notifications/prompts/list_changed", nil)
			case ev.kind == evResources && f.resources:
				ok = notify("notifications/resources/list_changed", nil)
			case ev.kind == evResourceUpdated && f.uris[ev.uri]:
				ok = notify("notifications/resources/updated", map[string]any{"uri": ev.uri})
			}
		case <-tick:
			ok = keepAlive() == nil
		}
		if !ok {
			return
		}
	}
}

// endListen sends the result that closes a subscription gracefully.
func (s *Server) endListen(id ID, send func([]byte) error) {
	res, err := json.Marshal(map[string]any{
		"resultType": "complete",
		"_meta":      map[string]any{MetaSubscriptionID: id, MetaServerInfo: s.serverInfo()},
	})
	if err == nil {
		_ = send(encodeResult(id, res))
	}
}
