package contract

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

var assetContentChecks = []check{
	{"search_asset_content_text_files", checkAssetContent},
	{"search_asset_content_removed_file_stays", checkAssetContentRemoved},
}

// checkAssetContentRemoved: an asset removed through the file API stays in
// the content index (SiYuan's watcher ignores the removal of a file that
// no longer exists), pointing at a file that is gone.
func checkAssetContentRemoved(t *testing.T, s *suite) {
	word := "tapir" + randWord(6)
	name := s.globalAsset("removed") + ".txt"
	p := s.upload(t, "/assets/", name, []byte("a "+word+"\n"))
	s.eventually(t, "asset content indexed", func() bool {
		res, err := s.c.FullTextSearchAssetContent(t.Context(), siyuan.AssetContentRequest{Query: word})
		must(t, "FullTextSearchAssetContent", err)
		return len(res.AssetContents) == 1
	})
	must(t, "RemoveFile", s.c.RemoveFile(t.Context(), "/data/"+p))
	time.Sleep(500 * time.Millisecond) // past the watcher's batching
	res, err := s.c.FullTextSearchAssetContent(t.Context(), siyuan.AssetContentRequest{Query: word})
	must(t, "FullTextSearchAssetContent", err)
	if len(res.AssetContents) != 1 || res.AssetContents[0].Path != p {
		t.Fatalf("after the removal: %+v, want the stale entry", res)
	}
}

// checkAssetContent: a text asset in data/assets is found by a word of its
// content (keyword, regex), filtered by extension, and read back by the id
// the search answered, highlighted, newlines as <br>.
func checkAssetContent(t *testing.T, s *suite) {
	word := "okapi" + randWord(6)
	name := s.globalAsset("content") + ".txt"
	body := "first line\nthe " + word + " lives here\n"
	p := s.upload(t, "/assets/", name, []byte(body))
	s.removeLater(t, p)
	var hit siyuan.AssetContent
	s.eventually(t, "asset content indexed", func() bool {
		res, err := s.c.FullTextSearchAssetContent(t.Context(), siyuan.AssetContentRequest{Query: word})
		must(t, "FullTextSearchAssetContent", err)
		if len(res.AssetContents) != 1 || res.MatchedAssetCount != 1 || res.PageCount != 1 {
			return false
		}
		hit = res.AssetContents[0]
		return true
	})
	if hit.Name != name || hit.Ext != ".txt" || hit.Path != p || hit.Size != int64(len(body)) || hit.HSize != strconv.Itoa(len(body))+" B" ||
		hit.Updated < 1700000000 || !nodeIDRe.MatchString(hit.ID) {
		t.Errorf("hit %+v", hit)
	}
	if want := "first line\nthe <mark>" + word + "</mark> lives here\n"; hit.Content != want {
		t.Errorf("content %q, want %q", hit.Content, want)
	}
	rx, err := s.c.FullTextSearchAssetContent(t.Context(), siyuan.AssetContentRequest{Query: word + " lives", Method: 3, Types: map[string]bool{".txt": true}})
	must(t, "FullTextSearchAssetContent regex", err)
	if len(rx.AssetContents) != 1 || rx.AssetContents[0].ID != hit.ID || strings.Contains(rx.AssetContents[0].Content, "<mark>") {
		t.Errorf("regex: %+v (a regex hit is not highlighted)", rx)
	}
	md, err := s.c.FullTextSearchAssetContent(t.Context(), siyuan.AssetContentRequest{Query: word, Types: map[string]bool{".md": true}})
	must(t, "FullTextSearchAssetContent types", err)
	if len(md.AssetContents) != 0 || md.MatchedAssetCount != 0 {
		t.Errorf("an extension filter that excludes it: %+v", md)
	}
	one, err := s.c.GetAssetContent(t.Context(), hit.ID, word, 0)
	must(t, "GetAssetContent", err)
	if one == nil || one.Content != "first line<br>the <mark>"+word+"</mark> lives here<br>" {
		t.Errorf("GetAssetContent: %+v", one)
	}
	none, err := s.c.GetAssetContent(t.Context(), hit.ID, "absent"+word, 0)
	must(t, "GetAssetContent no match", err)
	if none != nil {
		t.Errorf("GetAssetContent with a query that does not match: %+v", none)
	}
}
