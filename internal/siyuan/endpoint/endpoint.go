package endpoint

import (
	"maps"
	"slices"
	"strconv"
)

// The endpoints, by path. All are POST in SiYuan 3.7.3 (a few also answer
// GET, which the embedded kernel's routes say).
const (
	Version      = "/api/system/version"
	BootProgress = "/api/system/bootProgress"
	CurrentTime  = "/api/system/currentTime"

	LsNotebooks     = "/api/notebook/lsNotebooks"
	CreateNotebook  = "/api/notebook/createNotebook"
	OpenNotebook    = "/api/notebook/openNotebook"
	CloseNotebook   = "/api/notebook/closeNotebook"
	RenameNotebook  = "/api/notebook/renameNotebook"
	RemoveNotebook  = "/api/notebook/removeNotebook"
	GetNotebookConf = "/api/notebook/getNotebookConf"
	SetNotebookConf = "/api/notebook/setNotebookConf"
	SetNotebookIcon = "/api/notebook/setNotebookIcon"

	CreateDocWithMd = "/api/filetree/createDocWithMd"
	RenameDocByID   = "/api/filetree/renameDocByID"
	RemoveDocByID   = "/api/filetree/removeDocByID"
	MoveDocsByID    = "/api/filetree/moveDocsByID"
	GetHPathByID    = "/api/filetree/getHPathByID"
	GetPathByID     = "/api/filetree/getPathByID"
	GetIDsByHPath   = "/api/filetree/getIDsByHPath"
	ListDocsByPath  = "/api/filetree/listDocsByPath"
	ListDocTree     = "/api/filetree/listDocTree"
	ChangeSort      = "/api/filetree/changeSort"

	InsertBlock       = "/api/block/insertBlock"
	PrependBlock      = "/api/block/prependBlock"
	AppendBlock       = "/api/block/appendBlock"
	UpdateBlock       = "/api/block/updateBlock"
	BatchUpdateBlock  = "/api/block/batchUpdateBlock"
	BatchAppendBlock  = "/api/block/batchAppendBlock"
	BatchPrependBlock = "/api/block/batchPrependBlock"
	BatchInsertBlock  = "/api/block/batchInsertBlock"
	DeleteBlock       = "/api/block/deleteBlock"
	MoveBlock         = "/api/block/moveBlock"
	FoldBlock         = "/api/block/foldBlock"
	UnfoldBlock       = "/api/block/unfoldBlock"
	GetBlockKramdown  = "/api/block/getBlockKramdown"
	GetBlockKramdowns = "/api/block/getBlockKramdowns"
	GetChildBlocks    = "/api/block/getChildBlocks"
	GetBlockDOM       = "/api/block/getBlockDOM"
	GetBlockDOMs      = "/api/block/getBlockDOMs"
	GetBlockInfo      = "/api/block/getBlockInfo"
	GetDocInfo        = "/api/block/getDocInfo"
	CheckBlockExist   = "/api/block/checkBlockExist"
	GetBlocksIndexes  = "/api/block/getBlocksIndexes"

	GetBacklink2      = "/api/ref/getBacklink2"
	GetBacklinkDoc    = "/api/ref/getBacklinkDoc"
	GetBackmentionDoc = "/api/ref/getBackmentionDoc"

	SetBlockAttrs      = "/api/attr/setBlockAttrs"
	GetBlockAttrs      = "/api/attr/getBlockAttrs"
	BatchGetBlockAttrs = "/api/attr/batchGetBlockAttrs"

	QuerySQL            = "/api/query/sql"
	FlushTransaction    = "/api/sqlite/flushTransaction"
	FullTextSearchBlock = "/api/search/fullTextSearchBlock"

	ListInvalidBlockRefs = "/api/search/listInvalidBlockRefs"
	SemanticSearchBlock  = "/api/search/semanticSearchBlock"
	EmbeddingStat        = "/api/ai/embeddingStat"
	FindReplace          = "/api/search/findReplace"
	SearchAssetContent   = "/api/search/fullTextSearchAssetContent"
	GetAssetContent      = "/api/search/getAssetContent"
	SearchRefBlock       = "/api/search/searchRefBlock"

	UploadAsset     = "/api/asset/upload"
	GetFile         = "/api/file/getFile"
	PutFile         = "/api/file/putFile"
	RemoveFile      = "/api/file/removeFile"
	ReadDir         = "/api/file/readDir"
	ExportResources = "/api/export/exportResources"
	ExportMdContent = "/api/export/exportMdContent"

	RenameAsset        = "/api/asset/renameAsset"
	RemoveUnusedAsset  = "/api/asset/removeUnusedAsset"
	RemoveUnusedAssets = "/api/asset/removeUnusedAssets"
	GetUnusedAssets    = "/api/asset/getUnusedAssets"
	GetDocAssets       = "/api/asset/getDocAssets"
	GetDocImageAssets  = "/api/asset/getDocImageAssets"
	GetImageOCRText    = "/api/asset/getImageOCRText"
	SearchAsset        = "/api/search/searchAsset"
	StatAsset          = "/api/asset/statAsset"

	SearchTemplate    = "/api/search/searchTemplate"
	RemoveTemplate    = "/api/search/removeTemplate"
	RenderTemplate    = "/api/template/render"
	RenderSprig       = "/api/template/renderSprig"
	DocSaveAsTemplate = "/api/template/docSaveAsTemplate"

	RenderAV                = "/api/av/renderAttributeView"
	GetAV                   = "/api/av/getAttributeView"
	GetAVKeys               = "/api/av/getAttributeViewKeys"
	GetAVKeysByAvID         = "/api/av/getAttributeViewKeysByAvID"
	GetAVFilterSort         = "/api/av/getAttributeViewFilterSort"
	SearchAV                = "/api/av/searchAttributeView"
	GetAVPrimaryKeyValues   = "/api/av/getAttributeViewPrimaryKeyValues"
	GetMirrorDatabaseBlocks = "/api/av/getMirrorDatabaseBlocks"
	DuplicateAVBlock        = "/api/av/duplicateAttributeViewBlock"
	AddAVBlocks             = "/api/av/addAttributeViewBlocks"
	RemoveAVBlocks          = "/api/av/removeAttributeViewBlocks"
	AddAVKey                = "/api/av/addAttributeViewKey"
	RemoveAVKey             = "/api/av/removeAttributeViewKey"
	SetAVBlockAttr          = "/api/av/setAttributeViewBlockAttr"
	BatchSetAVBlockAttrs    = "/api/av/batchSetAttributeViewBlockAttrs"
	AppendAVDetachedRows    = "/api/av/appendAttributeViewDetachedBlocksWithValues"
	// spinBlockDOM normalises a block's DOM as the editor would (used for
	// the DOM of a new database block).
	SpinBlockDOM = "/api/lute/spinBlockDOM"

	PushMsg      = "/api/notification/pushMsg"
	PushErrMsg   = "/api/notification/pushErrMsg"
	Transactions = "/api/transactions"

	ReloadProtyle        = "/api/ui/reloadProtyle"
	ReloadFiletree       = "/api/ui/reloadFiletree"
	ReloadTag            = "/api/ui/reloadTag"
	ReloadAttributeView  = "/api/ui/reloadAttributeView"
	GetConf              = "/api/system/getConf"
	GetNetwork           = "/api/system/getNetwork"
	GetWorkspaceInfo     = "/api/system/getWorkspaceInfo"
	GetInstalledPlugin   = "/api/bazaar/getInstalledPlugin"
	GetInstalledWidget   = "/api/bazaar/getInstalledWidget"
	GetInstalledTheme    = "/api/bazaar/getInstalledTheme"
	GetInstalledIcon     = "/api/bazaar/getInstalledIcon"
	GetInstalledTemplate = "/api/bazaar/getInstalledTemplate"
	GetSnippet           = "/api/snippet/getSnippet"
	PerformSync          = "/api/sync/performSync"
	GetTag               = "/api/tag/getTag"
	SearchTag            = "/api/search/searchTag"
	RenameTag            = "/api/tag/renameTag"
	RemoveTag            = "/api/tag/removeTag"

	GetRiffDecks            = "/api/riff/getRiffDecks"
	CreateRiffDeck          = "/api/riff/createRiffDeck"
	RemoveRiffDeck          = "/api/riff/removeRiffDeck"
	AddRiffCards            = "/api/riff/addRiffCards"
	RemoveRiffCards         = "/api/riff/removeRiffCards"
	GetRiffCards            = "/api/riff/getRiffCards"
	GetRiffDueCards         = "/api/riff/getRiffDueCards"
	GetNotebookRiffDueCards = "/api/riff/getNotebookRiffDueCards"
	GetTreeRiffDueCards     = "/api/riff/getTreeRiffDueCards"
	ReviewRiffCard          = "/api/riff/reviewRiffCard"
	SkipReviewRiffCard      = "/api/riff/skipReviewRiffCard"
	// The kernel's MCP endpoint: its kind is the JSON-RPC method's
	// (discovery reads, tools/call a write sent once; see api_mcp.go).
	MCP                    = "/mcp"
	GetBlockBreadcrumb     = "/api/block/getBlockBreadcrumb"
	GetBlocksWordCount     = "/api/block/getBlocksWordCount"
	GetRecentUpdatedBlocks = "/api/block/getRecentUpdatedBlocks"
	GetDocsInfo            = "/api/block/getDocsInfo"
	TransferBlockRef       = "/api/block/transferBlockRef"
	SearchDocs             = "/api/filetree/searchDocs"
	GetDoc                 = "/api/filetree/getDoc"
	GetDocOutline          = "/api/outline/getDocOutline"

	// Daily notes and document structure changes.
	CreateDailyNote       = "/api/filetree/createDailyNote"
	AppendDailyNoteBlock  = "/api/block/appendDailyNoteBlock"
	PrependDailyNoteBlock = "/api/block/prependDailyNoteBlock"
	DuplicateDoc          = "/api/filetree/duplicateDoc"
	Heading2Doc           = "/api/filetree/heading2Doc"
	Doc2Heading           = "/api/filetree/doc2Heading"

	// The data repository: snapshots of the workspace's data directory,
	// their tags, the diff of two and one file of a snapshot read or
	// rolled back. Every one is admin-only in SiYuan 3.7.3.
	InitRepoKey              = "/api/repo/initRepoKey"
	CreateSnapshot           = "/api/repo/createSnapshot"
	TagSnapshot              = "/api/repo/tagSnapshot"
	GetRepoSnapshots         = "/api/repo/getRepoSnapshots"
	GetRepoTagSnapshots      = "/api/repo/getRepoTagSnapshots"
	RemoveRepoTagSnapshot    = "/api/repo/removeRepoTagSnapshot"
	DiffRepoSnapshots        = "/api/repo/diffRepoSnapshots"
	OpenRepoSnapshotFile     = "/api/repo/openRepoSnapshotFile"
	RollbackRepoSnapshotFile = "/api/repo/rollbackRepoSnapshotFile"
)

