package tools

import "testing"

func TestPayloadKey(t *testing.T) {
	p := Payload{"id": "20260812120000-abcdefg", "ids": []string{"a"}, "n": 3}
	for _, tc := range []struct {
		name, key string
		wantErr   bool
	}{
		{"present and typed", "id", false},
		{"missing", "avID", true},
		{"mistyped", "n", true},
		{"a list is not a string", "ids", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PayloadKey[string](p, tc.key)
			if (err != nil) != tc.wantErr {
				t.Fatalf("PayloadKey(%q) err = %v, want error %v", tc.key, err, tc.wantErr)
			}
		})
	}
	if ids, err := PayloadKey[[]string](p, "ids"); err != nil || len(ids) != 1 {
		t.Fatalf("PayloadKey[[]string] = %v, %v", ids, err)
	}
}
