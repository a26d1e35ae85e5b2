package file

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
	"github.com/sisyphus-go/sisyphus/internal/tools/kernelview"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplfile"
	"github.com/sisyphus-go/sisyphus/internal/tools/tplguard"
)

// templateName checks a name for save_doc_as_template as SiYuan would keep
// it: the kernel silently replaces \ / : * ? " ' < > | with "_", so a name
// holding them would land at another path than the one the preflight
// guarded.
func templateName(name string) error {
	switch {
	case name == "" || strings.TrimSpace(name) != name:
		return failure.Invalid("name must be a template name without leading or trailing spaces, like weekly-review; got %q", name)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return failure.Invalid("name holds control characters or invalid UTF-8")
	case strings.ContainsAny(name, `\/:*?"'<>|`):
		return failure.Invalid("name %q holds a character SiYuan replaces in file names (\\ / : * ? \" ' < > |); choose a name without them", name)
	case strings.HasPrefix(name, "."):
		return failure.Invalid("name %q starts with a dot: SiYuan would not list it as a template", name)
	case len(name) > 180:
		return failure.Invalid("name is %d bytes; a template name may have at most 180", len(name))
	}
	return nil
}

type saveArgs struct {
	ID        string `arg:"id" help:"the document or block to save" id:"" required:""`
	Name      string `arg:"name" help:"the template's name, without .md" required:""`
	Overwrite bool   `arg:"overwrite" help:"replace a template of that name" default:"false"`
}

// saveState guards a save: the destination template and the block saved.
type saveState struct {
	Template templateState         `json:"template"`
	Block    kernelview.BlockState `json:"block"`
}

var saveDocAsTemplate = tools.Write[saveArgs, saveState]{
	Name: "save_doc_as_template",
	Summary: "save a document (or a block with its children) as the template data/templates/<name>.md; refused if it exists unless overwrite:true; " +
		"guarded by the document's and the destination's state",
	Policy:   guarded,
	Example:  map[string]any{"id": "20260812120000-docdocd", "name": "weekly-review", "validateOnly": true},
	Validate: func(a *saveArgs) error { return templateName(a.Name) },
	Scope:    tools.Scope[saveArgs]{Touches: func(a saveArgs) []tools.Touch { return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)} }},
	Targets:  func(a saveArgs) []string { return []string{a.ID, destOf(a)} },
	State: func(ctx context.Context, env *tools.Env, a saveArgs) (saveState, error) {
		return readSaveState(ctx, env, a)
	},
	Check: func(a saveArgs, st saveState) error {
		if st.Block.Missing {
			return failure.Missing("block", a.ID)
		}
		if st.Template.Exists && !a.Overwrite {
			return failure.Invalid("the template %s exists; nothing was written: pass overwrite:true to replace it", destOf(a))
		}
		return nil
	},
	Execute: func(ctx context.Context, env *tools.Env, a saveArgs, _ saveState) (tools.Payload, error) {
		err := env.Kernel.DocSaveAsTemplate(ctx, a.ID, a.Name, a.Overwrite)
		if errors.Is(err, siyuan.ErrTemplateExists) {
			// The kernel refused before writing: the template appeared
			// after the commit read the state.
			return nil, tools.Refuse(failure.Invalid("the template %s appeared meanwhile; nothing was written", destOf(a)))
		}
		if err != nil {
			return nil, tools.WriteFailure(err, false)
		}
		return tools.Payload{"id": a.ID, "path": destOf(a)}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a saveArgs, p tools.Payload) (any, error) {
		st, err := readSaveState(ctx, env, a)
		if err != nil {
			return nil, err
		}
		if !st.Template.Exists || st.Template.Size == 0 {
			return nil, fmt.Errorf("the template %s is not there after the save", destOf(a))
		}
		p["sha256"], p["size"] = st.Template.SHA256, st.Template.Size
		return st, nil
	},
}

func destOf(a saveArgs) string { return "templates/" + a.Name + ".md" }

