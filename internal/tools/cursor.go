package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// A page cursor an action gives and takes back is "<version>.<payload>.<check>":
// the payload the base64url of its JSON, the check the first 16 hex digits
// of a SHA-256 over the action's purpose and the payload. The check is no
// secret: it only makes an edited cursor evident; what makes a cursor safe
// is that the action checks everything in it against what it pages.

// EncodeCursor is the cursor text of v for an action's version and
// purpose (a phrase naming the action, so that one action's cursor is not
// another's).
func EncodeCursor(version, purpose string, v any) string {
	b, _ := json.Marshal(v)
	payload := base64.RawURLEncoding.EncodeToString(b)
	return version + "." + payload + "." + cursorCheck(purpose, payload)
}

func cursorCheck(purpose, payload string) string {
	sum := sha256.Sum256([]byte("sisyphus " + purpose + " cursor\x00" + payload))
	return hex.EncodeToString(sum[:8])
}

// DecodeCursor parses into v exactly the texts EncodeCursor writes for
// version and purpose: no unknown field, no padding, spacing or field
// order variant. The error says what is wrong, for the agent.
func DecodeCursor(s, version, purpose string, v any) error {
	parts := strings.Split(s, ".")
	if len(parts) != 3 || parts[0] != version {
		return fmt.Errorf("not of the form %s.<payload>.<check>", version)
	}
	if parts[2] != cursorCheck(purpose, parts[1]) {
		return fmt.Errorf("its check does not match: it was changed")
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(parts[1])
	if err != nil {
		return fmt.Errorf("its payload is not base64url: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || dec.More() {
		return fmt.Errorf("its payload is not a cursor")
	}
	if EncodeCursor(version, purpose, v) != s {
		return fmt.Errorf("its payload is not in canonical form")
	}
	return nil
}
