package siyuan

import (
	"io"

	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The kernel's answers, and the transactions and confs it also accepts, are
// the wire types the embedded kernel encodes too, so the two cannot drift.
// See package wire for their fields.
type (
	BootProgress         = wire.BootProgress
	Notebook             = wire.Notebook
	BoxConf              = wire.BoxConf
	NotebookConf         = wire.NotebookConf
	DocPath              = wire.DocPath
	DocList              = wire.DocList
	DocFile              = wire.DocFile
	Transaction          = wire.Transaction
	Operation            = wire.Operation
	BlockKramdown        = wire.BlockKramdown
	ChildBlock           = wire.ChildBlock
	BlockDOM             = wire.BlockDOM
	BlockInfo            = wire.BlockInfo
	DocInfo              = wire.DocInfo
	AttrView             = wire.AttrView
	FullTextSearchResult = wire.FullTextSearchResult
	AssetUploadResult    = wire.AssetUploadResult
	DirEntry             = wire.DirEntry
	MdContent            = wire.MdContent
	UnusedAsset          = wire.UnusedAsset
	AssetSearchResult    = wire.AssetSearchResult
	TemplateSearchResult = wire.TemplateSearchResult
	RenderedTemplate     = wire.RenderedTemplate
	BlockPath            = wire.BlockPath
	BlockStat            = wire.BlockStat
	WordCount            = wire.WordCount
	Block                = wire.Block
	DocSearchHit         = wire.DocSearchHit
	Doc                  = wire.Doc
	OutlinePath          = wire.OutlinePath
)

// The request types below are the client's own: the embedded kernel reads
// requests by argument name, as SiYuan does. Their JSON names follow the
// SiYuan 3.7.3 kernel source (kernel/api), not API.md, where they differ.

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
