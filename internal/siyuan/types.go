package siyuan

import (
	"encoding/json"
	"io"
)

// JSON field names below follow the SiYuan 3.7.3 kernel source (kernel/model,
// kernel/conf and the handlers in kernel/api), not API.md, where they differ.

// BootProgress is /api/system/bootProgress. Progress reaches 100 when the
// kernel has finished booting; handlers may misbehave before that.
type BootProgress struct {
	Progress int    `json:"progress"`
	Details  string `json:"details"`
}

// Notebook is the kernel's model.Box.
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

// BoxConf is a notebook's .siyuan/conf.json (kernel conf.BoxConf).
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
	// BoxCrypt holds encryption parameters; the kernel ignores it (and
	// Encrypted) on setNotebookConf, so it is kept opaque.
	BoxCrypt json.RawMessage `json:"boxCrypt,omitempty"`
}

// NotebookConf is /api/notebook/getNotebookConf.
type NotebookConf struct {
	Box  string  `json:"box"`
	Name string  `json:"name"`
	Conf BoxConf `json:"conf"`
}

// CreateDocRequest is /api/filetree/createDocWithMd. Path is a human path of
// titles (hPath) such as "/Projects/Plan"; the last segment becomes the title.
// The call is not idempotent: the same Path twice creates two documents.
type CreateDocRequest struct {
	Notebook string `json:"notebook"`
	Path     string `json:"path"`
	Markdown string `json:"markdown"`
	ParentID string `json:"parentID,omitempty"`
	// ID pins the new document's ID (NodeID format); an existing ID fails.
	ID string `json:"id,omitempty"`
	// Tags is a comma-separated list stored in the "tags" attribute.
	Tags string `json:"tags,omitempty"`
}

// DocPath is /api/filetree/getPathByID: the storage path (ID-based, ending in
// .sy) and the notebook ID.
type DocPath struct {
	Path     string `json:"path"`
	Notebook string `json:"notebook"`
}

// ListDocsRequest is /api/filetree/listDocsByPath. Path is "/" or a storage
// path. Sort is a sort mode (0..15, 256); nil uses the notebook setting.
// MaxListCount <= 0 means unlimited; nil uses the kernel setting (512).
type ListDocsRequest struct {
	Notebook     string `json:"notebook"`
	Path         string `json:"path"`
	Sort         *int   `json:"sort,omitempty"`
	MaxListCount *int   `json:"maxListCount,omitempty"`
	ShowHidden   bool   `json:"showHidden,omitempty"`
}

// DocList is /api/filetree/listDocsByPath.
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
// and returned by the block write endpoints.
type Transaction struct {
	Timestamp      int64       `json:"timestamp,omitempty"`
	DoOperations   []Operation `json:"doOperations"`
	UndoOperations []Operation `json:"undoOperations,omitempty"`
}

// Operation is the kernel's model.Operation. Data is a block DOM string for
// insert/update actions and an object for some others, so it stays untyped.
type Operation struct {
	Action            string           `json:"action"`
	Data              any              `json:"data,omitempty"`
	ID                string           `json:"id,omitempty"`
	RootID            string           `json:"rootID,omitempty"`
	ParentID          string           `json:"parentID,omitempty"`
	PreviousID        string           `json:"previousID,omitempty"`
	NextID            string           `json:"nextID,omitempty"`
	RetData           any              `json:"retData,omitempty"`
	BlockIDs          []string         `json:"blockIDs,omitempty"`
	BlockID           string           `json:"blockID,omitempty"`
	DeckID            string           `json:"deckID,omitempty"`
	AvID              string           `json:"avID,omitempty"`
	SrcIDs            []string         `json:"srcIDs,omitempty"`
	Srcs              []map[string]any `json:"srcs,omitempty"`
	IsDetached        bool             `json:"isDetached,omitempty"`
	Name              string           `json:"name,omitempty"`
	Type              string           `json:"type,omitempty"`
	Format            string           `json:"format,omitempty"`
	KeyID             string           `json:"keyID,omitempty"`
	RowID             string           `json:"rowID,omitempty"`
	IsTwoWay          bool             `json:"isTwoWay,omitempty"`
	BackRelationKeyID string           `json:"backRelationKeyID,omitempty"`
	RemoveDest        bool             `json:"removeDest,omitempty"`
	Layout            string           `json:"layout,omitempty"`
	GroupID           string           `json:"groupID,omitempty"`
	TargetGroupID     string           `json:"targetGroupID,omitempty"`
	ViewID            string           `json:"viewID,omitempty"`
	IgnoreDefaultFill bool             `json:"ignoreDefaultFill,omitempty"`
	Context           map[string]any   `json:"context,omitempty"`
}

// InsertBlockRequest is /api/block/insertBlock. DataType is "markdown" or
// "dom". The anchor priority is NextID > PreviousID > ParentID; at least one
// is required. Only a parent-only insert is validated by the kernel up front:
// a missing previous/next block fails inside the transaction queue while the
// reply still says code 0, so check the result with CheckBlockExist.
type InsertBlockRequest struct {
	DataType   string `json:"dataType"`
	Data       string `json:"data"`
	NextID     string `json:"nextID,omitempty"`
	PreviousID string `json:"previousID,omitempty"`
	ParentID   string `json:"parentID,omitempty"`
}