func readSaveState(ctx context.Context, env *tools.Env, a saveArgs) (saveState, error) {
	var st saveState
	b, err := kernelview.ReadBlockState(ctx, env, a.ID)
	if err != nil {
		return st, err
	}
	t, err := readTemplateState(ctx, env, destOf(a))
	if err != nil {
		return st, err
	}
	st.Block, st.Template = b, t
	return st, nil
}

type renderArgs struct {
	Engine   string `arg:"engine" help:"template or sprig" enum:"template,sprig" default:"template"`
	ID       string `arg:"id" help:"engine=template: the block or document the template is rendered for (.id, .title)" id:""`
	Given    string `arg:"path" help:"engine=template: the template, relative to data/templates (daily.md)"`
	Preview  bool   `arg:"preview" help:"engine=template: render databases as tables instead of copying them (false lets SiYuan copy a database the template embeds)" default:"true"`
	Template string `arg:"template" help:"engine=sprig: the template text"`
	Path     string // Given, checked
}

var render = tools.Read[renderArgs]{
	// A render may copy a database (preview:false) and runs the template's
	// SQL: it waits for the gate's decision.
	SideEffects: true,
	Name:        "render",
	Summary: "render a template: engine=template renders a template file (path) for a block (id) as block DOM, ready to insert; " +
		"engine=sprig renders a Go template string ({{ }}) as text. Refused: a function SiYuan's templates lack, env/expandenv/getHostByName, " +
		"SQL helpers that could write, and while a notebook is hidden every helper reading the index (querySQL, queryBlocks, querySpans, getBlock, getHPathByID, statBlock)",
	Example:  map[string]any{"engine": "template", "id": "20260812120000-docdocd", "path": "daily.md"},
	Validate: parseRender,
	Scope: tools.Scope[renderArgs]{Touches: func(a renderArgs) []tools.Touch {
		if a.Engine == "template" {
			return []tools.Touch{tools.OnBlock(a.ID, tools.LevelRead)}
		}
		return nil
	}},
	Run: func(ctx context.Context, env *tools.Env, a renderArgs) (any, error) {
		if a.Engine == "sprig" {
			if err := tplguard.Check(ctx, a.Template, tplguard.Sprig); err != nil {
				return nil, err
			}
			out, err := env.Kernel.RenderSprig(ctx, a.Template)
			if err != nil {
				return nil, err
			}
			return map[string]any{"engine": "sprig", "content": out}, nil
		}
		src, err := tplfile.Read(ctx, env, a.Path)
		if err != nil {
			return nil, err
		}
		if err := tplguard.Check(ctx, src, tplguard.File); err != nil {
			return nil, err
		}
		if err := tplfile.CheckRefs(ctx, env, src); err != nil {
			return nil, err
		}
		abs, err := tplfile.Locate(ctx, env, a.Path)
		if err != nil {
			return nil, err
		}
		dom, err := tplfile.Render(ctx, env, a.ID, a.Path, abs, src, a.Preview)
		if treeMissing(err) {
			return nil, failure.Missing("block", a.ID)
		}
		if err != nil {
			return nil, err
		}
		// A reference the template built while rendering is checked too.
		if err := tplfile.CheckRefs(ctx, env, dom); err != nil {
			return nil, err
		}
		return map[string]any{"engine": "template", "id": a.ID, "path": a.Path, "dataType": "dom", "content": dom}, nil
	},
}

func parseRender(r *renderArgs) error {
	switch r.Engine {
	case "sprig":
		if r.Template == "" {
			return failure.Invalid("engine=sprig needs template, the text to render")
		}
		if r.Given != "" || r.ID != "" {
			return failure.Invalid("engine=sprig renders template text only; id and path are for engine=template")
		}
		return nil
	case "template":
		if r.Template != "" {
			return failure.Invalid("engine=template renders a template file (path); pass template text with engine=sprig")
		}
		// id is declared optional (engine=sprig takes none) and is
		// required here: "" is refused as the malformed id it is.
		if err := tools.CheckID("id", r.ID); err != nil {
			return err
		}
		var err error
		r.Path, err = templatePath("path", r.Given)
		return err
	}
	return failure.Invalid("engine must be template or sprig; got %q", r.Engine)
}
