package system

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sisyphus-go/sisyphus/docs"
	"github.com/sisyphus-go/sisyphus/internal/failure"
)

func TestSecretKey(t *testing.T) {
	for key, want := range map[string]bool{
		"token": true, "apiToken": true, "secretKey": true, "accessKey": true, "cookieKey": true, "accessAuthCode": true, "password": true,
		"api_key": true, "key": true, "username": true, "masterSalt": true, "kekVerifier": true, "userData": true, "mcpOAuth": true,
		"workspaceDir": true, "client-secret": true, "Authorization": true,
		"maxCompletionTokens": false, "keymap": false, "theme": false, "sessionTimeout": false, "enabled": false, "hotkeys": false, "": false,
	} {
		if got := SecretKey(key); got != want {
			t.Errorf("SecretKey(%q) = %v, want %v", key, got, want)
		}
	}
}

func TestRedactText(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":           "plain text",
		"token = abcdefgh":     "token = " + Redacted,
		`password: "hunter22"`: `password: "` + Redacted + `"`,
		"Authorization: Bearer abcdefghijklmnop1234":                           "Authorization: " + Redacted,
		"use ghp_abcdefghijklmnopqrstuvwxyz0123":                               "use " + Redacted,
		"https://u:p@example.org/x":                                            "https://" + Redacted + "@example.org/x",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----": Redacted,
	} {
		if got, _ := RedactText(in); got != want {
			t.Errorf("RedactText(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactContentKeepsShape(t *testing.T) {
	out, format, red := RedactContent(`{"a":1,"list":[{"secret":"xyz12345"}],"empty":{"token":""},"n":{"apiKey":42}}`)
	var v map[string]any
	if err := json.Unmarshal([]byte(out), &v); err != nil || format != "json" || !red {
		t.Fatalf("%s %s %v %v", out, format, red, err)
	}
	if v["a"] != float64(1) || v["list"].([]any)[0].(map[string]any)["secret"] != Redacted || v["empty"].(map[string]any)["token"] != "" ||
		v["n"].(map[string]any)["apiKey"] != Redacted {
		t.Errorf("redacted: %v", v)
	}
	if out, format, red := RedactContent("not json {"); format != "text" || red || out != "not json {" {
		t.Errorf("text: %q %s %v", out, format, red)
	}
}

func TestCheckStoragePath(t *testing.T) {
	for in, want := range map[string]string{"": "", " config.json ": "config.json", "a/b.json": "a/b.json", "日本/設定.json": "日本/設定.json", ".hidden.json": ".hidden.json"} {
		if got, err := CheckStoragePath(in); err != nil || got != want {
			t.Errorf("CheckStoragePath(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"..", "../x", "a/..", "a/../b", "/a", "a//b", "a/", "./a", `a\b`, "%2e%2e", "a\x00b", "a\nb", "C:x", "~/x",
		"...", ". ", "a. ", "a./b", " /x", strings.Repeat("a/", 17) + "b", strings.Repeat("x", 513), "\xff"} {
		if _, err := CheckStoragePath(in); err == nil {
			t.Errorf("CheckStoragePath(%q) accepted", in)
		}
	}
}

func TestCheckStorageFile(t *testing.T) {
	for name, ok := range map[string]bool{"config.json": true, "README": true, "notes.md": true, "style.css": true, "a/b/settings.yaml": true,
		".env": false, "prod.env": false, "credentials.json": false, "my-secrets.yml": false, "tokens.json": false, "id_rsa": false,
		"x.db": false, "x.zip": false, "x.pem": false, "x.html": false, "x.sh": false} {
		if err := CheckStorageFile(name); (err == nil) != ok {
			t.Errorf("CheckStorageFile(%q): %v", name, err)
		}
	}
}

func TestChangelog(t *testing.T) {
	md := "# Changelog\n\n## 0.0.0-dev.10 - 2026-12-03\n\n- ten\n\n## 0.0.0-dev.9 - 2026-12-02\n\n- nine a\n- nine b\n\n## v0.0.0-dev.1\n\n- one\n"
	all := ParseChangelog(md)
	if len(all) != 3 || all[0].Version != "0.0.0-dev.10" || all[0].Date != "2026-12-03" || all[1].Items[1] != "nine b" || all[2].Version != "0.0.0-dev.1" || all[2].Date != "" {
		t.Fatalf("parsed: %+v", all)
	}
	if CompareVersions("0.0.0-dev.10", "0.0.0-dev.9") != 1 || CompareVersions("v1.2", "1.2.0") != 0 || CompareVersions("1.0", "1.0.1") != -1 {
		t.Error("CompareVersions")
	}
	got, err := changelogAnswer(md, "x", changelogArgs{FromVersion: "0.0.0-dev.1", Limit: 5})
	if err != nil || len(got["entries"].([]ChangelogEntry)) != 2 {
		t.Fatalf("fromVersion: %v %v", got, err)
	}
	got, _ = changelogAnswer(md, "x", changelogArgs{Version: "v0.0.0-dev.9", Limit: 5, IncludeRaw: true})
	if e := got["entries"].([]ChangelogEntry); len(e) != 1 || !strings.HasPrefix(e[0].Raw, "## 0.0.0-dev.9") {
		t.Fatalf("version: %v", got)
	}
	got, _ = changelogAnswer(md, "x", changelogArgs{Limit: 1})
	if e := got["entries"].([]ChangelogEntry); len(e) != 1 || e[0].Raw != "" || got["latestVersion"] != "0.0.0-dev.10" {
		t.Fatalf("limit: %v", got)
	}
	if _, err := changelogAnswer(md, "x", changelogArgs{Version: "9.9.9", Limit: 5}); err == nil || err.(*failure.Error).Code != failure.NotFound {
		t.Fatalf("missing version: %v", err)
	}
	// The built-in changelog parses, newest first, every entry with items.
	built := ParseChangelog(docs.Changelog)
	if len(built) < 2 || CompareVersions(built[0].Version, built[1].Version) <= 0 {
		t.Fatalf("docs/CHANGELOG.md: %+v", built)
	}
	for _, e := range built {
		if len(e.Items) == 0 || e.Date == "" {
			t.Errorf("entry %s has no items or date", e.Version)
		}
	}
}

func TestChangelogAction(t *testing.T) {
	f := newStrictFixture(t, false)
	got := f.OK(t, "system", map[string]any{"action": "changelog", "limit": 1})
	if len(got["entries"].([]any)) != 1 || got["total"].(float64) < 2 {
		t.Fatalf("changelog: %v", got)
	}
	f.WantErr(t, "system", map[string]any{"action": "changelog", "version": "1", "fromVersion": "0"}, failure.InvalidArguments)
}

func TestSummarize(t *testing.T) {
	v, _ := decodeJSON([]byte(`{"b":[1,"x",null,{"k":true}],"a":{"c":{"d":1}}}`))
	n := summarize(v, 0, 1, 12)
	b, _ := json.Marshal(n)
	want := `{"entries":{"a":{"keyCount":1,"keysPreview":["c"],"omittedKeys":0,"truncated":true,"type":"object"},` +
		`"b":{"length":4,"omittedItems":0,"sampleTypes":["number","string","null","object"],"truncated":true,"type":"array"}},` +
		`"keyCount":2,"omittedKeys":0,"truncated":false,"type":"object"}`
	if string(b) != want {
		t.Errorf("summary\n%s\nwant\n%s", b, want)
	}
	for _, p := range []string{"a.c.d", "b[3].k", "b.0"} {
		segs, err := parseKeyPath(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := valueAt(v, segs); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func FuzzCheckStoragePath(f *testing.F) {
	for _, s := range []string{"config.json", "../x", "a/./b", "%2e", `a\b`, "a\x00", "日本.json", ". .", "a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := CheckStoragePath(p)
		if err != nil {
			if _, ok := err.(*failure.Error); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if strings.HasPrefix(got, "/") || strings.ContainsAny(got, "\\%:\x00") {
			t.Fatalf("accepted %q as %q", p, got)
		}
		for _, seg := range strings.Split(got, "/") {
			if got != "" && (strings.Trim(seg, ". ") == "" || seg == "..") {
				t.Fatalf("accepted %q with segment %q", p, seg)
			}
		}
	})
}

func FuzzRedactContent(f *testing.F) {
	for _, s := range []string{`{"token":"abcdefgh"}`, "password=hunter22", "[1,2]", "", "Bearer abcdefghijklmnopqrstu", `{"a":{"secretKey":["x"]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, format, _ := RedactContent(s)
		if format == "json" && !json.Valid([]byte(out)) {
			t.Fatalf("json output is not JSON: %q", out)
		}
		// Redacting again changes nothing more.
		if again, _, _ := RedactContent(out); format == "json" && again != out {
			t.Fatalf("not idempotent: %q then %q", out, again)
		}
	})
}

func FuzzParseKeyPath(f *testing.F) {
	for _, s := range []string{"conf.a", "conf.langs[0]", "", "[[", "a..b", "0"} {
		f.Add(s)
	}
	root, _ := decodeJSON([]byte(`{"conf":{"a":[1,{"b":2}]}}`))
	f.Fuzz(func(t *testing.T, p string) {
		segs, err := parseKeyPath(p)
		if err != nil {
			return
		}
		if _, err := valueAt(root, segs); err != nil {
			if _, ok := err.(*failure.Error); !ok {
				t.Fatalf("error of type %T", err)
			}
		}
	})
}
