package siyuan

// Endpoints used by the typed methods. All are POST in SiYuan 3.7.3.
const (
	epVersion      = "/api/system/version"
	epBootProgress = "/api/system/bootProgress"
	epCurrentTime  = "/api/system/currentTime"

	epLsNotebooks     = "/api/notebook/lsNotebooks"
	epCreateNotebook  = "/api/notebook/createNotebook"
	epOpenNotebook    = "/api/notebook/openNotebook"
	epCloseNotebook   = "/api/notebook/closeNotebook"
	epRenameNotebook  = "/api/notebook/renameNotebook"
	epRemoveNotebook  = "/api/notebook/removeNotebook"
	epGetNotebookConf = "/api/notebook/getNotebookConf"
	epSetNotebookConf = "/api/notebook/setNotebookConf"
	epSetNotebookIcon = "/api/notebook/setNotebookIcon"

	epCreateDocWithMd = "/api/filetree/createDocWithMd"
	epRenameDocByID   = "/api/filetree/renameDocByID"
	epRemoveDocByID   = "/api/filetree/removeDocByID"
	epMoveDocsByID    = "/api/filetree/moveDocsByID"
	epGetHPathByID    = "/api/filetree/getHPathByID"
	epGetPathByID     = "/api/filetree/getPathByID"
	epGetIDsByHPath   = "/api/filetree/getIDsByHPath"
	epListDocsByPath  = "/api/filetree/listDocsByPath"
	epChangeSort      = "/api/filetree/changeSort"

	epInsertBlock       = "/api/block/insertBlock"
	epPrependBlock      = "/api/block/prependBlock"
	epAppendBlock       = "/api/block/appendBlock"
	epUpdateBlock       = "/api/block/updateBlock"
	epBatchUpdateBlock  = "/api/block/batchUpdateBlock"
	epDeleteBlock       = "/api/block/deleteBlock"
	epMoveBlock         = "/api/block/moveBlock"
	epFoldBlock         = "/api/block/foldBlock"
	epUnfoldBlock       = "/api/block/unfoldBlock"
	epGetBlockKramdown  = "/api/block/getBlockKramdown"
	epGetBlockKramdowns = "/api/block/getBlockKramdowns"
	epGetChildBlocks    = "/api/block/getChildBlocks"
	epGetBlockDOM       = "/api/block/getBlockDOM"
	epGetBlockDOMs      = "/api/block/getBlockDOMs"
	epGetBlockInfo      = "/api/block/getBlockInfo"
	epGetDocInfo        = "/api/block/getDocInfo"
	epCheckBlockExist   = "/api/block/checkBlockExist"
	epGetBlocksIndexes  = "/api/block/getBlocksIndexes"

	epSetBlockAttrs      = "/api/attr/setBlockAttrs"
	epGetBlockAttrs      = "/api/attr/getBlockAttrs"
	epBatchGetBlockAttrs = "/api/attr/batchGetBlockAttrs"

	epQuerySQL            = "/api/query/sql"
	epFlushTransaction    = "/api/sqlite/flushTransaction"
	epFullTextSearchBlock = "/api/search/fullTextSearchBlock"

	epListInvalidBlockRefs = "/api/search/listInvalidBlockRefs"
	epSemanticSearchBlock  = "/api/search/semanticSearchBlock"
	epEmbeddingStat        = "/api/ai/embeddingStat"
	epFindReplace          = "/api/search/findReplace"
	epSearchAssetContent   = "/api/search/fullTextSearchAssetContent"
	epGetAssetContent      = "/api/search/getAssetContent"
	epSearchRefBlock       = "/api/search/searchRefBlock"

	epUploadAsset     = "/api/asset/upload"
	epGetFile         = "/api/file/getFile"
	epPutFile         = "/api/file/putFile"
	epRemoveFile      = "/api/file/removeFile"
	epReadDir         = "/api/file/readDir"
	epExportResources = "/api/export/exportResources"
	epExportMdContent = "/api/export/exportMdContent"

	epRenameAsset        = "/api/asset/renameAsset"
	epRemoveUnusedAsset  = "/api/asset/removeUnusedAsset"
	epRemoveUnusedAssets = "/api/asset/removeUnusedAssets"
	epGetUnusedAssets    = "/api/asset/getUnusedAssets"
	epGetDocAssets       = "/api/asset/getDocAssets"
	epGetDocImageAssets  = "/api/asset/getDocImageAssets"
	epGetImageOCRText    = "/api/asset/getImageOCRText"
	epSearchAsset        = "/api/search/searchAsset"

	epSearchTemplate    = "/api/search/searchTemplate"
	epRemoveTemplate    = "/api/search/removeTemplate"
	epRenderTemplate    = "/api/template/render"
	epRenderSprig       = "/api/template/renderSprig"
	epDocSaveAsTemplate = "/api/template/docSaveAsTemplate"

	epRenderAV                = "/api/av/renderAttributeView"
	epGetAV                   = "/api/av/getAttributeView"
	epGetAVKeys               = "/api/av/getAttributeViewKeys"
	epGetAVKeysByAvID         = "/api/av/getAttributeViewKeysByAvID"
	epGetAVFilterSort         = "/api/av/getAttributeViewFilterSort"
	epSearchAV                = "/api/av/searchAttributeView"
	epGetAVPrimaryKeyValues   = "/api/av/getAttributeViewPrimaryKeyValues"
	epGetMirrorDatabaseBlocks = "/api/av/getMirrorDatabaseBlocks"
	epDuplicateAVBlock        = "/api/av/duplicateAttributeViewBlock"
	epAddAVBlocks             = "/api/av/addAttributeViewBlocks"
	epRemoveAVBlocks          = "/api/av/removeAttributeViewBlocks"
	epAddAVKey                = "/api/av/addAttributeViewKey"
	epRemoveAVKey             = "/api/av/removeAttributeViewKey"
	epSetAVBlockAttr          = "/api/av/setAttributeViewBlockAttr"
	epBatchSetAVBlockAttrs    = "/api/av/batchSetAttributeViewBlockAttrs"
	// spinBlockDOM normalises a block's DOM as the editor would (used for
	// the DOM of a new database block).
	epSpinBlockDOM = "/api/lute/spinBlockDOM"

	epPushMsg      = "/api/notification/pushMsg"
	epPushErrMsg   = "/api/notification/pushErrMsg"
	epTransactions = "/api/transactions"

	epReloadProtyle        = "/api/ui/reloadProtyle"
	epReloadFiletree       = "/api/ui/reloadFiletree"
	epReloadTag            = "/api/ui/reloadTag"
	epReloadAttributeView  = "/api/ui/reloadAttributeView"
	epGetConf              = "/api/system/getConf"
	epGetNetwork           = "/api/system/getNetwork"
	epGetWorkspaceInfo     = "/api/system/getWorkspaceInfo"
	epGetInstalledPlugin   = "/api/bazaar/getInstalledPlugin"
	epGetInstalledWidget   = "/api/bazaar/getInstalledWidget"
	epGetInstalledTheme    = "/api/bazaar/getInstalledTheme"
	epGetInstalledIcon     = "/api/bazaar/getInstalledIcon"
	epGetInstalledTemplate = "/api/bazaar/getInstalledTemplate"
	epGetSnippet           = "/api/snippet/getSnippet"
	epPerformSync          = "/api/sync/performSync"
	epGetTag               = "/api/tag/getTag"
	epSearchTag            = "/api/search/searchTag"
	epRenameTag            = "/api/tag/renameTag"
	epRemoveTag            = "/api/tag/removeTag"

	epGetRiffDecks            = "/api/riff/getRiffDecks"
	epCreateRiffDeck          = "/api/riff/createRiffDeck"
	epRemoveRiffDeck          = "/api/riff/removeRiffDeck"
	epAddRiffCards            = "/api/riff/addRiffCards"
	epRemoveRiffCards         = "/api/riff/removeRiffCards"
	epGetRiffCards            = "/api/riff/getRiffCards"
	epGetRiffDueCards         = "/api/riff/getRiffDueCards"
	epGetNotebookRiffDueCards = "/api/riff/getNotebookRiffDueCards"
	epGetTreeRiffDueCards     = "/api/riff/getTreeRiffDueCards"
	epReviewRiffCard          = "/api/riff/reviewRiffCard"
	epSkipReviewRiffCard      = "/api/riff/skipReviewRiffCard"
	// The kernel's MCP endpoint: its kind is the JSON-RPC method's
	// (discovery reads, tools/call a write sent once; see api_mcp.go).
	epMCP                    = "/mcp"
	epGetBlockBreadcrumb     = "/api/block/getBlockBreadcrumb"
	epGetBlocksWordCount     = "/api/block/getBlocksWordCount"
	epGetRecentUpdatedBlocks = "/api/block/getRecentUpdatedBlocks"
	epGetDocsInfo            = "/api/block/getDocsInfo"
	epTransferBlockRef       = "/api/block/transferBlockRef"
	epSearchDocs             = "/api/filetree/searchDocs"
	epGetDoc                 = "/api/filetree/getDoc"
	epGetDocOutline          = "/api/outline/getDocOutline"
)

