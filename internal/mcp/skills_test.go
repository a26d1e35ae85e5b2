package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
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