// Class is what a call of an endpoint does to the kernel.
type Class int

const (
	// Read is safe to repeat: it changes nothing, or only what a repeat
	// sets to the same again (the notes in the table say which). The
	// client retries it on a transient failure, and the embedded kernel
	// runs it beside others.
	Read Class = iota + 1
	// Write changes what SiYuan stores: the client attempts it once, and
	// the embedded kernel runs it alone, after draining its transaction
	// queue, as SiYuan serialises its writes.
	Write
	// Notice stores nothing but is shown to the person: the client attempts
	// it once (a repeat would be seen), and the embedded kernel runs it
	// beside others.
	Notice
	// PerMethod is an endpoint whose class is that of the call it carries
	// (/mcp: the JSON-RPC method's). The client sends each call with its
	// own class; the embedded kernel's handler serialises its writes itself.
	PerMethod
)

func (c Class) String() string {
	switch c {
	case Read:
		return "read"
	case Write:
		return "write"
	case Notice:
		return "notice"
	case PerMethod:
		return "per-method"
	}
	return "Class(" + strconv.Itoa(int(c)) + ")"
}

// classes is the one read/write classification of every endpoint. A call
// may still be sent in another class than its endpoint's where its
// arguments make it one (fullTextSearchBlock's raw SQL method,
// renderAttributeView creating the database): the client's methods say so
// where they call it.
var classes = map[string]Class{
	// Reads.
	//
	// spinBlockDOM is a pure function of its argument.
	SpinBlockDOM:       Read,
	Version:            Read,
	BootProgress:       Read,
	CurrentTime:        Read,
	LsNotebooks:        Read,
	GetNotebookConf:    Read,
	GetHPathByID:       Read,
	GetPathByID:        Read,
	GetIDsByHPath:      Read,
	ListDocsByPath:     Read,
	ListDocTree:        Read,
	GetBlockKramdown:   Read,
	GetBlockKramdowns:  Read,
	GetChildBlocks:     Read,
	GetBlockDOM:        Read,
	GetBlockDOMs:       Read,
	GetBlockInfo:       Read,
	GetDocInfo:         Read,
	CheckBlockExist:    Read,
	GetBlocksIndexes:   Read,
	GetBlockAttrs:      Read,
	BatchGetBlockAttrs: Read,
	// QuerySQL always sends mode "readonly", so the kernel refuses
	// anything but a single SELECT/WITH: safe to repeat.
	QuerySQL: Read,
	// flushTransaction only waits for queues to drain: idempotent.
	FlushTransaction: Read,
	// Method 2 (raw SQL) is reclassified as a write by the method.
	FullTextSearchBlock: Read,
	// search: invalid references and embeddings only read (the stat
	// counts rows; semantic search reads vectors, the query's own
	// embedding is computed by the provider and not stored).
	ListInvalidBlockRefs: Read,
	SemanticSearchBlock:  Read,
	EmbeddingStat:        Read,
	// The asset content index: its SQL method is checked read-only by
	// the kernel.
	SearchAssetContent: Read,
	GetAssetContent:    Read,
	SearchRefBlock:     Read,
	GetFile:            Read,
	ReadDir:            Read,
	ExportMdContent:    Read,
	GetUnusedAssets:    Read,
	GetDocAssets:       Read,
	GetDocImageAssets:  Read,
	SearchAsset:        Read,
	StatAsset:          Read,
	// getImageOCRText is routed as an admin write but only reads the
	// in-memory OCR table (ocr, which runs an OCR engine, is another endpoint).
	GetImageOCRText: Read,
	SearchTemplate:  Read,
	// Databases: renderAttributeView is sent with createIfNotExist false
	// here (RenderAttributeViewOrCreate sends it as a write). Render and
	// getAttributeViewKeys save corrections the kernel makes while
	// rendering (the current view, the keys' order): repeating them
	// changes nothing further.
	RenderAV:                Read,
	GetAV:                   Read,
	GetAVKeys:               Read,
	GetAVKeysByAvID:         Read,
	GetAVFilterSort:         Read,
	SearchAV:                Read,
	GetAVPrimaryKeyValues:   Read,
	GetMirrorDatabaseBlocks: Read,
	// The UI nudges change no data; a repeated one reloads a view again.
	ReloadProtyle:        Read,
	ReloadFiletree:       Read,
	ReloadTag:            Read,
	ReloadAttributeView:  Read,
	GetConf:              Read,
	GetNetwork:           Read,
	GetWorkspaceInfo:     Read,
	GetSnippet:           Read,
	GetInstalledPlugin:   Read,
	GetInstalledWidget:   Read,
	GetInstalledTheme:    Read,
	GetInstalledIcon:     Read,
	GetInstalledTemplate: Read,
	// getTag also stores its sort argument as the user's tag sort
	// setting: repeating it stores the same value.
	GetTag:    Read,
	SearchTag: Read,
	// A due-card read without reviewed cards also starts a new review
	// session (forgets skips): repeating it starts the same session.
	GetRiffDecks:            Read,
	GetRiffCards:            Read,
	GetRiffDueCards:         Read,
	GetNotebookRiffDueCards: Read,
	GetTreeRiffDueCards:     Read,
	// getDocsInfo flushes the transaction queue first: idempotent.
	GetBlockBreadcrumb:     Read,
	GetBlocksWordCount:     Read,
	GetRecentUpdatedBlocks: Read,
	GetDocsInfo:            Read,
	SearchDocs:             Read,
	// getDoc flushes the transaction queue and renders: idempotent.
	GetDoc:        Read,
	GetDocOutline: Read,
	// The backlink panel's documents: reads of the index and the trees.
	GetBacklink2:      Read,
	GetBacklinkDoc:    Read,
	GetBackmentionDoc: Read,
	// The data repository's reads: the snapshot lists, a diff and one
	// file of a snapshot rendered.
	GetRepoSnapshots:     Read,
	GetRepoTagSnapshots:  Read,
	DiffRepoSnapshots:    Read,
	OpenRepoSnapshotFile: Read,

	// Writes.
	CreateNotebook:     Write,
	OpenNotebook:       Write,
	CloseNotebook:      Write,
	RenameNotebook:     Write,
	RemoveNotebook:     Write,
	SetNotebookConf:    Write,
	SetNotebookIcon:    Write,
	CreateDocWithMd:    Write,
	RenameDocByID:      Write,
	RemoveDocByID:      Write,
	MoveDocsByID:       Write,
	ChangeSort:         Write,
	InsertBlock:        Write,
	PrependBlock:       Write,
	AppendBlock:        Write,
	UpdateBlock:        Write,
	BatchUpdateBlock:   Write,
	BatchAppendBlock:   Write,
	BatchPrependBlock:  Write,
	BatchInsertBlock:   Write,
	DeleteBlock:        Write,
	MoveBlock:          Write,
	FoldBlock:          Write,
	UnfoldBlock:        Write,
	SetBlockAttrs:      Write,
	FindReplace:        Write,
	UploadAsset:        Write,
	PutFile:            Write,
	RemoveFile:         Write,
	RenameAsset:        Write,
	RemoveUnusedAsset:  Write,
	RemoveUnusedAssets: Write,
	RemoveTemplate:     Write,
	DocSaveAsTemplate:  Write,
	// Templates may run any single SQL statement on the kernel's index
	// through querySQL, which is not read-only, and render (without
	// preview) saves a copy of each database the template holds.
	RenderTemplate: Write,
	RenderSprig:    Write,
	// exportResources writes a zip into temp/export: an external side effect.
	ExportResources:      Write,
	Transactions:         Write,
	DuplicateAVBlock:     Write,
	AddAVBlocks:          Write,
	RemoveAVBlocks:       Write,
	AddAVKey:             Write,
	RemoveAVKey:          Write,
	SetAVBlockAttr:       Write,
	BatchSetAVBlockAttrs: Write,
	AppendAVDetachedRows: Write,
	// performSync starts a cloud sync: an external side effect.
	PerformSync:           Write,
	RenameTag:             Write,
	RemoveTag:             Write,
	CreateRiffDeck:        Write,
	RemoveRiffDeck:        Write,
	AddRiffCards:          Write,
	RemoveRiffCards:       Write,
	ReviewRiffCard:        Write,
	SkipReviewRiffCard:    Write,
	TransferBlockRef:      Write,
	CreateDailyNote:       Write,
	AppendDailyNoteBlock:  Write,
	PrependDailyNoteBlock: Write,
	DuplicateDoc:          Write,
	Heading2Doc:           Write,
	Doc2Heading:           Write,
	// initRepoKey replaces the repository (its snapshots are gone) with a
	// new key; createSnapshot stores a snapshot when the data changed;
	// tagSnapshot and removeRepoTagSnapshot name one or take the name
	// away; rollbackRepoSnapshotFile first snapshots the data, then writes
	// the file back.
	InitRepoKey:              Write,
	CreateSnapshot:           Write,
	TagSnapshot:              Write,
	RemoveRepoTagSnapshot:    Write,
	RollbackRepoSnapshotFile: Write,

	// Notifications are shown to the user: repeating one is visible, but
	// nothing is stored.
	PushMsg:    Notice,
	PushErrMsg: Notice,

	MCP: PerMethod,
}

// ClassOf is the class of the endpoint at path; ok is false for a path not
// in the table (the client then sends it as a write: the safe default).
func ClassOf(path string) (c Class, ok bool) {
	c, ok = classes[path]
	return c, ok
}

// Paths are every endpoint's path, sorted.
func Paths() []string { return slices.Sorted(maps.Keys(classes)) }
