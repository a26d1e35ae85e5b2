package embedded

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/endpoint"
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// maxJSONBody caps JSON request bodies; SiYuan has no cap, but an embedded
// test kernel should not be the thing that runs a machine out of memory.
const maxJSONBody = 64 << 20

// apiError is a handler failure with the envelope code SiYuan uses for it.
type apiError struct {
	code int
	msg  string
	data any
}

func (e *apiError) Error() string { return e.msg }

func errf(format string, a ...any) error {
	return &apiError{code: -1, msg: fmt.Sprintf(format, a...)}
}

func errCode(code int, format string, a ...any) error {
	return &apiError{code: code, msg: fmt.Sprintf(format, a...)}
}

// handlerFunc answers one JSON API call with the request's arguments.
type handlerFunc func(ctx context.Context, a args) (any, error)

type route struct {
	method string // "" means POST
	json   handlerFunc
	raw    http.HandlerFunc // multipart and streaming endpoints
	// write: serialised with every other write, as SiYuan does. Set from
	// the endpoint's class in the one endpoint table (allRoutes), never
	// here.
	write  bool
	public bool // no authentication, as SiYuan's bootProgress/version/currentTime
	// emptyOK: an empty body is accepted as {} (lsNotebooks, flushTransaction...).
	emptyOK bool
	// anyBody: a malformed body is ignored (lsNotebooks never parses its body).
	anyBody bool
	// argErrTwice: an unparsable body is answered with its error envelope
	// written twice in one reply, as SiYuan's readDir and removeFile do (they
	// reply in the parse check and again in their deferred reply).
	argErrTwice bool
}

func (k *Kernel) routes() map[string]route {
	return map[string]route{
		// system
		endpoint.Version:      {method: "GET+POST", json: k.version, public: true, emptyOK: true},
		endpoint.BootProgress: {method: "GET+POST", json: k.bootProgress, public: true, emptyOK: true},
		endpoint.CurrentTime:  {json: k.currentTime, public: true, emptyOK: true},
		// notification
		endpoint.PushMsg:    {json: k.pushMsg},
		endpoint.PushErrMsg: {json: k.pushErrMsg},
		// notebook
		endpoint.LsNotebooks:     {json: k.lsNotebooks, emptyOK: true, anyBody: true},
		endpoint.CreateNotebook:  {json: k.createNotebook},
		endpoint.OpenNotebook:    {json: k.openNotebook},
		endpoint.CloseNotebook:   {json: k.closeNotebook},
		endpoint.RenameNotebook:  {json: k.renameNotebook},
		endpoint.RemoveNotebook:  {json: k.removeNotebook},
		endpoint.GetNotebookConf: {json: k.getNotebookConf},
		endpoint.SetNotebookConf: {json: k.setNotebookConf},
		endpoint.SetNotebookIcon: {json: k.setNotebookIcon},
		// filetree
		endpoint.CreateDocWithMd: {json: k.createDocWithMd},
		endpoint.RenameDocByID:   {json: k.renameDocByID},
		endpoint.RemoveDocByID:   {json: k.removeDocByID},
		endpoint.MoveDocsByID:    {json: k.moveDocsByID},
		endpoint.GetHPathByID:    {json: k.getHPathByID},
		endpoint.GetPathByID:     {json: k.getPathByID},
		endpoint.GetIDsByHPath:   {json: k.getIDsByHPath},
		endpoint.ListDocsByPath:  {json: k.listDocsByPath},
		endpoint.ChangeSort:      {json: k.changeSort},
		// block
		endpoint.InsertBlock:       {json: k.insertBlock},
		endpoint.PrependBlock:      {json: k.prependBlock},
		endpoint.AppendBlock:       {json: k.appendBlock},
		endpoint.UpdateBlock:       {json: k.updateBlock},
		endpoint.BatchUpdateBlock:  {json: k.batchUpdateBlock},
		endpoint.BatchAppendBlock:  {json: k.batchAppendBlock},
		endpoint.BatchPrependBlock: {json: k.batchPrependBlock},
		endpoint.BatchInsertBlock:  {json: k.batchInsertBlock},
		endpoint.DeleteBlock:       {json: k.deleteBlock},
		endpoint.MoveBlock:         {json: k.moveBlock},
		endpoint.FoldBlock:         {json: k.foldBlock},
		endpoint.UnfoldBlock:       {json: k.unfoldBlock},
		endpoint.GetBlockKramdown:  {json: k.getBlockKramdown},
		endpoint.GetBlockKramdowns: {json: k.getBlockKramdowns},
		endpoint.GetBlocksIndexes:  {json: k.getBlocksIndexes},
		endpoint.GetChildBlocks:    {json: k.getChildBlocks},
		endpoint.GetBlockDOM:       {json: k.getBlockDOM},
		endpoint.GetBlockDOMs:      {json: k.getBlockDOMs},
		endpoint.GetBlockInfo:      {json: k.getBlockInfo},
		endpoint.GetDocInfo:        {json: k.getDocInfo},
		endpoint.CheckBlockExist:   {json: k.checkBlockExist},
		// attr
		endpoint.SetBlockAttrs:      {json: k.setBlockAttrs},
		endpoint.GetBlockAttrs:      {json: k.getBlockAttrs},
		endpoint.BatchGetBlockAttrs: {json: k.batchGetBlockAttrs},
		// sql and search
		endpoint.QuerySQL:            {json: k.querySQL},
		endpoint.FlushTransaction:    {json: k.flushTransaction, emptyOK: true},
		endpoint.FullTextSearchBlock: {json: k.fullTextSearchBlock},
		// assets and files
		endpoint.UploadAsset:        {raw: k.uploadAsset},
		endpoint.RenameAsset:        {json: k.renameAsset},
		endpoint.RemoveUnusedAsset:  {json: k.removeUnusedAsset},
		endpoint.RemoveUnusedAssets: {json: k.removeUnusedAssets, emptyOK: true, anyBody: true},
		endpoint.GetUnusedAssets:    {json: k.getUnusedAssets, emptyOK: true, anyBody: true},
		endpoint.GetDocAssets:       {json: k.getDocAssets},
		endpoint.GetDocImageAssets:  {json: k.getDocImageAssets},
		endpoint.GetImageOCRText:    {json: k.getImageOCRText},
		endpoint.SearchAsset:        {json: k.searchAsset},
		// templates
		endpoint.SearchTemplate:    {json: k.searchTemplate},
		endpoint.RemoveTemplate:    {json: k.removeTemplate},
		endpoint.RenderTemplate:    {json: k.renderTemplate},
		endpoint.RenderSprig:       {json: k.renderSprig},
		endpoint.DocSaveAsTemplate: {json: k.docSaveAsTemplate},
		endpoint.GetFile:           {raw: k.getFile},
		endpoint.PutFile:           {raw: k.putFile},
		endpoint.RemoveFile:        {json: k.removeFile, argErrTwice: true},
		endpoint.ReadDir:           {json: k.readDir, argErrTwice: true},
		// export
		endpoint.ExportResources: {json: k.exportResources},
		endpoint.ExportMdContent: {json: k.exportMdContent},
		// transactions
		endpoint.Transactions: {json: k.transactions},
	}
}

