package system

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"sort"
	"strings"
)

// Masking: what the system tool shows of configuration and plugin files
// never carries a credential. SiYuan's getConf masks only the access code,
// the user data and MCP OAuth; it answers api.token, cookieKey, repo.key
// and the sync providers' keys in clear (captured on 3.7.3), so every
// value under a secret-looking key is replaced, and secret-looking text is
// replaced wherever it appears.

// Redacted replaces a secret value.
const Redacted = "[REDACTED]"

// secretSuffixes are compacted key names (lower case, letters and digits
// only) that name a secret, alone or as a suffix (sync.s3.secretKey,
// ai.embedding.apiKey, accessAuthCode).
var secretSuffixes = []string{
	"token", "secret", "secrets", "password", "passwd", "passphrase", "pwd", "cookie", "cookiekey",
	"authorization", "credential", "credentials", "privatekey", "apikey", "accesskey", "secretkey",
	"masterkey", "encryptionkey", "authcode", "jwt", "ticket", "session", "sessionid", "salt",
	"verifier", "nonce", "userdata", "oauth", "assertion", "samlresponse", "signature",
}

// secretExact are keys that are secrets only as a whole word (repo.key,
// sync.webdav.username).
var secretExact = []string{"key", "username", "user", "auth"}

// pathKeys are the absolute paths conf carries (the user's name is in
// them); workspace_info is the one action that shows the workspace's.
var pathKeys = []string{"workspacedir", "homedir", "appdir", "confdir", "datadir"}

func compact(key string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SecretKey reports whether a key names a secret (or a local path).
func SecretKey(key string) bool {
	c := compact(key)
	if c == "" {
		return false
	}
	for _, s := range secretExact {
		if c == s {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(c, s) {
			return true
		}
	}
	for _, s := range pathKeys {
		if c == s {
			return true
		}
	}
	return false
}

// secretText are values that are credentials whatever their key.
var secretText = []*regexp.Regexp{
	regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)`),
	regexp.MustCompile(`\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9_-]{16,}`),
	regexp.MustCompile(`\bgh[opusr]_[A-Za-z0-9]{20,}`),
	regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{20,}`),
	regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`),
	regexp.MustCompile(`\bAIza[A-Za-z0-9_-]{30,}`),
	regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`),
	regexp.MustCompile(`(?i)\b(?:Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{16,}`),
}

// userinfo is the user:password part of a URL (a proxy, a WebDAV
// endpoint).
var userinfo = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+(?::[^/\s@]*)?@`)

// bareUserinfo is user:password@ before a host without a scheme (a proxy
// host as SiYuan stores it).
var bareUserinfo = regexp.MustCompile(`^[^\s/:@]+:[^\s/@]*@`)

// assignment is `name = value` or `name: "value"` for a secret-looking
// name in text (a .env-like or a script file).
var assignment = regexp.MustCompile(`(?i)\b([A-Za-z0-9_.-]*(?:token|password|passwd|secret|api[_-]?key|access[_-]?key|cookie|authorization|auth[_-]?code|private[_-]?key))\b(["']?\s*[:=]\s*)(?:"([^"\r\n]{4,})"|'([^'\r\n]{4,})'|([^\s"',;]{4,}))`)

// RedactText replaces secret-looking text; redacted reports a change.
func RedactText(s string) (out string, redacted bool) {
	out = s
	for _, re := range secretText {
		out = re.ReplaceAllString(out, Redacted)
	}
	out = userinfo.ReplaceAllString(out, "${1}"+Redacted+"@")
	out = bareUserinfo.ReplaceAllString(out, Redacted+"@")
	out = assignment.ReplaceAllStringFunc(out, func(m string) string {
		sub := assignment.FindStringSubmatch(m)
		switch {
		case sub[3] != "":
			return sub[1] + sub[2] + `"` + Redacted + `"`
		case sub[4] != "":
			return sub[1] + sub[2] + `'` + Redacted + `'`
		}
		return sub[1] + sub[2] + Redacted
	})
	return out, out != s
}

// RedactValue returns a decoded JSON value with every value under a secret
// key replaced (empty ones are kept: they show that nothing is set), and
// secret-looking strings replaced anywhere. Booleans and nulls stay: they
// carry no secret.
func RedactValue(v any) (any, bool) {
	var changed bool
	out := redactValue(v, false, &changed)
	return out, changed
}

func redactValue(v any, secret bool, changed *bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, child := range x {
			out[k] = redactValue(child, secret || SecretKey(k), changed)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, child := range x {
			out[i] = redactValue(child, secret, changed)
		}
		return out
	case string:
		if secret && x != "" {
			*changed = true
			return Redacted
		}
		s, r := RedactText(x)
		*changed = *changed || r
		return s
	case json.Number:
		if secret {
			*changed = true
			return Redacted
		}
	}
	return v
}

// decodeJSON decodes JSON keeping numbers exact.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// RedactContent redacts a file's text: as JSON when it parses (keys and
// values, re-indented), else as text.
func RedactContent(content string) (out, format string, redacted bool) {
	if v, err := decodeJSON([]byte(content)); err == nil {
		if _, isObj := v.(map[string]any); isObj || isArray(v) {
			r, changed := RedactValue(v)
			b, err := json.MarshalIndent(r, "", "  ")
			if err == nil {
				return string(b), "json", changed
			}
		}
	}
	out, redacted = RedactText(content)
	return out, "text", redacted
}

func isArray(v any) bool { _, ok := v.([]any); return ok }

// sortedKeys lists an object's keys in order, for stable summaries.
func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