// BlockKramdown is /api/block/getBlockKramdown. An unknown ID yields an empty
// Kramdown with code 0.
type BlockKramdown struct {
	ID       string `json:"id"`
	Kramdown string `json:"kramdown"`
}

// ChildBlock is one entry of /api/block/getChildBlocks.
type ChildBlock struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	SubType  string `json:"subType,omitempty"`
	Content  string `json:"content,omitempty"`
	Markdown string `json:"markdown,omitempty"`
}

// BlockDOM is /api/block/getBlockDOM.
type BlockDOM struct {
	ID  string `json:"id"`
	DOM string `json:"dom"`
}

// BlockInfo is /api/block/getBlockInfo: where a block lives. (The kernel's
// own model.BlockInfo is the getDocInfo shape, here DocInfo.) It stays
// comparable with ==.
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

// AttrView names a database (attribute view) a document belongs to.
type AttrView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// FullTextSearchRequest is /api/search/fullTextSearchBlock. Paths entries are
// "<notebookID>" or "<notebookID>/<storage path>"; invalid ones are silently
// dropped by the kernel. Method: 0 keyword, 1 query syntax, 2 SQL, 3 regex.
// OrderBy: 0 type, 1/2 created asc/desc, 3/4 updated asc/desc, 5 content
// order, 6/7 relevance asc/desc. GroupBy: 0 none, 1 by document.
type FullTextSearchRequest struct {
	Query    string          `json:"query"`
	Page     int             `json:"page,omitempty"`     // default 1
	PageSize int             `json:"pageSize,omitempty"` // default 32
	Paths    []string        `json:"paths,omitempty"`
	Types    map[string]bool `json:"types,omitempty"`
	SubTypes map[string]bool `json:"subTypes,omitempty"`
	Method   int             `json:"method"`
	OrderBy  int             `json:"orderBy"`
	GroupBy  int             `json:"groupBy"`
}

// FullTextSearchResult is /api/search/fullTextSearchBlock.
type FullTextSearchResult struct {
	Blocks            []SearchBlock `json:"blocks"`
	MatchedBlockCount int           `json:"matchedBlockCount"`
	MatchedRootCount  int           `json:"matchedRootCount"`
	PageCount         int           `json:"pageCount"`
	DocMode           bool          `json:"docMode"`
}

// SearchBlock is the kernel's model.Block as returned by search. Content
// carries <mark> highlights.
type SearchBlock struct {
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
	Refs       []SearchBlock     `json:"refs"`
	DefID      string            `json:"defID"`
	DefPath    string            `json:"defPath"`
	IAL        map[string]string `json:"ial"`
	Children   []SearchBlock     `json:"children"`
	Depth      int               `json:"depth"`
	Count      int               `json:"count"`
	RefCount   int               `json:"refCount"`
	Sort       int               `json:"sort"`
	Created    string            `json:"created"`
	Updated    string            `json:"updated"`
	RiffCardID string            `json:"riffCardID"`
	RiffCard   json.RawMessage   `json:"riffCard,omitempty"`
}

// AssetUploadRequest is /api/asset/upload (multipart). AssetsDirPath is
// relative to data/ (kernel default "/assets/"). ID optionally names a block
// whose notebook-local assets dir should be used.
type AssetUploadRequest struct {
	AssetsDirPath    string
	ID               string
	SkipIfDuplicated bool
	Files            []UploadFile
}

// UploadFile is one file of an upload. Body is streamed, never buffered whole.
type UploadFile struct {
	Name string
	Body io.Reader
}

// AssetUploadResult is /api/asset/upload. SuccMap maps each original file
// name to the asset path to use in markdown ("assets/<name>-<id>.<ext>").
type AssetUploadResult struct {
	ErrFiles []string          `json:"errFiles"`
	SuccMap  map[string]string `json:"succMap"`
}

// PutFileRequest is /api/file/putFile (multipart). Path is workspace-relative
// (e.g. "/data/storage/x.json"). ModTime is in milliseconds since the epoch
// (the kernel's unit, despite its docs); zero means "now". With IsDir only
// the directory is created and Body is ignored.
type PutFileRequest struct {
	Path    string
	IsDir   bool
	ModTime int64
	Body    io.Reader
}

// DirEntry is one entry of /api/file/readDir. Updated is in seconds since the
// epoch (unlike PutFileRequest.ModTime).
type DirEntry struct {
	Name      string `json:"name"`
	IsDir     bool   `json:"isDir"`
	IsSymlink bool   `json:"isSymlink"`
	Updated   int64  `json:"updated"`
}

// MdContent is /api/export/exportMdContent.
type MdContent struct {
	HPath   string `json:"hPath"`
	Content string `json:"content"`
}