// allRoutes is every route the kernel serves, each classed by the endpoint
// table: a write is serialised with every other write. A route missing
// from the table is a programming error (the client would not know how to
// call it), so it panics; TestRoutesAreTheEndpointTable checks the two
// lists are the same.
func (k *Kernel) allRoutes() map[string]route {
	routes := k.routes()
	maps.Copy(routes, k.avRoutes())
	maps.Copy(routes, k.uiRoutes())
	maps.Copy(routes, k.dailyRoutes())
	maps.Copy(routes, k.systemRoutes())
	maps.Copy(routes, k.tagRoutes())
	maps.Copy(routes, k.riffRoutes())
	maps.Copy(routes, k.searchRoutes())
	maps.Copy(routes, k.refRoutes())
	maps.Copy(routes, k.mcpRoutes())
	maps.Copy(routes, k.blockDocRoutes())
	maps.Copy(routes, k.docTreeRoutes())
	maps.Copy(routes, k.statAssetRoutes())
	maps.Copy(routes, k.repoRoutes())
	for path, rt := range routes {
		c, ok := endpoint.ClassOf(path)
		if !ok {
			panic("embedded: route " + path + " is not in the endpoint table (internal/siyuan/endpoint)")
		}
		rt.write = c == endpoint.Write
		routes[path] = rt
	}
	return routes
}

// Handler returns the kernel's HTTP API.
func (k *Kernel) Handler() http.Handler {
	routes := k.allRoutes()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rt, ok := routes[r.URL.Path]
		if !ok || !methodAllowed(rt.method, r.Method) {
			http.Error(w, "404 page not found", http.StatusNotFound)
			return
		}
		if !rt.public && !k.authorize(w, r) {
			return
		}
		k.serveFaulty(w, r, rt)
	})
}

func methodAllowed(allowed, m string) bool {
	switch allowed {
	case "":
		return m == http.MethodPost
	case "GET+POST":
		return m == http.MethodPost || m == http.MethodGet
	case "POST+GET+DELETE":
		return m == http.MethodPost || m == http.MethodGet || m == http.MethodDelete
	}
	return m == allowed
}

