package timeline

import (
	"testing"
)

// comparisonOf is a comparison of sides made of paragraphs.
func comparisonOf(t *testing.T, oldParas, curParas []string) comparison {
	t.Helper()
	old, err := sideFromDOM(domOf(t, sy(t, oldParas...)))
	if err != nil {
		t.Fatal(err)
	}
	cur, err := sideFromSY(sy(t, curParas...))
	if err != nil {
		t.Fatal(err)
	}
	return comparison{Doc: docRef{ID: testDoc}, Node: snapshot{ID: "s", Tag: "sisyphustimeline_" + testDoc + "_n"}, FileID: "f", Changes: diffSides(old, cur), current: cur}
}

func TestAnswerPages(t *testing.T) {
	c := comparisonOf(t, []string{id(1) + ":a", id(2) + ":b", id(3) + ":c"}, []string{id(1) + ":A", id(2) + ":B", id(3) + ":C"})
	args := compareArgs{DocumentID: testDoc, Tag: c.Node.Tag, Page: 1, PageSize: 2}
	p1, err := answerOf(args, c)
	if err != nil || p1["hasMore"] != true || len(p1["changes"].([]change)) != 2 || p1["nextCursor"] == nil {
		t.Fatalf("page 1: %v %v", p1, err)
	}
	args.Cursor = p1["nextCursor"].(string)
	p2, err := answerOf(args, c)
	if err != nil || p2["hasMore"] != false || len(p2["changes"].([]change)) != 1 || p2["nextCursor"] != nil {
		t.Fatalf("page 2: %v %v", p2, err)
	}
	// The cursor pages this comparison only.
	other := args
	other.IncludeUnchanged = true
	if _, err := answerOf(other, c); codeOf(err) != "invalid_arguments" {
		t.Errorf("a cursor of another comparison: %v", err)
	}
	changed := comparisonOf(t, []string{id(1) + ":a", id(2) + ":b", id(3) + ":c"}, []string{id(1) + ":A", id(2) + ":B", id(3) + ":C!"})
	if _, err := answerOf(args, changed); codeOf(err) != "invalid_arguments" {
		t.Errorf("a cursor after the document changed: %v", err)
	}
	args.Cursor = "c1.e30.0000000000000000"
	if _, err := answerOf(args, c); codeOf(err) != "invalid_arguments" {
		t.Errorf("an edited cursor: %v", err)
	}
}

func TestVerifyBlock(t *testing.T) {
	after, _ := sideFromSY(sy(t, id(1)+":a", id(2)+":b", id(3)+":c"))
	old := func(n int, text string) *docBlock {
		s, _ := sideFromSY(sy(t, id(n)+":"+text))
		return &s.Blocks[0]
	}
	for _, c := range []struct {
		name string
		want blockState
		ok   bool
	}{
		{"modified, as in the node", blockState{Status: statusModified, Old: old(2, "b"), Current: old(2, "B")}, true},
		{"modified, still different", blockState{Status: statusModified, Old: old(2, "x"), Current: old(2, "B")}, false},
		{"removed, back after its neighbour", blockState{Status: statusRemoved, Old: old(2, "b"), PreviousID: id(1)}, true},
		{"removed, elsewhere", blockState{Status: statusRemoved, Old: old(2, "b"), PreviousID: id(3)}, false},
		{"removed, before its neighbour", blockState{Status: statusRemoved, Old: old(1, "a"), NextID: id(2)}, true},
		{"added, gone", blockState{Status: statusAdded, Current: old(4, "d")}, true},
		{"added, still there", blockState{Status: statusAdded, Current: old(3, "c")}, false},
	} {
		if err := verifyBlock(after, c.want); (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
