package transfer

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
)

// Routes of the staging store, relative to the authority's base (and to
// its plugin prefix).
const (
	UploadPath = "/transfer/upload"
	LookupPath = "/transfer/lookup"
)

// maxLookupBody caps a /transfer/lookup body.
const maxLookupBody = 16 << 10

// StatusOf is the HTTP status of a staging failure.
func StatusOf(code failure.Code) int {
	switch code {
	case failure.StagingBusy:
		return http.StatusTooManyRequests
	case failure.FileTooLarge:
		return http.StatusRequestEntityTooLarge
	case failure.StagingFull:
		return http.StatusInsufficientStorage
	case failure.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case failure.TransferFailed:
		return http.StatusRequestTimeout
	case failure.InvalidRequest:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// replyError answers err as {"error": {code, message, action, ...}}, the
// shape of every authority route's error.
func replyError(w http.ResponseWriter, err error) {
	var fe *failure.Error
	if !errors.As(err, &fe) {
		fe = failure.Wrap(failure.Internal, err, "staging failed")
	}
	status := StatusOf(fe.Code)
	if fe.Code == failure.StagingBusy {
		w.Header().Set("Retry-After", "1")
	}
	reply(w, status, map[string]any{"error": fe.Body()})
}

// unsupported is the 415 of a body in neither accepted form.
func (s *Store) unsupported(w http.ResponseWriter, want string) {
	s.count(&s.ev.invalid)
	reply(w, http.StatusUnsupportedMediaType, map[string]any{"error": failure.New(failure.InvalidRequest,
		"Content-Type must be %s", want).Body()})
}

func postOnly(w http.ResponseWriter, r *http.Request, usage string) bool {
	if r.Method == http.MethodPost {
		return true
	}
	w.Header().Set("Allow", "POST")
	replyError(w, failure.New(failure.MethodNotAllowed, "POST %s", usage))
	return false
}

// ServeUpload answers POST /transfer/upload: raw bytes
// (Content-Type: application/octet-stream, the percent-encoded name in
// X-Sisyphus-File-Name) or JSON {"fileName", "dataBase64"}
// (application/json; standard, padded base64). It answers Staged, or an
// error body with 400, 413, 415, 429 or 507. The caller has already
// checked the bearer token, the Origin and the Host.
func (s *Store) ServeUpload(w http.ResponseWriter, r *http.Request) {
	if !postOnly(w, r, "the file's bytes (application/octet-stream with "+HeaderFileName+") or JSON {fileName, dataBase64}") {
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var st Staged
	switch {
	case err == nil && mt == "application/octet-stream":
		st, err = s.stageRaw(r)
	case err == nil && mt == "application/json":
		st, err = s.stageJSON(r)
	default:
		s.unsupported(w, "application/octet-stream (raw bytes, the name in "+HeaderFileName+") or application/json ({fileName, dataBase64})")
		return
	}
	if err != nil {
		replyError(w, err)
		return
	}
	reply(w, http.StatusOK, st)
}

func (s *Store) stageRaw(r *http.Request) (Staged, error) {
	name, err := ParseFileName(r.Header.Get(HeaderFileName))
	if err != nil {
		s.count(&s.ev.invalid)
		return Staged{}, err
	}
	return s.Stage(r.Context(), name, r.Body, r.ContentLength)
}

// maxJSONBody is the largest JSON upload: a file at the cap in base64, and
// room for the name and the syntax.
func (s *Store) maxJSONBody() int64 {
	return int64(base64.StdEncoding.EncodedLen(int(s.cfg.MaxFileBytes))) + 64<<10
}

// stageJSON stages {"fileName", "dataBase64"}. The body is read once, under
// a staging slot, and encoding/json decodes the base64 straight into the
// bytes that are kept.
func (s *Store) stageJSON(r *http.Request) (Staged, error) {
	release, err := s.acquire()
	if err != nil {
		return Staged{}, err
	}
	defer release()
	limit := s.maxJSONBody()
	if r.ContentLength > limit {
		return Staged{}, s.tooLarge()
	}
	// One allocation when the length is declared (io.ReadAll would double
	// its way up to a 13 MiB body).
	var buf bytes.Buffer
	buf.Grow(int(max(r.ContentLength, 0)) + 1)
	_, err = buf.ReadFrom(io.LimitReader(r.Body, limit+1))
	body := buf.Bytes()
	if err != nil {
		return Staged{}, bodyFailure(err)
	}
	if int64(len(body)) > limit {
		return Staged{}, s.tooLarge()
	}
	name, data, err := parseJSONUpload(body)
	if err != nil {
		s.count(&s.ev.invalid)
		return Staged{}, err
	}
	if int64(len(data)) > s.cfg.MaxFileBytes {
		return Staged{}, s.tooLarge()
	}
	if err := CheckFileName(name); err != nil {
		s.count(&s.ev.invalid)
		return Staged{}, err
	}
	return s.commit(name, data, sha256.Sum256(data))
}

// parseJSONUpload reads {"fileName": string, "dataBase64": string}.
func parseJSONUpload(body []byte) (name string, data []byte, err error) {
	if name, b64, ok := scanJSONUpload(body); ok {
		data = make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
		n, err := base64.StdEncoding.Decode(data, b64)
		if err != nil {
			return "", nil, failure.Wrap(failure.InvalidRequest, err, "dataBase64 is not standard base64 (RFC 4648 alphabet, with = padding)")
		}
		return name, data[:n], nil
	}
	return decodeJSONUpload(body)
}

// scanJSONUpload reads the usual shape of a JSON upload without
// encoding/json, which spends three quarters of a large upload validating
// and unquoting the base64 string: exactly the two members, once each, and
// a dataBase64 without escapes or control characters. Anything else
// answers ok=false and goes to decodeJSONUpload, which decides; where both
// accept a body, they read it alike (FuzzJSONUploadScan).
func scanJSONUpload(body []byte) (name string, b64 []byte, ok bool) {
	i := 0
	ws := func() {
		for i < len(body) && (body[i] == ' ' || body[i] == '\t' || body[i] == '\n' || body[i] == '\r') {
			i++
		}
	}
	// str returns the JSON string starting at body[i] as written (quotes
	// included), and whether it holds an escape.
	str := func() (raw []byte, escaped, ok bool) {
		if i >= len(body) || body[i] != '"' {
			return nil, false, false
		}
		for j := i + 1; j < len(body); j++ {
			switch c := body[j]; {
			case c == '\\':
				escaped = true
				j++
			case c == '"':
				raw, i = body[i:j+1], j+1
				return raw, escaped, true
			case c < 0x20:
				return nil, false, false
			}
		}
		return nil, false, false
	}
	var haveName, haveData bool
	ws()
	if i >= len(body) || body[i] != '{' {
		return "", nil, false
	}
	i++
	for {
		ws()
		key, escaped, ok := str()
		if !ok || escaped {
			return "", nil, false
		}
		ws()
		if i >= len(body) || body[i] != ':' {
			return "", nil, false
		}
		i++
		ws()
		val, escaped, ok := str()
		switch {
		case !ok:
			return "", nil, false
		case string(key) == `"fileName"` && !haveName:
			if json.Unmarshal(val, &name) != nil {
				return "", nil, false
			}
			haveName = true
		case string(key) == `"dataBase64"` && !haveData && !escaped && utf8.Valid(val):
			b64, haveData = val[1:len(val)-1], true
		default:
			return "", nil, false
		}
		ws()
		if i < len(body) && body[i] == ',' {
			i++
			continue
		}
		if i < len(body) && body[i] == '}' {
			i++
			break
		}
		return "", nil, false
	}
	ws()
	return name, b64, i == len(body) && haveName && haveData
}

// decodeJSONUpload is the general reading of a JSON upload.
func decodeJSONUpload(body []byte) (name string, data []byte, err error) {
	var in struct {
		FileName   *string `json:"fileName"`
		DataBase64 *[]byte `json:"dataBase64"` // encoding/json decodes standard base64
	}
	if err := json.Unmarshal(body, &in); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return "", nil, failure.Wrap(failure.InvalidRequest, err, "the body is not valid JSON: send {\"fileName\": string, \"dataBase64\": string}")
		case errors.As(err, &te):
			return "", nil, failure.Wrap(failure.InvalidRequest, err, "field %q must be a string", te.Field)
		default: // a base64 error: json reports it as a plain error
			return "", nil, failure.Wrap(failure.InvalidRequest, err, "dataBase64 is not standard base64 (RFC 4648 alphabet, with = padding)")
		}
	}
	switch {
	case in.FileName == nil:
		return "", nil, failure.New(failure.InvalidRequest, "fileName is required")
	case in.DataBase64 == nil || *in.DataBase64 == nil:
		return "", nil, failure.New(failure.InvalidRequest, "dataBase64 is required: the file's bytes in base64")
	}
	return *in.FileName, *in.DataBase64, nil
}

// lookupRequest is the body of /transfer/lookup.
type lookupRequest struct {
	FileName string `json:"fileName"`
	SHA256   string `json:"sha256"`
	Size     int64  `json:"size"`
}

// LookupReply is the answer of /transfer/lookup: found, and the snapshot's
// Staged fields when it is.
type LookupReply struct {
	Found bool `json:"found"`
	*Staged
}

// ServeLookup answers POST /transfer/lookup {"fileName", "sha256", "size"}
// with LookupReply. It finds only a snapshot the store hashed itself.
func (s *Store) ServeLookup(w http.ResponseWriter, r *http.Request) {
	if !postOnly(w, r, "JSON {fileName, sha256, size}") {
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.unsupported(w, "application/json")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxLookupBody+1))
	var in lookupRequest
	if err == nil && len(data) <= maxLookupBody {
		err = json.Unmarshal(data, &in)
	}
	if err == nil {
		err = checkLookup(in)
	}
	if err != nil || len(data) > maxLookupBody {
		s.count(&s.ev.invalid)
		var fe *failure.Error
		if !errors.As(err, &fe) {
			fe = failure.New(failure.InvalidRequest, "the body must be {\"fileName\": string, \"sha256\": 64 hex digits, \"size\": bytes}")
		}
		replyError(w, fe)
		return
	}
	st, ok := s.Lookup(in.FileName, in.SHA256, in.Size)
	if !ok {
		reply(w, http.StatusOK, LookupReply{})
		return
	}
	reply(w, http.StatusOK, LookupReply{Found: true, Staged: &st})
}

func checkLookup(in lookupRequest) error {
	if err := CheckFileName(in.FileName); err != nil {
		return err
	}
	if b, err := hex.DecodeString(in.SHA256); err != nil || len(b) != 32 {
		return failure.New(failure.InvalidRequest, "sha256 must be the file's full SHA-256 digest in 64 hex digits")
	}
	if in.Size <= 0 {
		return failure.New(failure.InvalidRequest, "size must be the file's size in bytes (more than 0)")
	}
	return nil
}
