package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
)

// TestSkillsBothEras: skills/list and skills/get answer in both eras with
// complete manifests whose digests and sizes are the files' bytes, read
// through resources/read; an unknown skill is -32602; the capability is
// advertised only with skills, and the methods are unknown without.
func TestSkillsBothEras(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	body, h := modernReq(1, "skills/list", nil)
	if r := do(t, nil, http.MethodPost, ts.URL, body, h); r.errCode() != CodeMethodNotFound {
		t.Fatalf("skills/list without skills: %s", r.body)
	}
	content := []byte("---\nname: git-flow\ndescription: \"d\"\n---\n\n# Body\n")
	s.AddSkill(Skill{Frontmatter: map[string]any{"name": "git-flow", "description": "d"},
		Files: []SkillFile{{Path: "SKILL.md", MimeType: "text/markdown", Content: content}}})
	sum := sha256.Sum256(content)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	sid := legacyInit(t, ts.URL, nil, nil)
	run := func(era, method string, params map[string]any) httpResult {
		if era == "modern" {
			p := map[string]any{"_meta": modernMeta(nil)}
			for k, v := range params {
				p[k] = v
			}
			body, h := modernReq(1, method, p)
			if method == "resources/read" {
				h["Mcp-Name"] = params["uri"].(string)
			}
			return do(t, nil, http.MethodPost, ts.URL, body, h)
		}
		return do(t, nil, http.MethodPost, ts.URL, mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}), legacyHeaders(sid))
	}
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			r := run(era, "skills/list", nil)
			list := r.result()["skills"].([]any)
			if len(list) != 1 {
				t.Fatalf("skills/list: %s", r.body)
			}
			e := list[0].(map[string]any)
			res := e["resources"].([]any)[0].(map[string]any)
			if e["uri"] != "skill://git-flow/SKILL.md" || res["digest"] != digest || res["size"] != float64(len(content)) {
				t.Fatalf("entry: %s", r.body)
			}
			if era == "modern" && (r.result()["resultType"] != "complete" || r.result()["cacheScope"] == nil) {
				t.Errorf("modern skills/list is not a cacheable complete result: %s", r.body)
			}
			r = run(era, "skills/get", map[string]any{"uri": "skill://git-flow/SKILL.md"})
			if mustJSON(r.result()["skill"]) != mustJSON(e) {
				t.Errorf("skills/get: %s", r.body)
			}
			if r = run(era, "skills/get", map[string]any{"uri": "skill://nope/SKILL.md"}); r.errCode() != CodeInvalidParams {
				t.Errorf("unknown skill: %s", r.body)
			}
			if r = run(era, "skills/get", nil); r.errCode() != CodeInvalidParams {
				t.Errorf("no uri: %s", r.body)
			}
			r = run(era, "resources/read", map[string]any{"uri": "skill://git-flow/SKILL.md"})
			if c := r.result()["contents"].([]any)[0].(map[string]any); c["text"] != string(content) || c["mimeType"] != "text/markdown" {
				t.Errorf("read: %s", r.body)
			}
		})
	}
	body, h = modernReq(3, "server/discover", nil)
	caps := do(t, nil, http.MethodPost, ts.URL, body, h).result()["capabilities"].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	if ext[ExtSkills] == nil || caps["resources"] == nil {
		t.Errorf("capabilities: %v", caps)
	}
}

func TestAddSkillRefusesInvalid(t *testing.T) {
	md := []SkillFile{{Path: "SKILL.md", Content: []byte("x")}}
	for name, sk := range map[string]Skill{
		"no description":  {Frontmatter: map[string]any{"name": "a"}, Files: md},
		"bad name":        {Frontmatter: map[string]any{"name": "A b", "description": "d"}, Files: md},
		"path not name":   {Path: "x/b", Frontmatter: map[string]any{"name": "a", "description": "d"}, Files: md},
		"no SKILL.md":     {Frontmatter: map[string]any{"name": "a", "description": "d"}},
		"SKILL.md second": {Frontmatter: map[string]any{"name": "a", "description": "d"}, Files: []SkillFile{{Path: "x.md"}, md[0]}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: accepted", name)
				}
			}()
			testServer(t, nil).AddSkill(sk)
		}()
	}
}