// authorize applies SiYuan's token rules: an Authorization header with a
// Token/Bearer prefix or a ?token= query must equal the API token; a request
// with no credential is refused when a token is configured (as SiYuan does
// once an access code is set).
func (k *Kernel) authorize(w http.ResponseWriter, r *http.Request) bool {
	if k.token == "" {
		return true
	}
	if h := r.Header.Get("Authorization"); h != "" {
		for _, p := range []string{"Token ", "token ", "Bearer ", "bearer "} {
			if v, ok := strings.CutPrefix(h, p); ok {
				if subtle.ConstantTimeCompare([]byte(strings.TrimSpace(v)), []byte(k.token)) == 1 {
					return true
				}
				writeAuthFailure(w, "Auth failed [header: Authorization]")
				return false
			}
		}
	}
	if q := r.URL.Query().Get("token"); q != "" {
		if subtle.ConstantTimeCompare([]byte(q), []byte(k.token)) == 1 {
			return true
		}
		writeAuthFailure(w, "Auth failed [query: token]")
		return false
	}
	// SiYuan lets a request of this machine read its network settings and
	// workspace without a credential (the desktop app and launchers find
	// a kernel's workspace that way).
	if loopbackPeer(r.RemoteAddr) && (strings.HasPrefix(r.RequestURI, endpoint.GetNetwork) || strings.HasPrefix(r.RequestURI, endpoint.GetWorkspaceInfo)) {
		return true
	}
	writeAuthFailure(w, "Auth failed [session]")
	return false
}

// loopbackPeer is whether a request's remote address is of this machine.
func loopbackPeer(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveFaulty injects the configured faults around a route.
func (k *Kernel) serveFaulty(w http.ResponseWriter, r *http.Request, rt route) {
	var drop bool
	for _, f := range k.faults.lookup(r.URL.Path) {
		switch f.Kind {
		case Latency:
			t := time.NewTimer(f.Delay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		case FailBeforeApply:
			io.Copy(io.Discard, io.LimitReader(r.Body, maxJSONBody))
			writeEnvelope(w, http.StatusInternalServerError, wire.Result{Code: -1, Msg: "injected fault: fail-before-apply"})
			return
		case DropAfterApply:
			drop = true
		}
	}
	if !drop {
		k.serve(w, r, rt)
		return
	}
	// Apply the request for real, then cut the connection without a reply.
	rec := httptest.NewRecorder()
	k.serve(rec, r.WithContext(context.WithoutCancel(r.Context())), rt)
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// serve runs a route: decodes arguments, serialises writes, recovers panics.
func (k *Kernel) serve(w http.ResponseWriter, r *http.Request, rt route) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			k.log.Error("handler panic", "path", r.URL.Path, "panic", v)
			writeEnvelope(w, http.StatusOK, wire.Result{Code: -1, Msg: fmt.Sprintf("internal error: %v", v)})
		}
	}()
	if rt.write {
		k.writeMu.Lock()
		defer k.writeMu.Unlock()
		// Every write first drains the queue, as SiYuan's FlushTxQueue does.
		k.applyPendingLocked()
	}
	if rt.raw != nil {
		rt.raw(w, r)
		return
	}
	a, err := readArgs(r, rt.emptyOK)
	if err != nil && rt.anyBody {
		a, err = args{}, nil
	}
	if err != nil {
		e := wire.Result{Code: -1, Msg: err.Error()}
		if rt.argErrTwice {
			writeEnvelopes(w, http.StatusOK, e, e)
			return
		}
		writeEnvelope(w, http.StatusOK, e)
		return
	}
	data, err := rt.json(r.Context(), a)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			writeEnvelope(w, http.StatusOK, wire.Result{Code: ae.code, Msg: ae.msg, Data: ae.data})
			return
		}
		writeEnvelope(w, http.StatusOK, wire.Result{Code: -1, Msg: err.Error()})
		return
	}
	writeEnvelope(w, http.StatusOK, wire.Result{Code: 0, Msg: "", Data: data})
}

