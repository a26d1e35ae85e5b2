package file

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/strict"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

type uploadArgs struct {
	LocalPath    string `arg:"localFilePath" help:"a file on the person's computer, read by the stdio or sisyphus call process they run, only inside the folders they allowed (--allow-dir; sisyphus call: its working directory), never in the workspace, the state dir or a hidden folder; relative to that process's working directory; the person confirms the read, with the file named. The authority itself refuses it (local_path_refused): a direct HTTP client stages the file (POST /transfer/upload) and passes uploadSource"`
	File         string `arg:"file" help:"the same as localFilePath (upstream's alias)"`
	UploadSource string `arg:"uploadSource" help:"a handle from POST /transfer/upload or from this action's preflight; a replay needs no local file"`
	AssetsDir    string `arg:"assetsDirPath" help:"where under assets/ to store it" default:"/assets/"`
	ConfirmLarge bool   `arg:"confirmLargeFile" help:"true only after the person agreed to upload a file above the large-file threshold" default:"false"`
	Dir          string // "/assets/..." with a trailing slash, from AssetsDir
}

// uploadState is what an upload is guarded by: the source's digest (and
// the directory it goes to); after the upload, the stored asset too.
type uploadState struct {
	Source struct {
		Name   string `json:"name"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
	} `json:"source"`
	Dir   string `json:"dir"`
	Asset string `json:"asset,omitempty"`

	handle string // the staged source's handle, for the preflight's answer
	src    tools.Source
	limit  int64 // the large-file threshold the call runs under
}

// DefaultLargeFile is upstream's large-upload threshold: above it an upload
// needs confirmLargeFile:true, after the person said yes.
const DefaultLargeFile = 10 << 20

// uploaded is what uploadAsset hands its readback, typed rather than read
// back from the payload's "assetPath", "fileName" and "sha256": where the
// kernel stored the file and what was sent.
type uploaded struct {
	Stored, Name, SHA256 string
}

var uploadAsset = tools.WriteWith[uploadArgs, uploadState, uploaded]{Write: tools.Write[uploadArgs, uploadState]{
	Name: "upload_asset",
	Summary: "upload a file of the person's computer (localFilePath, through stdio or sisyphus call, from a folder the person allowed) or a staged one " +
		"(uploadSource) into the assets directory; the answer names the stored asset (link it in a block as ![](assets/...)); " +
		"above the large-file threshold (10 MiB unless configured) it needs confirmLargeFile:true after the person agreed",
	Policy:    strict.WritePolicy{Class: strict.Mutation, Precondition: strict.ExpectedSourceHash},
	Dangerous: true,
	Example:   map[string]any{"localFilePath": "/home/me/Pictures/diagram.png", "assetsDirPath": "/assets/", "validateOnly": true},
	Validate:  parseUpload,
	// Assets belong to the workspace, not to a notebook.
	Scope:   tools.Scope[uploadArgs]{None: true},
	Targets: func(a uploadArgs) []string { return []string{"asset-upload:" + a.Dir} },
	State:   readUpload,
	Check: func(a uploadArgs, st uploadState) error {
		limit := st.limit
		if st.Source.Size > limit && !a.ConfirmLarge {
			e := failure.New(failure.ConfirmationRequired, "the file is %d bytes, above the large-file threshold of %d; nothing was uploaded", st.Source.Size, limit).
				With("reason", string(failure.FileTooLarge)).With("fileSizeBytes", st.Source.Size).With("thresholdBytes", limit)
			e.Action = "ask the person whether to upload a file this large; only after they agree, call again with confirmLargeFile:true"
			return e.Attempted(false)
		}
		return nil
	},
	Notes: func(_ uploadArgs, st uploadState) map[string]any {
		out := map[string]any{"fileName": st.Source.Name, "sha256": st.Source.SHA256, "size": st.Source.Size}
		if st.handle != "" {
			out["uploadSource"] = st.handle
			out["replayHint"] = "the commit may send this uploadSource instead of the local file; a replay needs no local file"
		}
		return out
	},
	LocalPaths:   []string{"localFilePath", "file"},
	LocalEffects: uploadEffects,
	Front:        stageAtFront,
},
	Execute: func(ctx context.Context, env *tools.Env, a uploadArgs, st uploadState) (tools.Payload, uploaded, error) {
		body, err := st.src.Open()
		if err != nil {
			return nil, uploaded{}, tools.Refuse(failure.Wrap(failure.NotFound, err, "the upload source can no longer be read; nothing was uploaded"))
		}
		defer body.Close()
		res, err := env.Kernel.UploadAsset(ctx, siyuan.AssetUploadRequest{AssetsDirPath: a.Dir, Files: []siyuan.UploadFile{{Name: st.Source.Name, Body: body}}})
		if err != nil {
			return nil, uploaded{}, tools.WriteFailure(err, false)
		}
		stored := res.SuccMap[st.Source.Name]
		if len(res.ErrFiles) > 0 || stored == "" {
			return nil, uploaded{}, tools.WriteFailure(fmt.Errorf("the kernel did not store %s (errFiles %v)", st.Source.Name, res.ErrFiles), true)
		}
		p := tools.Payload{"assetPath": stored, "fileName": st.Source.Name, "sha256": st.Source.SHA256, "size": st.Source.Size,
			"markdown": imageMarkdown(st.Source.Name, stored)}
		if st.handle != "" {
			p["uploadSource"] = st.handle
		}
		return p, uploaded{stored, st.Source.Name, st.Source.SHA256}, nil
	},
	Readback: func(ctx context.Context, env *tools.Env, a uploadArgs, _ tools.Payload, d uploaded) (any, error) {
		stored := d.Stored
		sum, size, err := digestFile(ctx, env.Kernel, workspace(stored))
		if err != nil {
			return nil, fmt.Errorf("the stored asset %s cannot be read back: %w", stored, err)
		}
		if want := d.SHA256; sum != want {
			return nil, fmt.Errorf("the stored asset %s reads back sha256 %s, not the source's %s", stored, sum, want)
		}
		var st uploadState
		st.Source.Name = d.Name
		st.Source.SHA256, st.Source.Size = sum, size
		st.Dir, st.Asset = a.Dir, stored
		return st, nil
	},
}

func parseUpload(u *uploadArgs) error {
	if alias := u.File; alias != "" {
		if u.LocalPath != "" && u.LocalPath != alias {
			return failure.Invalid("localFilePath and file name different files; pass one")
		}
		u.LocalPath = alias
	}
	if (u.LocalPath == "") == (u.UploadSource == "") {
		return failure.Invalid("pass exactly one of localFilePath (or file) and uploadSource")
	}
	var err error
	u.Dir, err = assetDir(u.AssetsDir)
	return err
}

// assetDir normalises an assets directory to "/assets/.../".
func assetDir(p string) (string, error) {
	s := strings.TrimSpace(strings.ReplaceAll(p, "\\", "/"))
	s = strings.Trim(strings.TrimPrefix(strings.TrimLeft(s, "/"), "data/"), "/")
	if s == "" {
		s = "assets"
	}
	if s != "assets" && !strings.HasPrefix(s, "assets/") {
		return "", failure.Invalid("assetsDirPath must be under assets/ (like /assets/ or /assets/diagrams/); got %q", p)
	}
	if err := cleanRel("assetsDirPath", p, s); err != nil {
		return "", err
	}
	return "/" + s + "/", nil
}

// readUpload resolves the staged source on the authority. It never opens a
// path: the registry refuses a local path before this runs, and a front
// has replaced it with the handle of what it staged.
func readUpload(ctx context.Context, env *tools.Env, a uploadArgs) (uploadState, error) {
	var st uploadState
	st.Dir, st.limit = a.Dir, DefaultLargeFile
	if p := tools.PolicyFrom(ctx); p != nil && p.LargeUpload > 0 {
		st.limit = p.LargeUpload
	}
	if env.Sources == nil {
		return st, fmt.Errorf("this process keeps no upload sources")
	}
	if a.UploadSource == "" {
		return st, failure.New(failure.LocalPathRefused, "localFilePath names a path on a computer, and the authority never opens a path a call names; nothing was read or written").
			Attempted(false)
	}
	src, err := env.Sources.Staged(a.UploadSource)
	if err != nil {
		var fe *failure.Error
		if errors.As(err, &fe) && fe.Action == "" {
			fe.Action = "stage the file again (upload_asset with localFilePath through stdio or sisyphus call, or POST /transfer/upload), then preflight again"
		}
		return st, err
	}
	st.src, st.handle = src, src.Handle
	st.Source.Name, st.Source.SHA256, st.Source.Size = src.Name, src.SHA256, src.Size
	return st, nil
}

// localOf is the local file a call names (localFilePath, or its alias
// file), "" when none.
func localOf(fields map[string]json.RawMessage) string {
	var local string
	for _, k := range []string{"localFilePath", "file"} {
		var s string
		if json.Unmarshal(fields[k], &s) == nil && s != "" {
			local = s
		}
	}
	return local
}

// uploadEffects, at a front: the call reads the person's file, which the
// rule of the front's allowed folders must accept.
func uploadEffects(ctx context.Context, env *tools.Env, fields map[string]json.RawMessage) ([]string, error) {
	local := localOf(fields)
	if local == "" {
		return nil, nil
	}
	f, err := env.LocalDisk().Inspect(ctx, local)
	if err != nil {
		return nil, err
	}
	return []string{fmt.Sprintf("reads the file %s (%d bytes) and sends it to the Sisyphus authority, to store it in the workspace's assets", f.Path, f.Size)}, nil
}

// stageAtFront stages the person's local file on the authority and sends
// its handle instead of the path. The stager opens the file under the
// front's folder rule; a file it refuses, or one above the staging cap,
// refuses the call: nothing uploads around either.
func stageAtFront(ctx context.Context, env *tools.Env, fields map[string]json.RawMessage) error {
	local := localOf(fields)
	if local == "" {
		return nil
	}
	if env.Stager == nil {
		return failure.New(failure.PathNotAllowed, "the local path %q cannot be used: this process stages no local file; nothing was read or written", local).Attempted(false)
	}
	handle, err := env.Stager.Stage(ctx, local)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(handle)
	fields["uploadSource"] = b
	delete(fields, "localFilePath")
	delete(fields, "file")
	return nil
}

// imageMarkdown links an uploaded asset as Markdown: a link destination
// may not hold spaces or unbalanced parentheses, so those are
// percent-encoded (SiYuan decodes them, as it does for its own links), and
// brackets in the alt text are escaped.
func imageMarkdown(name, asset string) string {
	alt := strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`).Replace(name)
	dest := strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E").Replace(asset)
	return "![" + alt + "](" + dest + ")"
}
