package search

import (
	"context"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/sisyphus-go/sisyphus/internal/tools"
)

// The name/alias namespace: blocks with a name or alias attribute are
// anchors an agent can address exactly. knowledge resolves a query against
// it before anything semantic; check_anchor audits new tokens against it.

// namespaceLimit bounds the namespace scan; a scan that reaches it cannot
// prove a token free.
const namespaceLimit = 10000

// normToken is upstream's anchor normalisation: NFKC, trimmed, lower case.
func normToken(s string) string { return strings.ToLower(strings.TrimSpace(norm.NFKC.String(s))) }

// splitTokens splits an alias list (commas, or the Chinese comma) into
// normalised tokens.
func splitTokens(s string) []string {
	var out []string
	for _, p := range strings.Split(strings.ReplaceAll(s, "，", ","), ",") {
		if t := normToken(p); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// anchorRow is one block of the namespace.
type anchorRow struct {
	ID, RootID, Box, Path, HPath, Type, SubType, Name, Alias, Content, Updated string
}

// matches says whether token is the row's name or one of its aliases.
func (r anchorRow) matches(token string) (name, alias bool) {
	name = normToken(r.Name) == token
	for _, a := range splitTokens(r.Alias) {
		if a == token {
			alias = true
		}
	}
	return name, alias
}

func rowString(r map[string]any, key string) string {
	switch v := r[key].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

func sqlQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func sqlList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = sqlQuote(id)
	}
	return strings.Join(q, ", ")
}

// loadNamespace reads every named or aliased block of the visible notebooks.
// complete is false when the scan reached its limit.
func loadNamespace(ctx context.Context, env *tools.Env) (rows []anchorRow, complete bool, err error) {
	raw, err := env.Kernel.QuerySQL(ctx, "SELECT id, root_id, box, path, hpath, type, subtype, name, alias, content, updated FROM blocks "+
		"WHERE COALESCE(name, '') != '' OR COALESCE(alias, '') != '' LIMIT "+strconv.Itoa(namespaceLimit))
	if err != nil {
		return nil, false, err
	}
	seen := map[string]bool{}
	for _, r := range raw {
		row := anchorRow{ID: rowString(r, "id"), RootID: rowString(r, "root_id"), Box: rowString(r, "box"), Path: rowString(r, "path"),
			HPath: rowString(r, "hpath"), Type: rowString(r, "type"), SubType: rowString(r, "subtype"), Name: rowString(r, "name"),
			Alias: rowString(r, "alias"), Content: rowString(r, "content"), Updated: rowString(r, "updated")}
		if row.ID == "" || seen[row.ID] || !tools.Visible(ctx, row.Box) {
			// Hidden notebooks are no part of the namespace an agent
			// sees; a row the index briefly holds twice counts once.
			continue
		}
		seen[row.ID] = true
		rows = append(rows, row)
	}
	return rows, len(raw) < namespaceLimit, nil
}

// loadScopes reads the custom-anchor-scope attribute of ids, split into
// normalised scope tokens.
func loadScopes(ctx context.Context, env *tools.Env, ids []string) (map[string][]string, error) {
	out := map[string][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	raw, err := env.Kernel.QuerySQL(ctx, "SELECT block_id, value FROM attributes WHERE name = 'custom-anchor-scope' AND block_id IN ("+
		sqlList(ids)+") LIMIT "+strconv.Itoa(namespaceLimit))
	if err != nil {
		return nil, err
	}
	for _, r := range raw {
		out[rowString(r, "block_id")] = splitTokens(rowString(r, "value"))
	}
	return out, nil
}

// intersects says whether any of scopes is active.
func intersects(scopes []string, active map[string]bool) bool {
	for _, s := range scopes {
		if active[s] {
			return true
		}
	}
	return false
}

// tokenSet normalises and splits every value into a set.
func tokenSet(values []string) map[string]bool {
	set := map[string]bool{}
	for _, v := range values {
		for _, t := range splitTokens(v) {
			set[t] = true
		}
	}
	return set
}
