package embedded

// /api/filetree/searchDocs: model.SearchDocs of SiYuan 3.7.3 without
// flashcards. Documents come from the (lagging) SQL index.

import (
	"context"
	"sort"
	"strings"
)

// searchDocsLimit is Conf.Search.Limit's default.
const searchDocsLimit = 64

type searchDocHit struct {
	data  map[string]string
	exact bool
}

func likePattern(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}

func (k *Kernel) searchDocs(ctx context.Context, a args) (any, error) {
	keyword, ok := a["k"].(string)
	if !ok {
		return nil, &apiError{code: 0} // SiYuan's unchecked assertion panics into code 0
	}
	flashcard, err := a.optBool("flashcard")
	if err != nil {
		return nil, err
	}
	excludeIDs, err := a.strListOpt("excludeIDs")
	if err != nil {
		return nil, err
	}
	ret := []map[string]string{}
	if flashcard {
		return ret, nil // this kernel keeps no flashcard decks: SiYuan answers [] without its built-in deck
	}
	ids, confs, err := k.boxIDs()
	if err != nil {
		return nil, err
	}
	boxes := map[string]bool{}
	var hits []searchDocHit
	keyword = strings.TrimSpace(keyword)
	keywords := strings.Fields(keyword)
	var rows []map[string]any
	switch {
	case validID(keyword):
		rows, err = k.sql.queryArgs(ctx, "SELECT * FROM blocks WHERE type = 'd' AND id = ? LIMIT 1", keyword)
	case len(keywords) > 0:
		var cond strings.Builder
		var qargs []any
		for i, kw := range keywords {
			p := "%" + likePattern(kw) + "%"
			cond.WriteString(`(hpath LIKE ? ESCAPE '\' OR name LIKE ? ESCAPE '\' OR alias LIKE ? ESCAPE '\' OR memo LIKE ? ESCAPE '\')`)
			qargs = append(qargs, p, p, p, p)
			if i < len(keywords)-1 {
				cond.WriteString(" AND ")
			}
		}
		for _, ex := range excludeIDs {
			cond.WriteString(` AND path NOT LIKE ? ESCAPE '\'`)
			qargs = append(qargs, "%"+likePattern(ex)+"%")
		}
		qargs = append(qargs, likePattern(keyword), searchDocsLimit)
		rows, err = k.sql.queryArgs(ctx, "SELECT *, length(hpath) - length(replace(hpath, '/', '')) AS lv FROM blocks WHERE type = 'd' AND "+
			cond.String()+` ORDER BY CASE WHEN content LIKE ? ESCAPE '\' THEN 0 ELSE 1 END ASC, box DESC, lv ASC LIMIT ?`, qargs...)
	}
	if err != nil {
		return nil, err
	}
	lower := strings.ToLower
	for _, id := range ids {
		c := confs[id]
		if c.Closed {
			continue
		}
		boxes[id] = true
		if validID(keyword) {
			continue
		}
		match := len(keywords) == 0
		for _, kw := range keywords {
			match = match || strings.Contains(lower(c.Name), lower(kw))
		}
		if match {
			hits = append(hits, searchDocHit{data: map[string]string{"path": "/", "hPath": c.Name + "/", "box": id, "boxIcon": c.Icon},
				exact: len(keywords) > 0 && strings.EqualFold(c.Name, keyword)})
		}
	}
	for _, r := range rows {
		box := str(r["box"])
		if !boxes[box] {
			continue
		}
		hits = append(hits, searchDocHit{data: map[string]string{"path": str(r["path"]), "hPath": confs[box].Name + str(r["hpath"]),
			"box": box, "boxIcon": confs[box].Icon}, exact: strings.EqualFold(str(r["content"]), keyword)})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].exact != hits[j].exact {
			return hits[i].exact
		}
		return hits[i].data["hPath"] < hits[j].data["hPath"]
	})
	for _, h := range hits {
		ret = append(ret, h.data)
	}
	return ret, nil
}

// queryArgs runs a parameterised read of the index.
func (s *sqlIndex) queryArgs(ctx context.Context, stmt string, args ...any) ([]map[string]any, error) {
	rows, err := s.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	return sqlCollect(rows, -1)
}
