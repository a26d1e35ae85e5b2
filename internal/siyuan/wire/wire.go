package wire

import "encoding/json"

// Result is the envelope of every API answer (gulu.Result): {code, msg, data}.
type Result struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
	Data any    `json:"data"`
}

// BootProgress is /api/system/bootProgress (a map in the kernel). Progress
// reaches 100 when the kernel has finished booting; handlers may misbehave
// before that.
type BootProgress struct {
	Progress int    `json:"progress"`
	Details  string `json:"details"`
}

// Notebook is the kernel's model.Box, as lsNotebooks and createNotebook
// answer with it.
type Notebook struct {
	ID                string `json:"id"`
	Name              string `json:"name"`
	Icon              string `json:"icon"`
	Sort              int    `json:"sort"`
	SortMode          int    `json:"sortMode"`
	Closed            bool   `json:"closed"`
	SubFileCount      int    `json:"subFileCount"`
	NewFlashcardCount int    `json:"newFlashcardCount"`
	DueFlashcardCount int    `json:"dueFlashcardCount"`
	FlashcardCount    int    `json:"flashcardCount"`
	Encrypted         bool   `json:"encrypted"`
	Unlocked          bool   `json:"unlocked"`
}

// BoxConf is a notebook's .siyuan/conf.json (kernel conf.BoxConf), also the
// conf of getNotebookConf and the answer of setNotebookConf.
type BoxConf struct {
	Name                  string `json:"name"`
	Sort                  int    `json:"sort"`
	Icon                  string `json:"icon"`
	Closed                bool   `json:"closed"`
	RefCreateSaveBox      string `json:"refCreateSaveBox"`
	RefCreateSavePath     string `json:"refCreateSavePath"`
	DocCreateSaveBox      string `json:"docCreateSaveBox"`
	DocCreateSavePath     string `json:"docCreateSavePath"`
	DailyNoteSavePath     string `json:"dailyNoteSavePath"`
	DailyNoteTemplatePath string `json:"dailyNoteTemplatePath"`
	SortMode              int    `json:"sortMode"`
	Encrypted             bool   `json:"encrypted"`
	// BoxCrypt holds encryption parameters, kept opaque: the kernel ignores
	// it (and Encrypted) on setNotebookConf. The kernel always writes it,
	// null when not encrypted. omitempty, which the kernel's tag lacks, only
	// drops a nil BoxCrypt: one decoded from the kernel (even null) is kept
	// and re-encodes as it came, while a client that clears it keeps the
	// secrets off the wire and out of state it hashes. Whoever answers as the
	// kernel must therefore never leave it nil.
	BoxCrypt json.RawMessage `json:"boxCrypt,omitempty"`
}

// NotebookConf is /api/notebook/getNotebookConf (a map in the kernel).
type NotebookConf struct {
	Box  string  `json:"box"`
	Name string  `json:"name"`
	Conf BoxConf `json:"conf"`
}

// DocPath is /api/filetree/getPathByID (a map in the kernel): the storage
// path (ID-based, ending in .sy) and the notebook ID.
type DocPath struct {
	Path     string `json:"path"`
	Notebook string `json:"notebook"`
}

// DocList is /api/filetree/listDocsByPath (a map in the kernel).
type DocList struct {
	Box   string    `json:"box"`
	Path  string    `json:"path"`
	Files []DocFile `json:"files"`
}

// DocFile is the kernel's model.File: one document in a file-tree listing.
type DocFile struct {
	Path              string `json:"path"`
	Name              string `json:"name"` // the title
	TitleEmpty        bool   `json:"titleEmpty,omitempty"`
	Icon              string `json:"icon"`
	Name1             string `json:"name1"` // the "name" attribute
	Alias             string `json:"alias"`
	Memo              string `json:"memo"`
	Bookmark          string `json:"bookmark"`
	ID                string `json:"id"`
	Count             int    `json:"count"`
	Size              uint64 `json:"size"`
	HSize             string `json:"hSize"`
	Mtime             int64  `json:"mtime"`
	Ctime             int64  `json:"ctime"`
	HMtime            string `json:"hMtime"`
	HCtime            string `json:"hCtime"`
	Sort              int    `json:"sort"`
	SubFileCount      int    `json:"subFileCount"`
	NewFlashcardCount int    `json:"newFlashcardCount"`
	DueFlashcardCount int    `json:"dueFlashcardCount"`
	FlashcardCount    int    `json:"flashcardCount"`
}

