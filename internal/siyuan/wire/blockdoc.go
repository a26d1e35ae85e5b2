package wire

import "encoding/json"

// BlockPath is the kernel's model.BlockPath, one crumb of
// /api/block/getBlockBreadcrumb: the document first, then the headings and
// containers above the block, the block itself last (with an empty name).
type BlockPath struct {
	ID       string       `json:"id"`
	Name     string       `json:"name"`
	Type     string       `json:"type"`
	SubType  string       `json:"subType"`
	Children []*BlockPath `json:"children"`
}

// BlockStat is util.BlockStatResult, the "stat" of
// /api/block/getBlocksWordCount. Letters are counted without spaces.
type BlockStat struct {
	RuneCount  int `json:"runeCount"`
	WordCount  int `json:"wordCount"`
	LinkCount  int `json:"linkCount"`
	ImageCount int `json:"imageCount"`
	RefCount   int `json:"refCount"`
	BlockCount int `json:"blockCount"`
}

// WordCount is /api/block/getBlocksWordCount (a map in the kernel).
type WordCount struct {
	ReqID any       `json:"reqId"`
	Stat  BlockStat `json:"stat"`
}

// Block is the kernel's model.Block, as search (content carries <mark>
// highlights), the flashcard reads, /api/block/getRecentUpdatedBlocks (built
// from SQL rows: created and updated stay empty, the type is the full node
// type name) and the outline answer it.
type Block struct {
	Box        string            `json:"box"`
	Path       string            `json:"path"`
	HPath      string            `json:"hPath"`
	ID         string            `json:"id"`
	RootID     string            `json:"rootID"`
	ParentID   string            `json:"parentID"`
	Name       string            `json:"name"`
	Alias      string            `json:"alias"`
	Memo       string            `json:"memo"`
	Tag        string            `json:"tag"`
	Content    string            `json:"content"`
	FContent   string            `json:"fcontent"`
	Markdown   string            `json:"markdown"`
	Folded     bool              `json:"folded"`
	Type       string            `json:"type"`
	SubType    string            `json:"subType"`
	RefText    string            `json:"refText"`
	Refs       []*Block          `json:"refs"`
	DefID      string            `json:"defID"`
	DefPath    string            `json:"defPath"`
	IAL        map[string]string `json:"ial"`
	Children   []*Block          `json:"children"`
	Depth      int               `json:"depth"`
	Count      int               `json:"count"`
	RefCount   int               `json:"refCount"`
	Sort       int               `json:"sort"`
	Created    string            `json:"created"`
	Updated    string            `json:"updated"`
	RiffCardID string            `json:"riffCardID"`
	// RiffCard is the kernel's *RiffCard, kept opaque; nil encodes as the
	// kernel's null.
	RiffCard json.RawMessage `json:"riffCard"`
}

// DocSearchHit is one answer of /api/filetree/searchDocs (a map in the
// kernel): a document, or a notebook (path "/") whose name matches.
// HPath starts with the notebook's name.
type DocSearchHit struct {
	Box     string `json:"box"`
	BoxIcon string `json:"boxIcon"`
	HPath   string `json:"hPath"`
	Path    string `json:"path"`
}

// Doc is /api/filetree/getDoc (a map in the kernel) as mode 0 answers
// it: Content is the DOM of the block asked for (a document: its
// top-level blocks, up to the size asked), numbered from 0, each block
// with its reference count.
type Doc struct {
	ID               string   `json:"id"`
	Mode             int      `json:"mode"`
	ParentID         string   `json:"parentID"`
	Parent2ID        string   `json:"parent2ID"`
	RootID           string   `json:"rootID"`
	Type             string   `json:"type"`
	Content          string   `json:"content"`
	BlockCount       int      `json:"blockCount"`
	EOF              bool     `json:"eof"`
	Scroll           bool     `json:"scroll"`
	Box              string   `json:"box"`
	Path             string   `json:"path"`
	IsSyncing        bool     `json:"isSyncing"`
	IsBacklinkExpand bool     `json:"isBacklinkExpand"`
	Keywords         []string `json:"keywords"`
	ReqID            any      `json:"reqId"`
}

// OutlinePath is the kernel's model.Path as /api/outline/getDocOutline
// answers it: one top-level heading, its sub-headings in Blocks (each
// nesting deeper ones in Children).
type OutlinePath struct {
	ID       string         `json:"id"`
	Box      string         `json:"box"`
	Name     string         `json:"name"`
	HPath    string         `json:"hPath"`
	Type     string         `json:"type"`
	NodeType string         `json:"nodeType"`
	SubType  string         `json:"subType"`
	Blocks   []*Block       `json:"blocks,omitempty"`
	Children []*OutlinePath `json:"children,omitempty"`
	Depth    int            `json:"depth"`
	Count    int            `json:"count"`
	Folded   bool           `json:"folded"`
	Updated  string         `json:"updated"`
	Created  string         `json:"created"`
}
