package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync"
)

// ServeStdio serves newline-delimited JSON-RPC on in/out until in reaches
// EOF, ctx ends or the server closes. Both eras share the connection: a
// request whose params._meta names a protocol version (or server/discover)
// is served statelessly; initialize opens the connection's legacy session.
// notifications/cancelled stops the request with exactly that id. At EOF
// the requests already read are answered first. On return every running
// handler has finished (cancelled, unless it finished after EOF). A Read blocked
// on in when ctx ends is left behind (close in to release it).
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.baseCtx, cancel)
	defer stop()

	c := &stdioConn{srv: s, w: out, inflight: newInflightTable(), cancel: cancel}
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		readErr <- readLines(ctx, in, s.opts.MaxMessageBytes, lines, func() {
			c.write(encodeError(ID{}, errInvalidRequest("Invalid request: message too large")))
		})
	}()
	var err error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case line := <-lines:
			c.handle(ctx, line)
		case err = <-readErr:
			break loop
		}
	}
	if errors.Is(err, io.EOF) {
		// The client closed its end: the calls it already sent still get
		// their answers (stdout stays open) before the connection ends.
		finished := make(chan struct{})
		go func() { c.reqs.Wait(); close(finished) }()
		select {
		case <-finished:
		case <-ctx.Done():
		}
	}
	cancel()
	if sess := c.session(); sess != nil {
		sess.terminate()
	}
	c.inflight.cancelAll()
	c.wg.Wait()
	if errors.Is(err, io.EOF) {
		return nil
	}
	if err == nil {
		c.mu.Lock()
		err = c.writeErr
		c.mu.Unlock()
	}
	return err
}

// readLines splits in into lines; a line over max is dropped (tooLong is
// called) up to its newline.
func readLines(ctx context.Context, in io.Reader, max int, lines chan<- []byte, tooLong func()) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		var buf []byte
		over := false
		for {
			chunk, err := br.ReadSlice('\n')
			if !over {
				if len(buf)+len(chunk) > max+1 {
					over, buf = true, nil
				} else {
					buf = append(buf, chunk...)
				}
			}
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if len(bytes.TrimSpace(buf)) > 0 && !over {
					select {
					case lines <- buf:
					case <-ctx.Done():
					}
				}
				return err
			}
			break
		}
		if over {
			tooLong()
			continue
		}
		select {
		case lines <- buf:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type stdioConn struct {
	srv      *Server
	inflight *inflightTable
	cancel   context.CancelFunc
	wg       sync.WaitGroup // every goroutine of the connection
	reqs     sync.WaitGroup // the requests being answered

	mu       sync.Mutex // guards w, writeErr, sess
	w        io.Writer
	writeErr error
	sess     *session
}

// send implements sink: every message related to a request goes to stdout.
func (c *stdioConn) send(msg []byte) error { return c.write(msg) }

func (c *stdioConn) write(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.writeErr != nil {
		return c.writeErr
	}
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	if _, err := c.w.Write(buf); err != nil {
		c.writeErr = err
		c.cancel() // nobody can hear us any more
		return err
	}
	return nil
}

func (c *stdioConn) session() *session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sess
}

func (c *stdioConn) handle(ctx context.Context, line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	m, echo, derr := decodeMessage(line)
	if derr != nil {
		c.write(encodeError(echo, derr))
		return
	}
	switch m.kind {
	case kindResponse:
		if sess := c.session(); sess != nil {
			sess.deliver(m)
		}
	case kindNotification:
		switch m.method {
		case "notifications/cancelled":
			if id, ok := cancelledID(m.params); ok {
				c.inflight.cancel(id)
			}
		case "notifications/initialized":
			if sess := c.session(); sess != nil {
				sess.mu.Lock()
				sess.initialized = true
				sess.mu.Unlock()
			}
		}
	case kindRequest:
		c.request(ctx, m)
	}
}

