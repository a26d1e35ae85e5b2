package document

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
)

// sortModeAttr is the attribute SiYuan 3.8.1+ stores a document's own
// child sort mode in; 3.7.3 reads and writes no such mode.
const sortModeAttr = "custom-sy-subdoc-sort-mode"

var sortModeNames = []string{"name_ascending", "name_descending", "updated_ascending", "updated_descending",
	"alphanumeric_ascending", "alphanumeric_descending", "custom", "reference_count_ascending", "reference_count_descending",
	"created_ascending", "created_descending", "size_ascending", "size_descending", "child_count_ascending", "child_count_descending",
	"file_tree"}

// sortModeName names a sort mode (nil: none).
func sortModeName(m *int) any {
	if m == nil {
		return nil
	}
	if *m >= 0 && *m < len(sortModeNames) {
		return sortModeNames[*m]
	}
	return "unknown_" + strconv.Itoa(*m)
}

// declaredSortMode reads the attribute as upstream does: 0-14, else none.
func declaredSortMode(v string) *int {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 || n > 14 {
		return nil
	}
	return &n
}

var getChildSortMode = tools.Read[parentArgs]{
	Name: "get_child_sort_mode", Summary: "how a document's child documents are sorted: the mode it declares (SiYuan 3.8.1+ only; none on 3.7.3) and the one in effect (the notebook's)",
	Example: map[string]any{"id": "20260812120000-docdocd"},
	Scope:   tools.Scope[parentArgs]{Touches: func(a parentArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Run: func(ctx context.Context, env *tools.Env, a parentArgs) (any, error) {
		loc, err := locateDocument(ctx, env, a.ID, "id must identify a document, got the block %s inside one")
		if err != nil {
			return nil, err
		}
		attrs, err := env.Kernel.GetBlockAttrs(ctx, a.ID)
		if err != nil {
			return nil, err
		}
		conf, err := env.Kernel.GetNotebookConf(ctx, loc.Notebook)
		if err != nil {
			return nil, kernelview.NotebookErr(loc.Notebook, err)
		}
		declared := declaredSortMode(attrs[sortModeAttr])
		// SiYuan 3.7.3 sorts every document's children by the notebook's mode
		// (15: the file tree setting).
		effective := conf.Conf.SortMode
		out := map[string]any{
			"id": a.ID, "notebook": loc.Notebook, "path": loc.Path,
			"declaredSortMode": declared, "declaredSortModeName": sortModeName(declared),
			"effectiveSortMode": effective, "effectiveSortModeName": sortModeName(&effective),
			"effectiveFrom": "notebook", "inherited": declared == nil, "supported": false,
			"hint": "SiYuan 3.7.3 has no per-document sort mode: the notebook's mode applies (set it with set_child_sort_mode on the notebook id)",
		}
		return out, nil
	},
}

var getChildBlocks = tools.Read[idArgs]{
	Name: "get_child_blocks", Summary: "a document's top-level blocks (id, type, subtype, text, markdown); a block id answers its document's",
	Example: map[string]any{"id": "20260812120000-docdocd"},
	Scope:   readsID,
	Run: func(ctx context.Context, env *tools.Env, a idArgs) (any, error) {
		ref, err := kernelview.Describe(ctx, env, a.ID)
		if err != nil {
			return nil, err
		}
		kids, err := env.Kernel.GetChildBlocks(ctx, ref.ID)
		if err != nil {
			return nil, err
		}
		return map[string]any{"id": ref.ID, "blocks": kids, "count": len(kids)}, nil
	},
}

// setAttrArgs are set_attr's: the attributes to write (icon, title-img);
// an empty value removes the attribute.
type setAttrArgs struct {
	ID    string         `arg:"id" help:"the document" id:"" required:""`
	Given map[string]any `arg:"attrs" help:"icon and/or cover" required:""`
	// Attrs are the attributes to write, from Given.
	Attrs map[string]string
	// Cover is the cover as given (for the answer); Cleared when removed.
	Cover   string
	Cleared bool
}

var coverURL = regexp.MustCompile(`(?i)^https?://`)

func parseSetAttr(s *setAttrArgs) error {
	s.Attrs = map[string]string{}
	in := s.Given
	for k := range in {
		if k != "icon" && k != "cover" {
			return failure.Invalid("attrs may hold icon and cover only, got %q (other attributes: block set_attrs)", k)
		}
	}
	if v, ok := in["icon"]; ok {
		icon, isStr := v.(string)
		if !isStr {
			return failure.Invalid("attrs.icon must be a string")
		}
		s.Attrs["icon"] = strings.TrimSpace(icon)
	}
	if v, ok := in["cover"]; ok {
		switch c := v.(type) {
		case nil:
			s.Attrs["title-img"], s.Cleared = "", true
		case string:
			c = strings.TrimSpace(c)
			if c == "" {
				s.Attrs["title-img"], s.Cleared = "", true
				break
			}
			if !coverURL.MatchString(c) && !strings.HasPrefix(c, "/assets/") {
				return failure.Invalid("attrs.cover must be an http(s) URL or an asset path starting with /assets/, or null to remove the cover")
			}
			esc := strings.ReplaceAll(strings.ReplaceAll(c, `\`, `\\`), `"`, `\"`)
			s.Attrs["title-img"], s.Cover = `background-image:url("`+esc+`");`, c
		default:
			return failure.Invalid("attrs.cover must be a string or null")
		}
	}
	if len(s.Attrs) == 0 {
		return failure.Invalid("attrs must hold icon or cover")
	}
	return nil
}

var setAttr = tools.Write[setAttrArgs, DocState]{
	Name: "set_attr", Summary: "set a document's icon (attrs.icon: an emoji code point in hex like 1f4d4, or \"\" to remove) and cover (attrs.cover: an http(s) URL or /assets/ path, stored as title-img; null or \"\" removes it)",
	Policy:   guarded,
	Example:  map[string]any{"id": "20260812120000-docdocd", "attrs": map[string]any{"icon": "1f4d4", "cover": "/assets/cover.png"}, "validateOnly": true},
	Validate: parseSetAttr,
	Scope:    tools.Scope[setAttrArgs]{Touches: func(a setAttrArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelWrite)} }},
	Targets:  func(a setAttrArgs) []string { return []string{a.ID} },
	State: func(ctx context.Context, env *tools.Env, a setAttrArgs) (DocState, error) {
		return readDocState(ctx, env, a.ID, false)
	},
	Check: func(_ setAttrArgs, st DocState) error { return checkDoc(st.docLoc, "id") },
	Execute: func(ctx context.Context, env *tools.Env, a setAttrArgs, _ DocState) (tools.Payload, error) {
		if err := setDocAttrs(ctx, env, a.ID, a.Attrs); err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		out := tools.Payload{"id": a.ID}
		if icon, ok := a.Attrs["icon"]; ok {
			out["icon"] = icon
		}
		if a.Cleared {
			out["clearedCover"] = true
		} else if a.Cover != "" {
			out["cover"], out["titleImg"] = a.Cover, a.Attrs["title-img"]
		}
		return out, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a setAttrArgs, p tools.Payload) (any, error) {
		// The transaction is queued: flush it before reading.
		if err := env.Kernel.FlushTransaction(ctx); err != nil {
			return nil, err
		}
		return tools.Await(ctx, func(ctx context.Context) (DocState, error) { return readDocState(ctx, env, a.ID, false) },
			func(st DocState) error {
				if st.Block == nil {
					return fmt.Errorf("document %s is gone", a.ID)
				}
				for k, want := range a.Attrs {
					if got := st.Block.Attrs[k]; got != want {
						return fmt.Errorf("document %s reads back %s=%q, want %q", a.ID, k, got, want)
					}
				}
				return nil
			})
	},
}

// setDocAttrs sets a document's attributes as SiYuan's editor sets them:
// one setAttrs transaction (queued: flush before reading them back).
func setDocAttrs(ctx context.Context, env *tools.Env, id string, attrs map[string]string) error {
	data, err := json.Marshal(attrs)
	if err != nil {
		return fmt.Errorf("encode attributes: %w", err)
	}
	tx := siyuan.Transaction{DoOperations: []siyuan.Operation{{Action: "setAttrs", ID: id, Data: string(data)}}, UndoOperations: []siyuan.Operation{}}
	_, err = env.Kernel.Transactions(ctx, []siyuan.Transaction{tx})
	return err
}
