package tplguard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/sisyphus-go/sisyphus/internal/failure"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// CheckTemplatePath refuses a notebook's dailyNoteTemplatePath that does
// not name a file inside data/templates: SiYuan joins it to that folder
// and reads the result, so ".." segments would render (and put into the
// daily note, for the agent to read) any .md file of the machine.
func CheckTemplatePath(field, p string) error {
	if strings.ContainsFunc(p, unicode.IsControl) || strings.Contains(p, `\`) {
		return failure.Invalid("%s holds control characters or a backslash: it must name a template under data/templates, like daily.md", field).Attempted(false)
	}
	for _, seg := range strings.Split(strings.Trim(strings.TrimSpace(p), "/"), "/") {
		if seg == ".." || seg == "." {
			return failure.Invalid("%s %q climbs out of data/templates: it must name a template there, like daily.md or journal/day.md", field, p).Attempted(false)
		}
	}
	return nil
}

// CheckDailyNote refuses a daily-note write whose note SiYuan would
// render from templates an agent may not have rendered: the notebook's
// dailyNoteSavePath (sprig text: pure functions only, as CheckPure) and
// the template file at dailyNoteTemplatePath (under the call's policy, as
// Check; a file that does not exist is skipped, as SiYuan skips it). The
// note is only rendered when it does not exist yet; the check does not
// depend on that.
func CheckDailyNote(ctx context.Context, env *tools.Env, savePath, templatePath string) error {
	if err := CheckPure(savePath, Sprig); err != nil {
		return failure.Prefixed(err, "the notebook's dailyNoteSavePath: ")
	}
	if strings.TrimSpace(templatePath) == "" {
		return nil
	}
	if err := CheckTemplatePath("the notebook's dailyNoteTemplatePath", templatePath); err != nil {
		return err
	}
	body, _, err := env.Kernel.GetFile(ctx, "/data/templates/"+strings.TrimLeft(templatePath, "/"))
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	defer body.Close()
	src, err := io.ReadAll(io.LimitReader(body, int64(env.TemplateBytes())+1))
	if err != nil {
		return fmt.Errorf("read the daily-note template %s: %w", templatePath, err)
	}
	if len(src) > env.TemplateBytes() {
		return failure.Invalid("the daily-note template %s is larger than the template budget (%d bytes); nothing was written", templatePath, env.TemplateBytes()).Attempted(false)
	}
	if err := Check(ctx, string(src), File); err != nil {
		return failure.Prefixed(err, "the daily-note template "+templatePath+": ")
	}
	return nil
}