// Transaction is the kernel's model.Transaction, as sent to /api/transactions
// and returned by it and by the block write endpoints.
type Transaction struct {
	Timestamp      int64       `json:"timestamp"`
	DoOperations   []Operation `json:"doOperations"`
	UndoOperations []Operation `json:"undoOperations"`
}

// Operation is the kernel's model.Operation. Data is a block DOM string for
// insert/update actions and an object for some others, so it stays untyped.
// Every field is always written, as the kernel does; absent and zero decode
// alike on both sides.
type Operation struct {
	Action            string           `json:"action"`
	Data              any              `json:"data"`
	ID                string           `json:"id"`
	RootID            string           `json:"rootID"`
	ParentID          string           `json:"parentID"`
	PreviousID        string           `json:"previousID"`
	NextID            string           `json:"nextID"`
	RetData           any              `json:"retData"`
	BlockIDs          []string         `json:"blockIDs"`
	BlockID           string           `json:"blockID"`
	DeckID            string           `json:"deckID"`
	AvID              string           `json:"avID"`
	SrcIDs            []string         `json:"srcIDs"`
	Srcs              []map[string]any `json:"srcs"`
	IsDetached        bool             `json:"isDetached"`
	Name              string           `json:"name"`
	Type              string           `json:"type"`
	Format            string           `json:"format"`
	KeyID             string           `json:"keyID"`
	RowID             string           `json:"rowID"`
	IsTwoWay          bool             `json:"isTwoWay"`
	BackRelationKeyID string           `json:"backRelationKeyID"`
	RemoveDest        bool             `json:"removeDest"`
	Layout            string           `json:"layout"`
	GroupID           string           `json:"groupID"`
	TargetGroupID     string           `json:"targetGroupID"`
	ViewID            string           `json:"viewID"`
	IgnoreDefaultFill bool             `json:"ignoreDefaultFill"`
	Context           map[string]any   `json:"context"`
}

// BlockKramdown is /api/block/getBlockKramdown (a map in the kernel). An
// unknown ID yields an empty Kramdown with code 0.
type BlockKramdown struct {
	ID       string `json:"id"`
	Kramdown string `json:"kramdown"`
}

// ChildBlock is the kernel's model.ChildBlock, one entry of
// /api/block/getChildBlocks.
type ChildBlock struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	SubType  string `json:"subType,omitempty"`
	Content  string `json:"content,omitempty"`
	Markdown string `json:"markdown,omitempty"`
}

// BlockDOM is /api/block/getBlockDOM (a map in the kernel).
type BlockDOM struct {
	ID  string `json:"id"`
	DOM string `json:"dom"`
}

// BlockInfo is /api/block/getBlockInfo (a map in the kernel): where a block
// lives. (The kernel's own model.BlockInfo is the getDocInfo shape, here
// DocInfo.) It stays comparable with ==.
type BlockInfo struct {
	Box            string `json:"box"`
	Path           string `json:"path"`
	RootID         string `json:"rootID"`
	RootTitle      string `json:"rootTitle"`
	RootTitleEmpty bool   `json:"rootTitleEmpty"`
	RootChildID    string `json:"rootChildID"`
	RootIcon       string `json:"rootIcon"`
}

// DocInfo is /api/block/getDocInfo (the kernel's model.BlockInfo).
type DocInfo struct {
	ID           string            `json:"id"`
	RootID       string            `json:"rootID"`
	Name         string            `json:"name"`
	RefCount     int               `json:"refCount"`
	SubFileCount int               `json:"subFileCount"`
	RefIDs       []string          `json:"refIDs"`
	IAL          map[string]string `json:"ial"`
	Icon         string            `json:"icon"`
	AttrViews    []AttrView        `json:"attrViews"`
}

