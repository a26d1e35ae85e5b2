package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"
)

// ExtSkills is the skills extension's identifier: a server that serves
// skills advertises it under capabilities.extensions and answers
// skills/list and skills/get.
const ExtSkills = "io.modelcontextprotocol/skills"

// Skill is a skill a server serves through the skills extension: a
// directory of files whose first is its SKILL.md. Every file is also a
// resource, skill://<Path>/<file>, read with resources/read.
type Skill struct {
	// Path locates the skill under skill://; its last segment is the
	// skill's name (Frontmatter["name"]).
	Path string
	// Frontmatter is SKILL.md's YAML frontmatter as a JSON object; name
	// and description are required.
	Frontmatter map[string]any
	// Files are the skill's files, SKILL.md first; their bytes never
	// change once added (the digests published are theirs).
	Files []SkillFile
}

// SkillFile is one file of a skill.
type SkillFile struct {
	Path     string // relative to the skill's directory ("SKILL.md")
	MimeType string
	Content  []byte
}

// skillEntry is a skill's wire entry, encoded once.
type skillEntry struct {
	uri   string
	entry map[string]any
	// dirs maps each directory of the skill (skill://<Path>, and any
	// folder its files sit in, without a trailing slash) to its direct
	// children, for resources/directory/read.
	dirs map[string][]map[string]any
}

// mimeDirectory marks a directory among resources/directory/read's
// entries: a client descends into it with another directory read.
const mimeDirectory = "inode/directory"

// skillName is the Agent Skills naming rule: lowercase letters, digits
// and single hyphens, at most 64 characters.
var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// AddSkill registers (or replaces) a skill and its files as resources. It
// panics on an invalid skill (no SKILL.md first, a name that is not the
// path's last segment or breaks the naming rule, no description), like
// AddTool.
func (s *Server) AddSkill(sk Skill) {
	name, _ := sk.Frontmatter["name"].(string)
	desc, _ := sk.Frontmatter["description"].(string)
	if !skillName.MatchString(name) || len(name) > 64 || desc == "" {
		panic(fmt.Sprintf("mcp: skill %q: a valid name and a description are required", name))
	}
	if sk.Path == "" {
		sk.Path = name
	}
	if sk.Path != name && !strings.HasSuffix(sk.Path, "/"+name) {
		panic(fmt.Sprintf("mcp: skill path %q does not end in its name %q", sk.Path, name))
	}
	if len(sk.Files) == 0 || sk.Files[0].Path != "SKILL.md" {
		panic("mcp: skill " + name + " needs SKILL.md as its first file")
	}
	base := "skill://" + sk.Path + "/"
	var manifest []map[string]any
	for _, f := range sk.Files {
		uri := base + f.Path
		sum := sha256.Sum256(f.Content)
		manifest = append(manifest, map[string]any{"uri": uri, "digest": "sha256:" + hex.EncodeToString(sum[:]), "size": len(f.Content)})
		content := ResourceContents{URI: uri, MimeType: f.MimeType, Text: string(f.Content)}
		r := Resource{URI: uri, Name: f.Path, MimeType: f.MimeType, Size: int64(len(f.Content)),
			Handler: func(context.Context, *ResourceRequest) (*ResourceResult, error) {
				return &ResourceResult{Contents: []ResourceContents{content}}, nil
			}}
		if f.Path == "SKILL.md" {
			r.Name, r.Description = name, desc
		}
		s.AddResource(r)
	}
	e := &skillEntry{uri: base + "SKILL.md", entry: map[string]any{"uri": base + "SKILL.md", "frontmatter": sk.Frontmatter, "resources": manifest},
		dirs: skillDirs(strings.TrimSuffix(base, "/"), sk.Files)}
	s.mu.Lock()
	if _, ok := s.skills[e.uri]; !ok {
		s.skillOrder = append(s.skillOrder, e.uri)
	}
	s.skills[e.uri] = e
	s.mu.Unlock()
}

// skillDirs lists the direct children of every directory of a skill whose
// root is root (no trailing slash): files with their resource metadata,
// folders as mimeDirectory, sorted by URI.
func skillDirs(root string, files []SkillFile) map[string][]map[string]any {
	dirs := map[string][]map[string]any{root: nil}
	seen := map[string]bool{}
	for _, f := range files {
		segs := strings.Split(f.Path, "/")
		parent := root
		for i, seg := range segs {
			uri := parent + "/" + seg
			if i == len(segs)-1 {
				dirs[parent] = append(dirs[parent], map[string]any{"uri": uri, "name": seg, "mimeType": f.MimeType, "size": len(f.Content)})
				break
			}
			if !seen[uri] {
				seen[uri] = true
				dirs[parent] = append(dirs[parent], map[string]any{"uri": uri, "name": seg, "mimeType": mimeDirectory})
				dirs[uri] = []map[string]any{}
			}
			parent = uri
		}
	}
	for _, children := range dirs {
		sort.Slice(children, func(i, j int) bool { return children[i]["uri"].(string) < children[j]["uri"].(string) })
	}
	return dirs
}

// directoryRead answers resources/directory/read: the direct children of
// one directory of a served skill. The URI must name that directory
// exactly (a trailing slash is forgiven); a file, an unknown folder, or a
// path with dot segments is an invalid parameter, as an unknown resource
// is for resources/read. Nothing here touches a file system: the answer
// comes from the files the skill was registered with.
func (s *Server) directoryRead(params map[string]json.RawMessage) (map[string]any, error) {
	if err := checkCursor(params); err != nil {
		return nil, err
	}
	var uri string
	if json.Unmarshal(params["uri"], &uri) != nil || uri == "" {
		return nil, InvalidParamsError("resources/directory/read: uri is required")
	}
	dir := strings.TrimSuffix(uri, "/")
	if rest, ok := strings.CutPrefix(dir, "skill://"); !ok || path.Clean("/"+rest) != "/"+rest {
		return nil, &Error{Code: CodeInvalidParams, Message: "Not a skill directory", Data: map[string]string{"uri": uri}}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, u := range s.skillOrder {
		if children, ok := s.skills[u].dirs[dir]; ok {
			return map[string]any{"resources": children}, nil
		}
	}
	return nil, &Error{Code: CodeInvalidParams, Message: "Not a skill directory", Data: map[string]string{"uri": uri}}
}

func (s *Server) hasSkills() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.skills) > 0
}

// skillsMethod answers skills/list and skills/get.
func (s *Server) skillsMethod(method string, params map[string]json.RawMessage) (map[string]any, error) {
	if method == "skills/list" {
		if err := checkCursor(params); err != nil {
			return nil, err
		}
		s.mu.RLock()
		defer s.mu.RUnlock()
		out := make([]map[string]any, 0, len(s.skillOrder))
		for _, u := range s.skillOrder {
			out = append(out, s.skills[u].entry)
		}
		return map[string]any{"skills": out}, nil
	}
	var uri string
	if json.Unmarshal(params["uri"], &uri) != nil || uri == "" {
		return nil, InvalidParamsError("skills/get: uri is required")
	}
	s.mu.RLock()
	e := s.skills[uri]
	s.mu.RUnlock()
	if e == nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "Unknown skill", Data: map[string]string{"uri": uri}}
	}
	return map[string]any{"skill": e.entry}, nil
}