func (c *stdioConn) request(ctx context.Context, m *message) {
	s := c.srv
	if m.method == "server/discover" || hasMetaProtocolVersion(m) {
		rm, perr := s.modernPreflight(m, nil)
		if perr != nil {
			c.write(encodeError(m.id, perr))
			return
		}
		c.spawn(ctx, m, func(ctx context.Context) []byte {
			if m.method == "subscriptions/listen" {
				params, _ := m.paramsObj()
				f, perr := s.parseListen(params)
				if perr != nil {
					return encodeError(m.id, perr)
				}
				s.runListen(ctx, m.id, f, c.write, nil, 0)
				return nil
			}
			rc := s.newReqCtx(EraModern, m, rm, "", nil, c)
			resp, _ := s.dispatch(ctx, rc, m)
			return resp
		})
		return
	}
	if m.method == "initialize" {
		res, sess, e := s.initialize(m, "", "", c.inflight)
		if e != nil {
			c.write(encodeError(m.id, e))
			return
		}
		c.mu.Lock()
		old := c.sess
		c.sess = sess
		c.mu.Unlock()
		if old != nil {
			old.terminate()
		}
		sess.mu.Lock()
		sess.notify = func(msg []byte) bool { return c.write(msg) == nil }
		sess.mu.Unlock()
		c.write(res)
		c.forwardEvents(sess)
		return
	}
	sess := c.session()
	if sess == nil {
		if m.method == "ping" {
			c.write(encodeResult(m.id, []byte("{}")))
			return
		}
		c.write(encodeError(m.id, errInvalidRequest("Invalid request: send initialize first (or params._meta for protocol "+ModernProtocolVersion+")")))
		return
	}
	c.spawn(ctx, m, func(ctx context.Context) []byte {
		rc := s.newReqCtx(EraLegacy, m, legacyMeta(m), "", sess, c)
		resp, _ := s.dispatch(ctx, rc, m)
		return resp
	})
}

// spawn runs fn for request m in its own goroutine, registered under m's
// typed id so that notifications/cancelled can stop it, and writes the
// final response fn returns (nil: none).
func (c *stdioConn) spawn(ctx context.Context, m *message, fn func(context.Context) []byte) {
	ctx, cancel := context.WithCancel(ctx)
	if !c.inflight.add(m.id, cancel) {
		cancel()
		c.write(encodeError(m.id, errInvalidRequest("Invalid request: id already in flight")))
		return
	}
	c.wg.Add(1)
	c.reqs.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.reqs.Done()
		defer cancel()
		defer c.inflight.remove(m.id)
		resp := c.run(ctx, m, fn)
		if resp != nil {
			c.write(resp)
		}
	}()
}

// run calls fn and returns its response, or, when fn panics, an internal
// error for the request (nothing when it was cancelled, which is answered
// by nothing): over stdio no caller above would recover the panic, and
// the process, every call of the connection with it, would end.
func (c *stdioConn) run(ctx context.Context, m *message, fn func(context.Context) []byte) (resp []byte) {
	defer func() {
		if p := recover(); p != nil {
			c.srv.logger.Error("mcp: panic serving a stdio request", "method", m.method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			resp = nil
			if ctx.Err() == nil {
				resp = encodeError(m.id, errInternal())
			}
		}
	}()
	return fn(ctx)
}

// forwardEvents sends list changes and resource updates to an initialized
// legacy stdio session until it ends.
func (c *stdioConn) forwardEvents(sess *session) {
	sub := c.srv.hub.subscribe()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer c.srv.hub.unsubscribe(sub)
		for {
			select {
			case <-sess.ctx.Done():
				return
			case ev := <-sub.ch:
				sess.mu.Lock()
				ready := sess.initialized
				sess.mu.Unlock()
				if !ready {
					continue
				}
				var msg []byte
				switch ev.kind {
				case evTools:
					msg, _ = encodeNotification("notifications/tools/list_changed", nil)
				case evPrompts:
					if c.srv.hasPrompts() {
						msg, _ = encodeNotification("notifications/prompts/list_changed", nil)
					}
				case evResources:
					if c.srv.hasResources() {
						msg, _ = encodeNotification("notifications/resources/list_changed", nil)
					}
				case evResourceUpdated:
					if sess.subscribed(ev.uri) {
						msg, _ = encodeNotification("notifications/resources/updated", map[string]any{"uri": ev.uri})
					}
				}
				if msg != nil {
					c.write(msg)
				}
			}
		}
	}()
}