// kindOf is the single, explicit read/write classification of every endpoint
// the typed methods call. Reads are retried on transient failures; writes are
// attempted exactly once. Anything not listed is a write: the safe default.
func kindOf(endpoint string) CallKind {
	switch endpoint {
	case epSpinBlockDOM: // a pure function of its argument
		return Read
	case epVersion, epBootProgress, epCurrentTime,
		epLsNotebooks, epGetNotebookConf,
		epGetHPathByID, epGetPathByID, epGetIDsByHPath, epListDocsByPath,
		epGetBlockKramdown, epGetBlockKramdowns, epGetChildBlocks, epGetBlockDOM,
		epGetBlockDOMs, epGetBlockInfo, epGetDocInfo, epCheckBlockExist, epGetBlocksIndexes,
		epGetBlockAttrs, epBatchGetBlockAttrs,
		// QuerySQL always sends mode "readonly", so the kernel refuses
		// anything but a single SELECT/WITH: safe to repeat.
		epQuerySQL,
		// flushTransaction only waits for queues to drain: idempotent.
		epFlushTransaction,
		// Method 2 (raw SQL) is reclassified as a write by the method.
		epFullTextSearchBlock,
		// search: invalid references and embeddings only read (the stat
		// counts rows; semantic search reads vectors, the query's own
		// embedding is computed by the provider and not stored).
		epListInvalidBlockRefs, epSemanticSearchBlock, epEmbeddingStat,
		// The asset content index: its SQL method is checked read-only by
		// the kernel.
		epSearchAssetContent, epGetAssetContent, epSearchRefBlock,
		epGetFile, epReadDir, epExportMdContent,
		epGetUnusedAssets, epGetDocAssets, epGetDocImageAssets, epSearchAsset,
		// getImageOCRText is routed as an admin write but only reads the
		// in-memory OCR table (ocr, which runs an OCR engine, is another endpoint).
		epGetImageOCRText,
		epSearchTemplate,
		// Databases: renderAttributeView is sent with createIfNotExist false
		// here (RenderAttributeViewOrCreate sends it as a write). Render and
		// getAttributeViewKeys save corrections the kernel makes while
		// rendering (the current view, the keys' order): repeating them
		// changes nothing further.
		epRenderAV, epGetAV, epGetAVKeys, epGetAVKeysByAvID, epGetAVFilterSort, epSearchAV,
		epGetAVPrimaryKeyValues, epGetMirrorDatabaseBlocks,
		// The UI nudges change no data; a repeated one reloads a view again.
		epReloadProtyle, epReloadFiletree, epReloadTag, epReloadAttributeView,
		epGetConf, epGetNetwork, epGetWorkspaceInfo, epGetSnippet,
		epGetInstalledPlugin, epGetInstalledWidget, epGetInstalledTheme, epGetInstalledIcon, epGetInstalledTemplate,
		// getTag also stores its sort argument as the user's tag sort
		// setting: repeating it stores the same value.
		epGetTag, epSearchTag,
		// A due-card read without reviewed cards also starts a new review
		// session (forgets skips): repeating it starts the same session.
		epGetRiffDecks, epGetRiffCards, epGetRiffDueCards, epGetNotebookRiffDueCards, epGetTreeRiffDueCards,
		// getDocsInfo flushes the transaction queue first: idempotent.
		epGetBlockBreadcrumb, epGetBlocksWordCount, epGetRecentUpdatedBlocks, epGetDocsInfo, epSearchDocs,
		// getDoc flushes the transaction queue and renders: idempotent.
		epGetDoc, epGetDocOutline:
		return Read
	case epCreateNotebook, epOpenNotebook, epCloseNotebook, epRenameNotebook,
		epRemoveNotebook, epSetNotebookConf, epSetNotebookIcon,
		epCreateDocWithMd, epRenameDocByID, epRemoveDocByID, epMoveDocsByID, epChangeSort,
		epInsertBlock, epPrependBlock, epAppendBlock, epUpdateBlock, epBatchUpdateBlock, epDeleteBlock,
		epMoveBlock, epFoldBlock, epUnfoldBlock,
		epSetBlockAttrs,
		epFindReplace,
		epUploadAsset, epPutFile, epRemoveFile,
		epRenameAsset, epRemoveUnusedAsset, epRemoveUnusedAssets,
		epRemoveTemplate, epDocSaveAsTemplate,
		// Templates may run any single SQL statement on the kernel's index
		// through querySQL, which is not read-only, and render (without
		// preview) saves a copy of each database the template holds.
		epRenderTemplate, epRenderSprig,
		// exportResources writes a zip into temp/export: an external side effect.
		epExportResources,
		// Notifications are shown to the user; repeating one is visible.
		epPushMsg, epPushErrMsg,
		epTransactions,
		epDuplicateAVBlock, epAddAVBlocks, epRemoveAVBlocks, epAddAVKey, epRemoveAVKey,
		epSetAVBlockAttr, epBatchSetAVBlockAttrs,
		// performSync starts a cloud sync: an external side effect.
		epPerformSync,
		epRenameTag, epRemoveTag,
		epCreateRiffDeck, epRemoveRiffDeck, epAddRiffCards, epRemoveRiffCards, epReviewRiffCard, epSkipReviewRiffCard,
		epTransferBlockRef:
		return Write
	}
	return Write
}