// AttrView is the kernel's model.AttrView: a database (attribute view) a
// document belongs to.
type AttrView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// FullTextSearchResult is /api/search/fullTextSearchBlock (a map in the
// kernel).
type FullTextSearchResult struct {
	Blocks            []Block `json:"blocks"`
	MatchedBlockCount int     `json:"matchedBlockCount"`
	MatchedRootCount  int     `json:"matchedRootCount"`
	PageCount         int     `json:"pageCount"`
	DocMode           bool    `json:"docMode"`
}

// AssetUploadResult is /api/asset/upload (a map in the kernel). SuccMap maps
// each original file name to the asset path to use in markdown
// ("assets/<name>-<id>.<ext>").
type AssetUploadResult struct {
	ErrFiles []string          `json:"errFiles"`
	SuccMap  map[string]string `json:"succMap"`
}

// DirEntry is one entry of /api/file/readDir (a map in the kernel). Updated
// is in seconds since the epoch (unlike putFile's modTime, in milliseconds).
type DirEntry struct {
	Name      string `json:"name"`
	IsDir     bool   `json:"isDir"`
	IsSymlink bool   `json:"isSymlink"`
	Updated   int64  `json:"updated"`
}

// MdContent is /api/export/exportMdContent (a map in the kernel).
type MdContent struct {
	HPath   string `json:"hPath"`
	Content string `json:"content"`
}

// UnusedAsset is the kernel's model.UnusedItem, one entry of
// /api/asset/getUnusedAssets: Item is the asset's path relative to data/
// ("assets/<name>" or "<notebook>/assets/<name>"; a folder without trailing
// slash), Name its last segment. (The kernel's blockIDs, omitted when empty,
// is only filled for missing assets.)
type UnusedAsset struct {
	Item string `json:"item"`
	Name string `json:"name"`
}

// AssetSearchResult is the kernel's cache.Asset, one entry of
// /api/search/searchAsset: an asset under data/assets. HName is the file
// name without its id, with <mark> highlights; Path is "assets/…"; Updated
// is the modification time in Unix seconds.
type AssetSearchResult struct {
	HName   string `json:"hName"`
	Path    string `json:"path"`
	Updated int64  `json:"updated"`
}

// TemplateSearch is /api/search/searchTemplate (a map in the kernel): the
// keyword as sent and the templates found.
type TemplateSearch struct {
	K         string                 `json:"k"`
	Templates []TemplateSearchResult `json:"templates"`
}

// TemplateSearchResult is the kernel's model.TemplateSearchResult. Path is
// the template's absolute path on the kernel's machine (what
// /api/template/render and /api/search/removeTemplate take), RelativePath
// its path under data/templates/, Content the name shown (without .md,
// "/<group>/<name>" for a template in a folder) with <mark> highlights.
type TemplateSearchResult struct {
	Path         string `json:"path"`
	RelativePath string `json:"relativePath"`
	Content      string `json:"content"`
}

// RenderedTemplate is /api/template/render (a map in the kernel): the
// template's path as sent and its rendering as block DOM.
type RenderedTemplate struct {
	Content string `json:"content"`
	Path    string `json:"path"`
}

// DueCard is one card of a due-card read (SiYuan's model.Flashcard).
// State is 0 new, 1 learning, 2 review, 3 relearning; LastReview is Unix
// milliseconds (-62135596800000, the zero time, for a card never
// reviewed); NextDues are the intervals each rating ("1" again … "4" easy)
// would give, humanized ("10 minutes").
type DueCard struct {
	DeckID     string            `json:"deckID"`
	CardID     string            `json:"cardID"`
	BlockID    string            `json:"blockID"`
	Lapses     int               `json:"lapses"`
	Reps       int               `json:"reps"`
	State      int               `json:"state"`
	LastReview int64             `json:"lastReview"`
	NextDues   map[string]string `json:"nextDues"`
}

// AssetContent is one indexed asset (SiYuan's model.AssetContent, of
// data/assets only): Content is a snippet (at most 64 tokens around the
// matches, "..." where cut) with <mark> highlights, HTML-escaped; Updated
// is the file's mtime in seconds.
type AssetContent struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Ext     string `json:"ext"`
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	HSize   string `json:"hSize"`
	Updated int64  `json:"updated"`
	Content string `json:"content"`
}