func readArgs(r *http.Request, emptyOK bool) (args, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil {
		//lint:ignore ST1005 SiYuan's own error text, which clients match; the embedded kernel answers it word for word
		return nil, fmt.Errorf("Parses request [%s] failed: %w", r.URL.Path, err)
	}
	if len(body) > maxJSONBody {
		//lint:ignore ST1005 SiYuan's own error text, which clients match; the embedded kernel answers it word for word
		return nil, fmt.Errorf("Parses request [%s] failed: body larger than %d bytes", r.URL.Path, maxJSONBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK || r.Method == http.MethodGet {
			return args{}, nil
		}
		//lint:ignore ST1005 SiYuan's own error text, which clients match; the embedded kernel answers it word for word
		return nil, fmt.Errorf("Parses request [%s] failed: the request body is empty or truncated (EOF)", r.URL.Path)
	}
	// Decoded into a plain map, as SiYuan's JsonArg does, so that a body of
	// the wrong JSON type gets SiYuan's error text, and a null body is an
	// empty argument map (each argument then reports itself missing).
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		//lint:ignore ST1005 SiYuan's own error text, which clients match; the embedded kernel answers it word for word
		return nil, fmt.Errorf("Parses request [%s] failed: %w", r.URL.Path, err)
	}
	if m == nil {
		return args{}, nil
	}
	return args(m), nil
}

// writeAuthFailure answers 401 with SiYuan's auth envelope, which has no data field.
func writeAuthFailure(w http.ResponseWriter, msg string) {
	data, _ := json.Marshal(struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	}{-1, msg})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	w.Write(data)
}

func writeEnvelope(w http.ResponseWriter, status int, e wire.Result) {
	writeEnvelopes(w, status, e)
}

// writeEnvelopes writes the envelopes back to back in one reply: one is the
// normal case, more reproduce SiYuan handlers that reply more than once.
func writeEnvelopes(w http.ResponseWriter, status int, es ...wire.Result) {
	var out []byte
	for _, e := range es {
		data, err := json.Marshal(e)
		if err != nil {
			data, _ = json.Marshal(wire.Result{Code: -1, Msg: "encode response: " + err.Error()})
		}
		out = append(out, data...)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(out)
}

// args are the decoded JSON arguments of a request, with typed accessors
// that answer code -1 where SiYuan's unchecked type assertions would panic.
type args map[string]any

func (a args) str(key string) (string, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return "", errf("missing argument [%s]", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", errf("argument [%s] must be a string", key)
	}
	return s, nil
}

// field is SiYuan's BindJsonArg for a required string, with its messages:
// absent or null is "Field [key] is required", another JSON type "Field [key]
// should be of type [String]". With rejectEmpty the value is trimmed of
// white space and must not be empty then ("Field [key] must not be empty");
// without it the value is returned exactly as sent.
func (a args) field(key string, rejectEmpty bool) (string, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return "", errf("Field [%s] is required", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", errf("Field [%s] should be of type [String]", key)
	}
	if rejectEmpty {
		if s = strings.TrimSpace(s); s == "" {
			return "", errf("Field [%s] must not be empty", key)
		}
	}
	return s, nil
}

func (a args) optStr(key string) (string, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", errf("argument [%s] must be a string", key)
	}
	return s, nil
}

func (a args) id(key string) (string, error) {
	s, err := a.str(key)
	if err != nil {
		return "", err
	}
	if !validID(s) {
		return "", errf("invalid ID argument")
	}
	return s, nil
}

func (a args) optID(key string) (string, error) {
	s, err := a.optStr(key)
	if err != nil || s == "" {
		return s, err
	}
	if !validID(s) {
		return "", errf("invalid ID argument")
	}
	return s, nil
}

func (a args) strList(key string) ([]string, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return nil, errf("missing argument [%s]", key)
	}
	l, ok := v.([]any)
	if !ok {
		return nil, errf("argument [%s] must be an array of strings", key)
	}
	ret := make([]string, 0, len(l))
	for _, x := range l {
		s, ok := x.(string)
		if !ok {
			return nil, errf("argument [%s] must be an array of strings", key)
		}
		ret = append(ret, s)
	}
	return ret, nil
}

func (a args) optBool(key string) (bool, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, errf("argument [%s] must be a boolean", key)
	}
	return b, nil
}

// optInt returns def when the key is absent.
func (a args) optInt(key string, def int) (int, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return def, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, errf("argument [%s] must be a number", key)
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, errf("argument [%s] must be an integer", key)
	}
	return int(f), nil
}

// paging reads page and pageSize as SiYuan's search endpoints do: a page
// below 1 is the first, a size below 1 (or none) is 32.
func (a args) paging() (page, size int, err error) {
	if page, err = a.optInt("page", 1); err != nil {
		return 0, 0, err
	}
	if size, err = a.optInt("pageSize", 32); err != nil {
		return 0, 0, err
	}
	if page < 1 {
		page = 1
	}
	if size < 1 {
		size = 32
	}
	return page, size, nil
}

func (a args) obj(key string) (map[string]any, error) {
	v, ok := a[key]
	if !ok || v == nil {
		return nil, errf("missing argument [%s]", key)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errf("argument [%s] must be an object", key)
	}
	return m, nil
}