// TestSkillDirectoryRead lists a skill's folders with
// resources/directory/read in both eras: direct children only, folders as
// inode/directory, and every URI that is not one of the skill's folders
// (a file, an unknown folder, dot segments, another scheme) refused as an
// invalid parameter.
func TestSkillDirectoryRead(t *testing.T) {
	s := testServer(t, nil)
	ts := newHTTPTest(t, s, HTTPOptions{})
	s.AddSkill(Skill{Path: "acme/notes", Frontmatter: map[string]any{"name": "notes", "description": "d"},
		Files: []SkillFile{
			{Path: "SKILL.md", MimeType: "text/markdown", Content: []byte("---\nname: notes\ndescription: d\n---\n")},
			{Path: "references/guide.md", MimeType: "text/markdown", Content: []byte("guide")},
			{Path: "references/deep/x.json", MimeType: "application/json", Content: []byte("{}")},
			{Path: "scripts/run.sh", MimeType: "text/x-sh", Content: []byte("echo")},
		}})
	sid := legacyInit(t, ts.URL, nil, nil)
	run := func(era string, params map[string]any) httpResult {
		if era == "modern" {
			p := map[string]any{"_meta": modernMeta(nil)}
			for k, v := range params {
				p[k] = v
			}
			body, h := modernReq(1, "resources/directory/read", p)
			return do(t, nil, http.MethodPost, ts.URL, body, h)
		}
		return do(t, nil, http.MethodPost, ts.URL, mustJSON(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "resources/directory/read", "params": params}), legacyHeaders(sid))
	}
	names := func(r httpResult) string {
		var out []string
		for _, e := range r.result()["resources"].([]any) {
			m := e.(map[string]any)
			out = append(out, m["uri"].(string)+" "+m["mimeType"].(string))
		}
		return strings.Join(out, ", ")
	}
	for _, era := range []string{"legacy", "modern"} {
		t.Run(era, func(t *testing.T) {
			tests := []struct{ uri, want string }{
				{"skill://acme/notes", "skill://acme/notes/SKILL.md text/markdown, skill://acme/notes/references inode/directory, skill://acme/notes/scripts inode/directory"},
				{"skill://acme/notes/", "skill://acme/notes/SKILL.md text/markdown, skill://acme/notes/references inode/directory, skill://acme/notes/scripts inode/directory"},
				{"skill://acme/notes/references", "skill://acme/notes/references/deep inode/directory, skill://acme/notes/references/guide.md text/markdown"},
				{"skill://acme/notes/references/deep", "skill://acme/notes/references/deep/x.json application/json"},
			}
			for _, tt := range tests {
				if r := run(era, map[string]any{"uri": tt.uri}); names(r) != tt.want {
					t.Errorf("%s: %s", tt.uri, r.body)
				}
			}
			for _, bad := range []map[string]any{
				{"uri": "skill://acme/notes/SKILL.md"},
				{"uri": "skill://acme"},
				{"uri": "skill://acme/notes/references/.."},
				{"uri": "skill://acme/notes/./references"},
				{"uri": "file:///etc"},
				{"uri": ""},
				{},
				{"uri": "skill://acme/notes", "cursor": "1"},
			} {
				if r := run(era, bad); r.errCode() != CodeInvalidParams {
					t.Errorf("%v: %s", bad, r.body)
				}
			}
		})
	}
	body, h := modernReq(3, "server/discover", nil)
	caps := do(t, nil, http.MethodPost, ts.URL, body, h).result()["capabilities"].(map[string]any)
	if ext, _ := caps["extensions"].(map[string]any)[ExtSkills].(map[string]any); ext["directoryRead"] != true {
		t.Errorf("capabilities: %v", caps)
	}
}
