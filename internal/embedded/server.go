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
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

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
	write  bool             // serialised with every other write, as SiYuan does
	public bool             // no authentication, as SiYuan's bootProgress/version/currentTime
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
		"/api/system/version":      {method: "GET+POST", json: k.version, public: true, emptyOK: true},
		"/api/system/bootProgress": {method: "GET+POST", json: k.bootProgress, public: true, emptyOK: true},
		"/api/system/currentTime":  {json: k.currentTime, public: true, emptyOK: true},
		// notification
		"/api/notification/pushMsg":    {json: k.pushMsg},
		"/api/notification/pushErrMsg": {json: k.pushErrMsg},
		// notebook
		"/api/notebook/lsNotebooks":     {json: k.lsNotebooks, emptyOK: true, anyBody: true},
		"/api/notebook/createNotebook":  {json: k.createNotebook, write: true},
		"/api/notebook/openNotebook":    {json: k.openNotebook, write: true},
		"/api/notebook/closeNotebook":   {json: k.closeNotebook, write: true},
		"/api/notebook/renameNotebook":  {json: k.renameNotebook, write: true},
		"/api/notebook/removeNotebook":  {json: k.removeNotebook, write: true},
		"/api/notebook/getNotebookConf": {json: k.getNotebookConf},
		"/api/notebook/setNotebookConf": {json: k.setNotebookConf, write: true},
		"/api/notebook/setNotebookIcon": {json: k.setNotebookIcon, write: true},
		// filetree
		"/api/filetree/createDocWithMd": {json: k.createDocWithMd, write: true},
		"/api/filetree/renameDocByID":   {json: k.renameDocByID, write: true},
		"/api/filetree/removeDocByID":   {json: k.removeDocByID, write: true},
		"/api/filetree/moveDocsByID":    {json: k.moveDocsByID, write: true},
		"/api/filetree/getHPathByID":    {json: k.getHPathByID},
		"/api/filetree/getPathByID":     {json: k.getPathByID},
		"/api/filetree/getIDsByHPath":   {json: k.getIDsByHPath},
		"/api/filetree/listDocsByPath":  {json: k.listDocsByPath},
		"/api/filetree/changeSort":      {json: k.changeSort, write: true},
		// block
		"/api/block/insertBlock":       {json: k.insertBlock, write: true},
		"/api/block/prependBlock":      {json: k.prependBlock, write: true},
		"/api/block/appendBlock":       {json: k.appendBlock, write: true},
		"/api/block/updateBlock":       {json: k.updateBlock, write: true},
		"/api/block/batchUpdateBlock":  {json: k.batchUpdateBlock, write: true},
		"/api/block/batchAppendBlock":  {json: k.batchAppendBlock, write: true},
		"/api/block/batchPrependBlock": {json: k.batchPrependBlock, write: true},
		"/api/block/batchInsertBlock":  {json: k.batchInsertBlock, write: true},
		"/api/block/deleteBlock":       {json: k.deleteBlock, write: true},
		"/api/block/moveBlock":         {json: k.moveBlock, write: true},
		"/api/block/foldBlock":         {json: k.foldBlock, write: true},
		"/api/block/unfoldBlock":       {json: k.unfoldBlock, write: true},
		"/api/block/getBlockKramdown":  {json: k.getBlockKramdown},
		"/api/block/getBlockKramdowns": {json: k.getBlockKramdowns},
		"/api/block/getBlocksIndexes":  {json: k.getBlocksIndexes},
		"/api/block/getChildBlocks":    {json: k.getChildBlocks},
		"/api/block/getBlockDOM":       {json: k.getBlockDOM},
		"/api/block/getBlockDOMs":      {json: k.getBlockDOMs},
		"/api/block/getBlockInfo":      {json: k.getBlockInfo},
		"/api/block/getDocInfo":        {json: k.getDocInfo},
		"/api/block/checkBlockExist":   {json: k.checkBlockExist},
		// attr
		"/api/attr/setBlockAttrs":      {json: k.setBlockAttrs, write: true},
		"/api/attr/getBlockAttrs":      {json: k.getBlockAttrs},
		"/api/attr/batchGetBlockAttrs": {json: k.batchGetBlockAttrs},
		// sql and search
		"/api/query/sql":                  {json: k.querySQL},
		"/api/sqlite/flushTransaction":    {json: k.flushTransaction, emptyOK: true},
		"/api/search/fullTextSearchBlock": {json: k.fullTextSearchBlock},
		// assets and files
		"/api/asset/upload":             {raw: k.uploadAsset, write: true},
		"/api/asset/renameAsset":        {json: k.renameAsset, write: true},
		"/api/asset/removeUnusedAsset":  {json: k.removeUnusedAsset, write: true},
		"/api/asset/removeUnusedAssets": {json: k.removeUnusedAssets, write: true, emptyOK: true, anyBody: true},
		"/api/asset/getUnusedAssets":    {json: k.getUnusedAssets, emptyOK: true, anyBody: true},
		"/api/asset/getDocAssets":       {json: k.getDocAssets},
		"/api/asset/getDocImageAssets":  {json: k.getDocImageAssets},
		"/api/asset/getImageOCRText":    {json: k.getImageOCRText},
		"/api/search/searchAsset":       {json: k.searchAsset},
		// templates
		"/api/search/searchTemplate":      {json: k.searchTemplate},
		"/api/search/removeTemplate":      {json: k.removeTemplate, write: true},
		"/api/template/render":            {json: k.renderTemplate, write: true},
		"/api/template/renderSprig":       {json: k.renderSprig, write: true},
		"/api/template/docSaveAsTemplate": {json: k.docSaveAsTemplate, write: true},
		"/api/file/getFile":               {raw: k.getFile},
		"/api/file/putFile":               {raw: k.putFile, write: true},
		"/api/file/removeFile":            {json: k.removeFile, write: true, argErrTwice: true},
		"/api/file/readDir":               {json: k.readDir, argErrTwice: true},
		// export
		"/api/export/exportResources": {json: k.exportResources, write: true},
		"/api/export/exportMdContent": {json: k.exportMdContent},
		// transactions
		"/api/transactions": {json: k.transactions, write: true},
	}
}

// Handler returns the kernel's HTTP API.
func (k *Kernel) Handler() http.Handler {
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
	writeAuthFailure(w, "Auth failed [session]")
	return false
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
		return nil, fmt.Errorf("Parses request [%s] failed: %w", r.URL.Path, err)
	}
	if len(body) > maxJSONBody {
		return nil, fmt.Errorf("Parses request [%s] failed: body larger than %d bytes", r.URL.Path, maxJSONBody)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if emptyOK || r.Method == http.MethodGet {
			return args{}, nil
		}
		return nil, fmt.Errorf("Parses request [%s] failed: the request body is empty or truncated (EOF)", r.URL.Path)
	}
	// Decoded into a plain map, as SiYuan's JsonArg does, so that a body of
	// the wrong JSON type gets SiYuan's error text, and a null body is an
	// empty argument map (each argument then reports itself missing).
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
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
