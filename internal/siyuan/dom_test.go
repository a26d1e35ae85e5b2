package siyuan

import (
	"os"
	"reflect"
	"regexp"
	"testing"
)

// testdata/lute_block_dom.html is Lute's block DOM (the engine SiYuan uses,
// same version) for markdown with a heading, a paragraph with inline HTML,
// nested task lists, a code block containing "<div>", an HTML block, a table,
// a blockquote, a math block and a super block. Lute marks top-level blocks
// with data-node-index, which gives an independent oracle.
func TestTopLevelNodeIDsOnLuteOutput(t *testing.T) {
	b, err := os.ReadFile("testdata/lute_block_dom.html")
	if err != nil {
		t.Fatal(err)
	}
	dom := string(b)
	var want []string
	for _, m := range regexp.MustCompile(`data-node-id="([^"]+)" data-node-index=`).FindAllStringSubmatch(dom, -1) {
		want = append(want, m[1])
	}
	if len(want) != 9 {
		t.Fatalf("fixture has %d top-level blocks, want 9", len(want))
	}
	if got := topLevelNodeIDs(dom); !reflect.DeepEqual(got, want) {
		t.Fatalf("topLevelNodeIDs\n got %v\nwant %v", got, want)
	}
}

const (
	idA = "20240101120000-aaaaaaa"
	idB = "20240101120000-bbbbbbb"
	idC = "20240101120000-ccccccc"
)

func TestTopLevelNodeIDs(t *testing.T) {
	tests := []struct {
		name string
		dom  string
		want []string
	}{
		{"empty", "", nil},
		{"one", `<div data-node-id="` + idA + `" class="p"><div contenteditable="true">x</div></div>`, []string{idA}},
		{"nested are skipped", `<div data-node-id="` + idA + `"><div data-node-id="` + idB + `"></div></div><div data-node-id="` + idC + `"></div>`,
			[]string{idA, idC}},
		{"quoted gt in attribute", `<div title="a > b" data-node-id="` + idA + `"></div><div data-node-id='` + idB + `'></div>`, []string{idA, idB}},
		{"comment with div", `<!-- <div data-node-id="` + idC + `"> --><div data-node-id="` + idA + `"></div>`, []string{idA}},
		{"not a div", `<span data-node-id="` + idA + `"></span><divx data-node-id="` + idB + `"></divx>`, nil},
		{"attribute name must stand alone", `<div xdata-node-id="` + idA + `"></div>`, nil},
		{"invalid id shape", `<div data-node-id="nope"></div><div data-node-id="` + idB + `"></div>`, []string{idB}},
		{"uppercase tags", `<DIV data-node-id="` + idA + `"></DIV><div data-node-id="` + idB + `"></div>`, []string{idA, idB}},
		{"unterminated", `<div data-node-id="` + idA + `"`, []string{idA}},
		{"stray closers", `</div></div><div data-node-id="` + idA + `"></div>`, []string{idA}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := topLevelNodeIDs(tt.dom); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestInsertedIDs(t *testing.T) {
	twoBlocks := `<div data-node-id="` + idA + `"></div><div data-node-id="` + idB + `"></div>`
	tests := []struct {
		name      string
		txs       []Transaction
		wantFirst string
		wantAll   []string
	}{
		{"none", nil, "", nil},
		{"insert with id and dom", []Transaction{{DoOperations: []Operation{{Action: "insert", ID: idA, Data: twoBlocks}}}},
			idA, []string{idA, idB}},
		{"insert that did not happen (empty op id)", []Transaction{{DoOperations: []Operation{{Action: "insert", Data: twoBlocks}}}},
			"", nil},
		{"id only", []Transaction{{DoOperations: []Operation{{Action: "insert", ID: idC}}}}, idC, []string{idC}},
		{"updateBlock on a document: deletes first", []Transaction{{DoOperations: []Operation{
			{Action: "delete", ID: idC, Data: map[string]any{"createEmptyParagraph": false}},
			{Action: "insert", ID: idA, Data: twoBlocks},
		}}}, idA, []string{idA, idB}},
		{"delete only", []Transaction{{DoOperations: []Operation{{Action: "delete", ID: idC}}}}, "", nil},
		{"batch: one transaction per block", []Transaction{
			{DoOperations: []Operation{{Action: "insert", ID: idA, Data: `<div data-node-id="` + idA + `"></div>`}}},
			{DoOperations: []Operation{{Action: "insert", ID: idC, Data: `<div data-node-id="` + idC + `"></div>`}}},
		}, idA, []string{idA, idC}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FirstInsertedID(tt.txs); got != tt.wantFirst {
				t.Errorf("FirstInsertedID = %q, want %q", got, tt.wantFirst)
			}
			if got := InsertedIDs(tt.txs); !reflect.DeepEqual(got, tt.wantAll) {
				t.Errorf("InsertedIDs = %v, want %v", got, tt.wantAll)
			}
		})
	}
}

func TestIsNodeID(t *testing.T) {
	for s, want := range map[string]bool{
		idA: true, "20240101120000-1a2b3c4": true,
		"20240101120000-AAAAAAA": false, "2024010112000-aaaaaaaa": false, "": false, "20240101120000_aaaaaaa": false,
	} {
		if isNodeID(s) != want {
			t.Errorf("isNodeID(%q) != %v", s, want)
		}
	}
}
