// Package contract is one behavioural suite for the SiYuan kernel HTTP API as
// Sisyphus drives it through internal/siyuan. The same checks run against any
// kernel: the embedded SiYuan-compatible kernel in every `go test ./...`, and
// a real SiYuan 3.7.x when SISYPHUS_LIVE_SIYUAN_URL and
// SISYPHUS_LIVE_SIYUAN_TOKEN are set.
//
// The real kernel is the reference: every expectation here was observed on
// SiYuan 3.7.3. A check that fails only on the embedded kernel is a bug in the
// embedded kernel, not in the check.
//
// The suite is safe to point at a user's workspace: it creates its own
// notebooks (named sisyphus-contract-<random>), keeps every document, block
// and asset inside them, writes plain files only under
// /data/storage/sisyphus-contract-<random>/,
// /data/storage/petal/sisyphus-contract-<random>/, temp/export/ and the
// database files it makes in data/storage/av/, and the
// Sisyphus plugin's two configuration files in
// /data/storage/petal/siyuan-plugins-mcp-sisyphus/ only when the workspace
// has neither, and removes all of it when it finishes (with
// data/storage/petal itself if the suite created it; SiYuan itself keeps
// copies of removed notebooks and documents in its history/ folder). It
// shows a few short notifications. The data repository checks run only
// on a workspace that has a repository key already; they leave their
// snapshots of the workspace in its repository (SiYuan has no call that
// removes one) and remove their tags.
package contract

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// Kernel says which kernel to run the suite against.
type Kernel struct {
	// URL is the kernel's base URL, e.g. http://127.0.0.1:6806.
	URL string
	// Token is the kernel's API token.
	Token string
	// Live marks a real SiYuan: timing-dependent expectations (the SQL index
	// lagging behind writes) are then only checked when observed, because
	// the real kernel may already have flushed on its own.
	Live bool
	// HTTPClient, when set, carries every request (the embedded kernel's
	// in-process transport); nil is a plain client.
	HTTPClient *http.Client
}

// http is the client every check's requests go through.
func (k Kernel) http() *http.Client {
	if k.HTTPClient != nil {
		return k.HTTPClient
	}
	return http.DefaultClient
}

type check struct {
	name string
	fn   func(t *testing.T, s *suite)
}

type suite struct {
	k       Kernel
	c       *siyuan.Client
	box     string // the suite's notebook
	boxName string
	tag     string    // random suffix shared by everything the suite creates
	storage string    // workspace dir for plain files, removed at the end
	petal   string    // plugin-storage dir for plain files, removed at the end
	created time.Time // when the notebook was created
}

// Run runs every check against k. It creates its own notebook first and
// removes it (and everything else it created) in t.Cleanup.
func Run(t *testing.T, k Kernel) {
	c, err := siyuan.New(siyuan.Config{BaseURL: k.URL, Token: k.Token, Timeout: 60 * time.Second, HTTPClient: k.HTTPClient})
	if err != nil {
		t.Fatalf("siyuan.New: %v", err)
	}
	tag := randLower(10)
	s := &suite{k: k, c: c, tag: tag, boxName: "sisyphus-contract-" + tag,
		storage: "/data/storage/sisyphus-contract-" + tag,
		petal:   petalDir + "/sisyphus-contract-" + tag}
	petalExisted := true
	if _, err := c.ReadDir(t.Context(), petalDir); errors.Is(err, siyuan.ErrFileNotFound) {
		petalExisted = false
	} else if err != nil {
		t.Fatalf("ReadDir(%s): %v", petalDir, err)
	}
	nb, err := c.CreateNotebook(t.Context(), s.boxName)
	if err != nil {
		t.Fatalf("CreateNotebook(%q): %v", s.boxName, err)
	}
	if !nodeIDRe.MatchString(nb.ID) {
		t.Fatalf("CreateNotebook returned id %q, want a node ID", nb.ID)
	}
	s.box, s.created = nb.ID, time.Now()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, dir := range []string{s.storage, s.petal} {
			if err := c.RemoveFile(ctx, dir); err != nil && !errors.Is(err, siyuan.ErrFileNotFound) {
				t.Errorf("cleanup: RemoveFile(%s): %v", dir, err)
			}
		}
		// data/storage/petal goes too if the suite made it and it is empty.
		if entries, err := c.ReadDir(ctx, petalDir); !petalExisted && err == nil && len(entries) == 0 {
			if err := c.RemoveFile(ctx, petalDir); err != nil {
				t.Errorf("cleanup: RemoveFile(%s): %v", petalDir, err)
			}
		}
		// Real SiYuan copies a removed notebook's assets into the global
		// data/assets, so remove them first.
		if err := c.RemoveFile(ctx, "/data/"+s.box+"/assets"); err != nil {
			var api *siyuan.APIError
			if !errors.As(err, &api) || api.Code != 404 {
				t.Errorf("cleanup: RemoveFile(assets): %v", err)
			}
		}
		// SiYuan 3.7.3 may still be writing into the notebook's folder
		// (an index or history job of the suite's last writes): its
		// removal then fails with "directory not empty". Cleanup, not an
		// owned write: try again after the kernel settles.
		var err error
		for range 4 {
			if err = c.RemoveNotebook(ctx, s.box); err == nil || !strings.Contains(err.Error(), "directory not empty") {
				break
			}
			time.Sleep(time.Second)
		}
		if err != nil {
			t.Errorf("cleanup: RemoveNotebook(%s): %v", s.box, err)
		}
	})
	var all []check
	for _, group := range [][]check{
		checks,
		avChecks,
		uiChecks,
		dailyChecks,
		systemChecks,
		fsChecks,
		tagChecks,
		riffChecks,
		searchChecks,
		mcpChecks,
		blockDocChecks,
		backlinkChecks,
		docTreeChecks,
		statAssetChecks,
		repoChecks,
	} {
		all = append(all, group...)
	}
	for _, ch := range all {
		t.Run(ch.name, func(t *testing.T) { ch.fn(t, s) })
	}
}

// checks is the suite, in running order. Each check builds what it needs
// inside the suite's notebook, so any one of them can be run alone with -run.
var checks = []check{
	// system
	{"system_version_is_3_7", checkVersion},
	{"system_version_needs_no_token", checkVersionNoToken},
	{"system_boot_progress_complete", checkBootProgress},
	{"system_current_time_near_now", checkCurrentTime},
	{"notify_push_msg_returns_id", checkPushMsg},
	{"notify_push_err_msg_returns_id", checkPushErrMsg},
	// auth
	{"auth_wrong_token_is_401", checkAuthWrongToken},
	{"auth_wrong_token_write_not_applied", checkAuthWrongTokenWrite},
	// notebooks
	{"notebook_created_and_listed", checkNotebookListed},
	{"notebook_conf_get", checkNotebookConfGet},
	{"notebook_conf_set_merges", checkNotebookConfSet},
	{"notebook_icon_set", checkNotebookIcon},
	{"notebook_rename", checkNotebookRename},
	{"notebook_close_open", checkNotebookCloseOpen},
	{"notebook_remove", checkNotebookRemove},
	// documents
	{"doc_create_returns_id", checkDocCreate},
	{"doc_create_makes_intermediate_docs", checkDocIntermediate},
	{"doc_create_same_path_twice_makes_two", checkDocSamePathTwice},
	{"doc_create_with_pinned_id", checkDocPinnedID},
	{"doc_paths_by_id_and_hpath", checkDocPaths},
	{"doc_rename_changes_hpath", checkDocRename},
	{"doc_move_under_other_doc", checkDocMove},
	{"doc_remove", checkDocRemove},
	{"doc_remove_by_block_id_removes_its_doc", checkDocRemoveByBlockID},
	{"doc_list_in_creation_order", checkDocListOrder},
	{"doc_change_sort_custom_order", checkDocChangeSort},
	{"doc_list_root_hides_box_doc", checkDocListRoot},
	{"doc_info", checkDocInfo},
	{"doc_info_of_a_block_is_its_doc", checkDocInfoOfBlock},
	{"doc_block_info", checkBlockInfo},
	{"doc_kramdown_ends_with_doc_ial", checkDocKramdown},
	{"doc_kramdown_rich_markdown", checkRichKramdown},
	// block reads
	{"block_child_types", checkChildTypes},
	{"block_dom", checkBlockDOM},
	{"block_kramdowns_batch", checkKramdownsBatch},
	{"block_kramdowns_batch_with_non_id_fails", checkKramdownsBatchNonID},
	{"block_kramdown_unknown_id_is_empty", checkKramdownUnknown},
	{"block_kramdown_non_id_string", checkKramdownNonID},
	{"block_attrs_unknown_id_is_empty", checkAttrsUnknown},
	{"block_children_unknown_id_is_empty", checkChildrenUnknown},
	// block inserts
	{"block_append_returns_id", checkAppend},
	{"block_prepend_returns_id", checkPrepend},
	{"block_insert_previous_id", checkInsertPrevious},
	{"block_insert_next_id", checkInsertNext},
	{"block_insert_parent_id_goes_first", checkInsertParent},
	{"block_insert_multi_block_ids", checkInsertMulti},
	{"block_insert_pinned_ial_id", checkInsertPinnedID},
	{"block_insert_unknown_previous_id_inserts_nothing", checkInsertUnknownPrevious},
	{"block_insert_into_leaf_parent_is_api_error", checkInsertLeafParent},
	// updates and attributes
	{"block_update_kramdown_and_ial", checkUpdateKramdown},
	{"block_update_drops_custom_attrs", checkUpdateDropsAttrs},
	{"block_update_keeps_attrs_from_new_ial", checkUpdateNewIAL},
	{"block_update_changes_updated", checkUpdateUpdated},
	{"block_attrs_set_get", checkAttrsSetGet},
	{"block_attrs_empty_and_null_remove", checkAttrsRemove},
	{"block_attrs_batch_get", checkAttrsBatch},
	{"block_attrs_invalid_name_is_api_error", checkAttrsInvalidName},
	{"block_transactions_update_op", checkTransactions},
	{"block_batch_update_one_transaction", checkBatchUpdate},
	{"block_batch_update_unknown_id_applies_nothing", checkBatchUpdateUnknown},
	{"block_batch_update_argument_errors", checkBatchUpdateArgs},
	{"block_batch_append_prepend", checkBatchAppendPrepend},
	{"block_batch_insert", checkBatchInsert},
	{"block_batch_insert_errors", checkBatchInsertErrors},
	{"block_batch_insert_shared_anchor_order", checkBatchInsertSharedAnchor},
	{"block_update_unknown_id_is_tree_not_found", checkUpdateUnknown},
	{"block_batch_reads_equal_single_reads", checkBatchReadsEqualSingle},
	{"block_indexes_place_blocks_in_the_first_ones_document", checkBlocksIndexes},
	{"block_dom_node_index_where_it_lives", checkBlockDOMNodeIndex},
	{"block_transactions_arguments_and_timestamp", checkTransactionsArguments},
	{"block_insert_updated_from_its_id", checkInsertUpdatedFromID},
	// move, delete, fold
	{"block_move_after_previous", checkMovePrevious},
	{"block_move_across_documents", checkMoveAcross},
	{"block_move_into_parent_first", checkMoveParent},
	{"block_delete", checkDelete},
	{"block_delete_non_id_is_api_error", checkDeleteNonID},
	{"block_fold_unfold_list", checkFoldList},
	{"block_fold_heading_marks_following", checkFoldHeading},
	{"block_fold_document_is_api_error", checkFoldDocument},
	// malformed input
	{"bad_update_non_id_is_api_error", checkUpdateNonID},
	{"bad_update_unknown_id_is_api_error", checkUpdateUnknownID},
	{"bad_invalid_ial_id_is_api_error", checkInvalidIALID},
	{"bad_short_ial_id_inserts_nothing", checkShortIALID},
	// SQL and search
	{"sql_insert_visible_after_flush", checkSQLInsertLag},
	{"sql_update_visible_after_flush", checkSQLUpdateLag},
	{"sql_row_columns", checkSQLColumns},
	{"sql_readonly_refuses_writes", checkSQLReadonly},
	{"sql_syntax_error_is_api_error", checkSQLSyntax},
	{"sql_escape_clause_answers_null", checkSQLEscape},
	{"search_finds_unique_word_after_flush", checkSearch},
	// files, assets, export
	{"asset_upload_roundtrip", checkAssetUpload},
	{"asset_upload_names_and_folders", checkAssetUploadNames},
	{"asset_upload_reuses_data_assets_bytes", checkAssetUploadReuse},
	{"asset_doc_assets_and_images", checkDocAssets},
	{"asset_rename_rewrites_links", checkRenameAsset},
	{"asset_ocr_text_without_engine", checkOCRText},
	{"asset_search_by_name", checkSearchAsset},
	{"asset_unused_list_and_remove", checkUnusedAssets},
	{"file_put_get_readdir_remove", checkPutFile},
	{"file_put_dir", checkPutDir},
	{"file_get_missing_is_api_error", checkGetFileMissing},
	{"file_get_directory_is_api_error", checkGetFileDir},
	{"file_remove_missing_is_api_error", checkRemoveFileMissing},
	{"file_readdir_missing_is_api_error", checkReadDirMissing},
	// plugin storage (data/storage/petal/<plugin>/, where Sisyphus keeps its configuration)
	{"storage_missing_config_is_202_404", checkStorageMissing},
	{"storage_plugin_config_roundtrip", checkStoragePluginRoundtrip},
	{"storage_put_makes_parent_folders", checkStoragePutMakesFolders},
	{"storage_get_exact_bytes_sniffed_type", checkStorageContentTypes},
	{"storage_read_after_write", checkStorageReadAfterWrite},
	{"storage_put_modtime", checkStorageModTime},
	{"storage_readdir", checkStorageReadDir},
	{"storage_remove", checkStorageRemove},
	{"storage_path_resolution", checkStoragePathTricks},
	{"storage_argument_errors", checkStorageArgErrors},
	// templates (data/templates/sisyphus-contract-<tag>…)
	{"template_search", checkTemplateSearch},
	{"template_render_file_to_dom", checkTemplateRender},
	{"template_render_sprig", checkTemplateRenderSprig},
	{"template_doc_save_as", checkDocSaveAsTemplate},
	{"template_remove", checkRemoveTemplate},
	{"export_resources_zip", checkExportResources},
	{"export_md_content", checkExportMd},
	{"export_md_content_asset_links", checkExportMdAssets},
	{"export_md_content_refs_footnotes_embeds", checkExportMdRefs},
	{"export_resources_zip_of_files_and_folders", checkExportResourcesZip},
	{"storage_templates_and_assets", checkStorageTemplatesAssets},
}

// ---------------------------------------------------------------- helpers

var (
	nodeIDRe = regexp.MustCompile(`^\d{14}-[0-9a-z]{7}$`)
	anyIDRe  = regexp.MustCompile(`\d{14}-[0-9a-z]{7}`)
	tsRe     = regexp.MustCompile(`^\d{14}$`)
	ialRe    = regexp.MustCompile(`\{:((?:\s+[a-z][a-z0-9-]*="[^"]*")*)\s*\}`)
	attrRe   = regexp.MustCompile(`([a-z][a-z0-9-]*)="([^"]*)"`)
)

const (
	unknownID      = "20200101000000-zzzzzzz" // well-formed, never created
	sortModeCustom = 6                        // SiYuan's custom (drag and drop) document order
)

func randLower(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// randWord is letters only, so that search tokenizers keep it whole.
func randWord(n int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}

// freshID is a new, well-formed block ID that no kernel has handed out.
func freshID() string {
	return time.Now().Format("20060102150405") + "-" + randLower(7)
}

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// apiError requires err to be a *siyuan.APIError and returns it.
func apiError(t *testing.T, what string, err error) *siyuan.APIError {
	t.Helper()
	var api *siyuan.APIError
	if !errors.As(err, &api) {
		t.Fatalf("%s: want *siyuan.APIError, got %T: %v", what, err, err)
	}
	return api
}

// newDoc creates a document directly under the notebook root.
func (s *suite) newDoc(t *testing.T, title, md string) string {
	t.Helper()
	return s.newDocAt(t, "/"+title, md)
}

func (s *suite) newDocAt(t *testing.T, hpath, md string) string {
	t.Helper()
	id, err := s.c.CreateDocWithMd(t.Context(), siyuan.CreateDocRequest{Notebook: s.box, Path: hpath, Markdown: md})
	must(t, "CreateDocWithMd "+hpath, err)
	if !nodeIDRe.MatchString(id) {
		t.Fatalf("CreateDocWithMd %s returned %q, want a node ID", hpath, id)
	}
	return id
}

func (s *suite) children(t *testing.T, id string) []siyuan.ChildBlock {
	t.Helper()
	kids, err := s.c.GetChildBlocks(t.Context(), id)
	must(t, "GetChildBlocks", err)
	return kids
}

func (s *suite) childIDs(t *testing.T, id string) []string {
	t.Helper()
	var ids []string
	for _, k := range s.children(t, id) {
		ids = append(ids, k.ID)
	}
	return ids
}

func (s *suite) attrs(t *testing.T, id string) map[string]string {
	t.Helper()
	a, err := s.c.GetBlockAttrs(t.Context(), id)
	must(t, "GetBlockAttrs", err)
	return a
}

func (s *suite) kramdown(t *testing.T, id string) string {
	t.Helper()
	k, err := s.c.GetBlockKramdown(t.Context(), id)
	must(t, "GetBlockKramdown", err)
	if k.ID != id {
		t.Fatalf("GetBlockKramdown(%s).ID = %q", id, k.ID)
	}
	return k.Kramdown
}

func (s *suite) exists(t *testing.T, id string) bool {
	t.Helper()
	ok, err := s.c.CheckBlockExist(t.Context(), id)
	must(t, "CheckBlockExist", err)
	return ok
}

func (s *suite) flush(t *testing.T) {
	t.Helper()
	must(t, "FlushTransaction", s.c.FlushTransaction(t.Context()))
}

// docWithParas creates a document of paragraphs p0..pn-1 (texts given) and
// returns the doc ID and the paragraph IDs.
func (s *suite) docWithParas(t *testing.T, title string, texts ...string) (string, []string) {
	t.Helper()
	doc := s.newDoc(t, title, strings.Join(texts, "\n\n"))
	kids := s.children(t, doc)
	if len(kids) != len(texts) {
		t.Fatalf("new doc has %d children, want %d: %+v", len(kids), len(texts), kids)
	}
	ids := make([]string, len(kids))
	for i, k := range kids {
		if k.Type != "p" || k.Markdown != texts[i] {
			t.Fatalf("child %d = {type %q markdown %q}, want paragraph %q", i, k.Type, k.Markdown, texts[i])
		}
		ids[i] = k.ID
	}
	return doc, ids
}

// eventually polls cond for up to 10 s, for effects real SiYuan applies
// shortly after replying.
func (s *suite) eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func requireOrder(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: order\n got %v\nwant %v", what, got, want)
	}
}

// oneInsert requires txs to be exactly one transaction with one insert
// operation and returns that operation.
func oneInsert(t *testing.T, txs []siyuan.Transaction) siyuan.Operation {
	t.Helper()
	if len(txs) != 1 || len(txs[0].DoOperations) != 1 {
		t.Fatalf("want 1 transaction with 1 operation, got %+v", txs)
	}
	op := txs[0].DoOperations[0]
	if op.Action != "insert" {
		t.Fatalf("operation action = %q, want insert", op.Action)
	}
	return op
}

// normKramdown makes kramdown comparable: IAL attributes sorted (the kernel's
// order is not stable), 14-digit `updated` values replaced by TS, and block
// IDs replaced by the names given (others by ID?).
func normKramdown(s string, names map[string]string) string {
	s = sortIALs(s, func(name, v string) string {
		if name == "updated" && tsRe.MatchString(v) {
			return "TS"
		}
		return v
	})
	return anyIDRe.ReplaceAllStringFunc(s, func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return "ID?"
	})
}

// sortIALs rewrites every IAL of s with its attributes in sorted order,
// each value passed through value.
func sortIALs(s string, value func(name, v string) string) string {
	return ialRe.ReplaceAllStringFunc(s, func(ial string) string {
		m := attrRe.FindAllStringSubmatch(ial, -1)
		parts := make([]string, 0, len(m))
		for _, a := range m {
			parts = append(parts, a[1]+`="`+value(a[1], a[2])+`"`)
		}
		sort.Strings(parts)
		return "{: " + strings.Join(parts, " ") + "}"
	})
}

// sqlRows runs one read-only statement. Real SiYuan sometimes indexes a
// document twice (documents created right after their notebook), so callers
// must tolerate one block coming back as several identical rows.
func (s *suite) sqlRows(t *testing.T, stmt string) []map[string]any {
	t.Helper()
	rows, err := s.c.QuerySQL(t.Context(), stmt)
	must(t, "QuerySQL "+stmt, err)
	return rows
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

func readAll(t *testing.T, rc io.ReadCloser) []byte {
	t.Helper()
	defer rc.Close()
	b, err := io.ReadAll(rc)
	must(t, "read body", err)
	return b
}

// ------------------------------------------------------------------ system

func checkVersion(t *testing.T, s *suite) {
	v, err := s.c.Version(t.Context())
	must(t, "Version", err)
	if !regexp.MustCompile(`^3\.7\.\d+$`).MatchString(v) {
		t.Fatalf("Version = %q, want 3.7.x", v)
	}
}

func checkVersionNoToken(t *testing.T, s *suite) {
	c, err := siyuan.New(siyuan.Config{BaseURL: s.k.URL, Token: "wrong-" + randLower(8), HTTPClient: s.k.HTTPClient})
	must(t, "siyuan.New", err)
	v, err := c.Version(t.Context())
	must(t, "Version with a wrong token", err)
	if !strings.HasPrefix(v, "3.7.") {
		t.Fatalf("Version = %q", v)
	}
}

func checkBootProgress(t *testing.T, s *suite) {
	bp, err := s.c.BootProgress(t.Context())
	must(t, "BootProgress", err)
	if bp.Progress != 100 {
		t.Fatalf("BootProgress.Progress = %d, want 100", bp.Progress)
	}
}

func checkCurrentTime(t *testing.T, s *suite) {
	before := time.Now().UnixMilli()
	ms, err := s.c.CurrentTime(t.Context())
	must(t, "CurrentTime", err)
	after := time.Now().UnixMilli()
	const slack = int64(2 * time.Minute / time.Millisecond)
	if ms < before-slack || ms > after+slack {
		t.Fatalf("CurrentTime = %d, local clock %d..%d", ms, before, after)
	}
}

var pushIDRe = regexp.MustCompile(`^[0-9a-z]{7}$`)

func checkPushMsg(t *testing.T, s *suite) {
	id, err := s.c.PushMsg(t.Context(), "sisyphus contract test "+s.tag, 2000)
	must(t, "PushMsg", err)
	if !pushIDRe.MatchString(id) {
		t.Fatalf("PushMsg id = %q, want 7 lowercase letters/digits", id)
	}
	id2, err := s.c.PushMsg(t.Context(), "sisyphus contract test "+s.tag+" again", 2000)
	must(t, "PushMsg", err)
	if id2 == id {
		t.Fatalf("two messages got the same id %q", id)
	}
}

func checkPushErrMsg(t *testing.T, s *suite) {
	id, err := s.c.PushErrMsg(t.Context(), "sisyphus contract test (not a real error) "+s.tag, 2000)
	must(t, "PushErrMsg", err)
	if !pushIDRe.MatchString(id) {
		t.Fatalf("PushErrMsg id = %q, want 7 lowercase letters/digits", id)
	}
}

// -------------------------------------------------------------------- auth

func (s *suite) wrongTokenClient(t *testing.T) *siyuan.Client {
	t.Helper()
	c, err := siyuan.New(siyuan.Config{BaseURL: s.k.URL, Token: "wrong-" + randLower(8), HTTPClient: s.k.HTTPClient})
	must(t, "siyuan.New", err)
	return c
}

func checkAuthWrongToken(t *testing.T, s *suite) {
	_, err := s.wrongTokenClient(t).ListNotebooks(t.Context())
	var ae *siyuan.AuthError
	if !errors.As(err, &ae) {
		t.Fatalf("ListNotebooks with a wrong token: want *siyuan.AuthError, got %T: %v", err, err)
	}
	if ae.Status != 401 {
		t.Fatalf("AuthError.Status = %d, want 401", ae.Status)
	}
	if siyuan.IsOutcomeUnknown(err) {
		t.Fatalf("an auth failure must be definite, got %v", err)
	}
}

func checkAuthWrongTokenWrite(t *testing.T, s *suite) {
	name := s.boxName + "-unauthorized"
	_, err := s.wrongTokenClient(t).CreateNotebook(t.Context(), name)
	var ae *siyuan.AuthError
	if !errors.As(err, &ae) || ae.Status != 401 {
		t.Fatalf("CreateNotebook with a wrong token: want *siyuan.AuthError 401, got %T: %v", err, err)
	}
	nbs, err := s.c.ListNotebooks(t.Context())
	must(t, "ListNotebooks", err)
	for _, nb := range nbs {
		if nb.Name == name {
			_ = s.c.RemoveNotebook(context.Background(), nb.ID)
			t.Fatalf("the unauthorized CreateNotebook was applied: %+v", nb)
		}
	}
}

// --------------------------------------------------------------- notebooks

func (s *suite) findNotebook(t *testing.T, id string) (siyuan.Notebook, bool) {
	t.Helper()
	nbs, err := s.c.ListNotebooks(t.Context())
	must(t, "ListNotebooks", err)
	for _, nb := range nbs {
		if nb.ID == id {
			return nb, true
		}
	}
	return siyuan.Notebook{}, false
}

// auxNotebook creates a second notebook of the suite's own, removed at the
// end of the check, for operations too disruptive for the main one.
func (s *suite) auxNotebook(t *testing.T, suffix string) (string, string) {
	t.Helper()
	name := s.boxName + "-" + suffix
	nb, err := s.c.CreateNotebook(t.Context(), name)
	must(t, "CreateNotebook", err)
	if nb.Name != name || !nodeIDRe.MatchString(nb.ID) {
		t.Fatalf("CreateNotebook = %+v, want name %q and a node ID", nb, name)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.c.RemoveNotebook(ctx, nb.ID)
	})
	return nb.ID, name
}

func checkNotebookListed(t *testing.T, s *suite) {
	nb, ok := s.findNotebook(t, s.box)
	if !ok {
		t.Fatalf("notebook %s not listed", s.box)
	}
	if nb.Name != s.boxName || nb.Closed {
		t.Fatalf("listed notebook = %+v, want name %q and open", nb, s.boxName)
	}
}

func checkNotebookConfGet(t *testing.T, s *suite) {
	id, name := s.auxNotebook(t, "conf")
	nc, err := s.c.GetNotebookConf(t.Context(), id)
	must(t, "GetNotebookConf", err)
	if nc.Box != id || nc.Name != name || nc.Conf.Name != name {
		t.Fatalf("GetNotebookConf = %+v, want box %s name %q", nc, id, name)
	}
	if nc.Conf.Closed {
		t.Fatalf("new notebook conf says closed")
	}
	if nc.Conf.SortMode != 15 {
		t.Fatalf("new notebook sortMode = %d, want 15 (follow the global setting)", nc.Conf.SortMode)
	}
	if !strings.Contains(nc.Conf.DailyNoteSavePath, "{{now | date") {
		t.Fatalf("default dailyNoteSavePath = %q, want the date template", nc.Conf.DailyNoteSavePath)
	}
}

func checkNotebookConfSet(t *testing.T, s *suite) {
	id, name := s.auxNotebook(t, "setconf")
	nc, err := s.c.GetNotebookConf(t.Context(), id)
	must(t, "GetNotebookConf", err)
	conf := nc.Conf
	conf.SortMode = 6
	conf.DocCreateSavePath = "/inbox"
	saved, err := s.c.SetNotebookConf(t.Context(), id, conf)
	must(t, "SetNotebookConf", err)
	if saved.SortMode != 6 || saved.DocCreateSavePath != "/inbox" || saved.Name != name ||
		saved.DailyNoteSavePath != nc.Conf.DailyNoteSavePath {
		t.Fatalf("SetNotebookConf returned %+v", saved)
	}
	again, err := s.c.GetNotebookConf(t.Context(), id)
	must(t, "GetNotebookConf", err)
	if again.Conf.SortMode != 6 || again.Conf.DocCreateSavePath != "/inbox" {
		t.Fatalf("conf after set = %+v", again.Conf)
	}
	nb, _ := s.findNotebook(t, id)
	if nb.SortMode != 6 {
		t.Fatalf("lsNotebooks sortMode = %d, want 6", nb.SortMode)
	}
}

func checkNotebookIcon(t *testing.T, s *suite) {
	id, _ := s.auxNotebook(t, "icon")
	must(t, "SetNotebookIcon", s.c.SetNotebookIcon(t.Context(), id, "1f4d4"))
	nc, err := s.c.GetNotebookConf(t.Context(), id)
	must(t, "GetNotebookConf", err)
	if nc.Conf.Icon != "1f4d4" {
		t.Fatalf("icon = %q, want 1f4d4", nc.Conf.Icon)
	}
	nb, _ := s.findNotebook(t, id)
	if nb.Icon != "1f4d4" {
		t.Fatalf("listed icon = %q, want 1f4d4", nb.Icon)
	}
}

func checkNotebookRename(t *testing.T, s *suite) {
	id, name := s.auxNotebook(t, "rename")
	newName := name + "-renamed"
	must(t, "RenameNotebook", s.c.RenameNotebook(t.Context(), id, newName))
	nb, ok := s.findNotebook(t, id)
	if !ok || nb.Name != newName {
		t.Fatalf("after rename: listed %+v (found %v), want name %q", nb, ok, newName)
	}
	nc, err := s.c.GetNotebookConf(t.Context(), id)
	must(t, "GetNotebookConf", err)
	if nc.Name != newName || nc.Conf.Name != newName {
		t.Fatalf("conf after rename = %+v", nc)
	}
}

func checkNotebookCloseOpen(t *testing.T, s *suite) {
	// Closing an unknown notebook is a silent no-op in real SiYuan.
	must(t, "CloseNotebook(unknown)", s.c.CloseNotebook(t.Context(), unknownID))
	id, _ := s.auxNotebook(t, "close")
	must(t, "CloseNotebook", s.c.CloseNotebook(t.Context(), id))
	nb, ok := s.findNotebook(t, id)
	if !ok || !nb.Closed {
		t.Fatalf("after close: listed %+v (found %v), want closed", nb, ok)
	}
	must(t, "OpenNotebook", s.c.OpenNotebook(t.Context(), id))
	nb, ok = s.findNotebook(t, id)
	if !ok || nb.Closed {
		t.Fatalf("after open: listed %+v (found %v), want open", nb, ok)
	}
	// An opened notebook is usable again.
	doc, err := s.c.CreateDocWithMd(t.Context(), siyuan.CreateDocRequest{Notebook: id, Path: "/reopened", Markdown: "x"})
	must(t, "CreateDocWithMd in reopened notebook", err)
	if !s.exists(t, doc) {
		t.Fatalf("doc %s in reopened notebook does not exist", doc)
	}
}

func checkNotebookRemove(t *testing.T, s *suite) {
	id, _ := s.auxNotebook(t, "remove")
	doc, err := s.c.CreateDocWithMd(t.Context(), siyuan.CreateDocRequest{Notebook: id, Path: "/doomed", Markdown: "x"})
	must(t, "CreateDocWithMd", err)
	must(t, "RemoveNotebook", s.c.RemoveNotebook(t.Context(), id))
	if _, ok := s.findNotebook(t, id); ok {
		t.Fatalf("notebook %s still listed after remove", id)
	}
	// Real SiYuan drops the notebook's blocks from its block tree shortly
	// after replying.
	s.eventually(t, "doc of a removed notebook is gone", func() bool { return !s.exists(t, doc) })
	if k := s.kramdown(t, doc); k != "" {
		t.Fatalf("kramdown of a doc in a removed notebook = %q", k)
	}
}

// --------------------------------------------------------------- documents

func checkDocCreate(t *testing.T, s *suite) {
	title := "create-" + randWord(6)
	doc := s.newDoc(t, title, "hello **world**")
	if !s.exists(t, doc) {
		t.Fatalf("new doc %s does not exist", doc)
	}
	hp, err := s.c.GetHPathByID(t.Context(), doc)
	must(t, "GetHPathByID", err)
	if hp != "/"+title {
		t.Fatalf("hpath = %q, want /%s", hp, title)
	}
	kids := s.children(t, doc)
	if len(kids) != 1 || kids[0].Type != "p" || kids[0].Markdown != "hello **world**" || kids[0].Content != "hello world" {
		t.Fatalf("children = %+v", kids)
	}
	a := s.attrs(t, doc)
	if a["id"] != doc || a["title"] != title || a["type"] != "doc" || !tsRe.MatchString(a["updated"]) {
		t.Fatalf("doc attrs = %v", a)
	}
}

func checkDocIntermediate(t *testing.T, s *suite) {
	parent, child := "inter-"+randWord(6), "leaf"
	doc := s.newDocAt(t, "/"+parent+"/"+child, "leaf body")
	ids, err := s.c.GetIDsByHPath(t.Context(), s.box, "/"+parent)
	must(t, "GetIDsByHPath", err)
	if len(ids) != 1 || ids[0] == doc {
		t.Fatalf("intermediate doc ids = %v, want one new doc", ids)
	}
	pid := ids[0]
	a := s.attrs(t, pid)
	if a["title"] != parent || a["type"] != "doc" {
		t.Fatalf("intermediate doc attrs = %v", a)
	}
	p, err := s.c.GetPathByID(t.Context(), doc)
	must(t, "GetPathByID", err)
	if want := "/" + pid + "/" + doc + ".sy"; p.Path != want || p.Notebook != s.box {
		t.Fatalf("GetPathByID = %+v, want path %s in %s", p, want, s.box)
	}
	hp, err := s.c.GetHPathByID(t.Context(), doc)
	must(t, "GetHPathByID", err)
	if hp != "/"+parent+"/"+child {
		t.Fatalf("hpath = %q", hp)
	}
	list, err := s.c.ListDocsByPath(t.Context(), siyuan.ListDocsRequest{Notebook: s.box, Path: "/"})
	must(t, "ListDocsByPath", err)
	for _, f := range list.Files {
		if f.ID == pid {
			// Auto-created parents get no rank in sort.json: sort 0.
			if f.SubFileCount != 1 || f.Name != parent || f.Sort != 0 {
				t.Fatalf("intermediate doc listed as %+v, want subFileCount 1, sort 0", f)
			}
			return
		}
	}
	t.Fatalf("intermediate doc %s not listed at root", pid)
}

func checkDocSamePathTwice(t *testing.T, s *suite) {
	title := "twice-" + randWord(6)
	a := s.newDoc(t, title, "first")
	b := s.newDoc(t, title, "second")
	if a == b {
		t.Fatalf("same path twice returned the same id %s", a)
	}
	ids, err := s.c.GetIDsByHPath(t.Context(), s.box, "/"+title)
	must(t, "GetIDsByHPath", err)
	sort.Strings(ids)
	want := []string{a, b}
	sort.Strings(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("GetIDsByHPath = %v, want both %v", ids, want)
	}
	if s.children(t, b)[0].Content != "second" || s.children(t, a)[0].Content != "first" {
		t.Fatalf("the two documents do not keep their own content")
	}
}

func checkDocPinnedID(t *testing.T, s *suite) {
	want := freshID()
	id, err := s.c.CreateDocWithMd(t.Context(), siyuan.CreateDocRequest{Notebook: s.box, Path: "/pinned-" + randWord(6), Markdown: "pinned", ID: want})
	must(t, "CreateDocWithMd with ID", err)
	if id != want {
		t.Fatalf("CreateDocWithMd with ID %s returned %s", want, id)
	}
	if !s.exists(t, want) {
		t.Fatalf("pinned doc %s does not exist", want)
	}
	_, err = s.c.CreateDocWithMd(t.Context(), siyuan.CreateDocRequest{Notebook: s.box, Path: "/pinned-again", Markdown: "again", ID: want})
	apiError(t, "CreateDocWithMd with an existing ID", err)
	ids, err := s.c.GetIDsByHPath(t.Context(), s.box, "/pinned-again")
	must(t, "GetIDsByHPath", err)
	if len(ids) != 0 {
		t.Fatalf("refused create still made docs %v", ids)
	}
}

func checkDocPaths(t *testing.T, s *suite) {
	parent := "paths-" + randWord(6)
	pid := s.newDoc(t, parent, "parent")
	cid := s.newDocAt(t, "/"+parent+"/kid", "child text")
	para := s.children(t, cid)[0].ID
	for _, id := range []string{cid, para} { // a block resolves to its document
		p, err := s.c.GetPathByID(t.Context(), id)
		must(t, "GetPathByID", err)
		if p.Notebook != s.box || p.Path != "/"+pid+"/"+cid+".sy" {
			t.Fatalf("GetPathByID(%s) = %+v", id, p)
		}
		hp, err := s.c.GetHPathByID(t.Context(), id)
		must(t, "GetHPathByID", err)
		if hp != "/"+parent+"/kid" {
			t.Fatalf("GetHPathByID(%s) = %q", id, hp)
		}
	}
	ids, err := s.c.GetIDsByHPath(t.Context(), s.box, "/"+parent+"/kid")
	must(t, "GetIDsByHPath", err)
	if !slices.Equal(ids, []string{cid}) {
		t.Fatalf("GetIDsByHPath = %v, want [%s]", ids, cid)
	}
	none, err := s.c.GetIDsByHPath(t.Context(), s.box, "/"+parent+"/nobody")
	must(t, "GetIDsByHPath", err)
	if len(none) != 0 {
		t.Fatalf("GetIDsByHPath of a missing path = %v", none)
	}
	none, err = s.c.GetIDsByHPath(t.Context(), unknownID, "/"+parent)
	must(t, "GetIDsByHPath in an unknown notebook (real SiYuan: code 0, [])", err)
	if len(none) != 0 {
		t.Fatalf("GetIDsByHPath in an unknown notebook = %v", none)
	}
}

func checkDocRename(t *testing.T, s *suite) {
	title := "rename-" + randWord(6)
	doc := s.newDoc(t, title, "body")
	must(t, "RenameDocByID", s.c.RenameDocByID(t.Context(), doc, title+" renamed"))
	hp, err := s.c.GetHPathByID(t.Context(), doc)
	must(t, "GetHPathByID", err)
	if hp != "/"+title+" renamed" {
		t.Fatalf("hpath after rename = %q", hp)
	}
	di, err := s.c.GetDocInfo(t.Context(), doc)
	must(t, "GetDocInfo", err)
	if di.Name != title+" renamed" || di.IAL["title"] != title+" renamed" {
		t.Fatalf("GetDocInfo after rename = %+v", di)
	}
	if k := s.kramdown(t, doc); !strings.Contains(k, `title="`+title+` renamed"`) {
		t.Fatalf("doc kramdown after rename = %q", k)
	}
	// Real SiYuan's getBlockAttrs may serve the old title until the
	// transaction queue is flushed.
	s.flush(t)
	if a := s.attrs(t, doc); a["title"] != title+" renamed" {
		t.Fatalf("title attr after rename and flush = %q", a["title"])
	}
	old, err := s.c.GetIDsByHPath(t.Context(), s.box, "/"+title)
	must(t, "GetIDsByHPath", err)
	if len(old) != 0 {
		t.Fatalf("old hpath still resolves to %v", old)
	}
}

func checkDocMove(t *testing.T, s *suite) {
	a := "move-a-" + randWord(6)
	b := "move-b-" + randWord(6)
	aid := s.newDoc(t, a, "a")
	bid := s.newDoc(t, b, "b")
	kid := s.newDocAt(t, "/"+a+"/kid", "k")
	must(t, "MoveDocsByID", s.c.MoveDocsByID(t.Context(), []string{kid}, bid))
	hp, err := s.c.GetHPathByID(t.Context(), kid)
	must(t, "GetHPathByID", err)
	if hp != "/"+b+"/kid" {
		t.Fatalf("hpath after move = %q, want /%s/kid", hp, b)
	}
	p, err := s.c.GetPathByID(t.Context(), kid)
	must(t, "GetPathByID", err)
	if p.Path != "/"+bid+"/"+kid+".sy" {
		t.Fatalf("path after move = %q", p.Path)
	}
	underA, err := s.c.ListDocsByPath(t.Context(), siyuan.ListDocsRequest{Notebook: s.box, Path: "/" + aid + ".sy"})
	must(t, "ListDocsByPath", err)
	if len(underA.Files) != 0 {
		t.Fatalf("old parent still lists %+v", underA.Files)
	}
	underB, err := s.c.ListDocsByPath(t.Context(), siyuan.ListDocsRequest{Notebook: s.box, Path: "/" + bid + ".sy"})
	must(t, "ListDocsByPath", err)
	if len(underB.Files) != 1 || underB.Files[0].ID != kid {
		t.Fatalf("new parent lists %+v", underB.Files)
	}
	// Moving to the notebook ID puts it back at the root.
	must(t, "MoveDocsByID to notebook", s.c.MoveDocsByID(t.Context(), []string{kid}, s.box))
	p, err = s.c.GetPathByID(t.Context(), kid)
	must(t, "GetPathByID", err)
	if p.Path != "/"+kid+".sy" {
		t.Fatalf("path after move to root = %q", p.Path)
	}
}

func checkDocRemove(t *testing.T, s *suite) {
	title := "remove-" + randWord(6)
	doc := s.newDoc(t, title, "soon gone")
	kid := s.newDocAt(t, "/"+title+"/kid", "also gone")
	must(t, "RemoveDocByID", s.c.RemoveDocByID(t.Context(), doc))
	if s.exists(t, doc) || s.exists(t, kid) {
		t.Fatalf("removed doc or its child still exists")
	}
	ids, err := s.c.GetIDsByHPath(t.Context(), s.box, "/"+title)
	must(t, "GetIDsByHPath", err)
	if len(ids) != 0 {
		t.Fatalf("removed doc still resolves: %v", ids)
	}
	if k := s.kramdown(t, doc); k != "" {
		t.Fatalf("kramdown of removed doc = %q", k)
	}
}

func checkDocRemoveByBlockID(t *testing.T, s *suite) {
	// Real SiYuan resolves any block ID to its document: removeDocByID with
	// a paragraph's ID removes the whole document (code 0).
	title := "rmblock-" + randWord(6)
	doc, ps := s.docWithParas(t, title, "para", "other")
	must(t, "RemoveDocByID(paragraph id)", s.c.RemoveDocByID(t.Context(), ps[0]))
	if s.exists(t, doc) || s.exists(t, ps[1]) {
		t.Fatalf("document %s survived removeDocByID of its paragraph %s", doc, ps[0])
	}
	ids, err := s.c.GetIDsByHPath(t.Context(), s.box, "/"+title)
	must(t, "GetIDsByHPath", err)
	if len(ids) != 0 {
		t.Fatalf("removed doc still resolves: %v", ids)
	}
}

func (s *suite) listUnder(t *testing.T, parent string) []siyuan.DocFile {
	t.Helper()
	custom := sortModeCustom // explicit, so a user's global sort setting does not matter
	list, err := s.c.ListDocsByPath(t.Context(), siyuan.ListDocsRequest{Notebook: s.box, Path: "/" + parent + ".sy", Sort: &custom})
	must(t, "ListDocsByPath", err)
	if list.Box != s.box {
		t.Fatalf("ListDocsByPath.Box = %q", list.Box)
	}
	return list.Files
}

func names(files []siyuan.DocFile) []string {
	var n []string
	for _, f := range files {
		n = append(n, f.Name)
	}
	return n
}

func checkDocListOrder(t *testing.T, s *suite) {
	parent := "order-" + randWord(6)
	pid := s.newDoc(t, parent, "p")
	var ids []string
	for _, n := range []string{"c1", "c2", "c3"} {
		ids = append(ids, s.newDocAt(t, "/"+parent+"/"+n, n))
	}
	files := s.listUnder(t, pid)
	requireOrder(t, "children of a new doc", names(files), []string{"c1", "c2", "c3"})
	for i, f := range files {
		if f.ID != ids[i] || f.Path != "/"+pid+"/"+ids[i]+".sy" || f.Sort != i+1 {
			t.Fatalf("file %d = {id %s path %s sort %d}, want id %s sort %d", i, f.ID, f.Path, f.Sort, ids[i], i+1)
		}
	}
}

func checkDocChangeSort(t *testing.T, s *suite) {
	parent := "sort-" + randWord(6)
	pid := s.newDoc(t, parent, "p")
	var paths []string
	for _, n := range []string{"c1", "c2", "c3"} {
		id := s.newDocAt(t, "/"+parent+"/"+n, n)
		paths = append(paths, "/"+pid+"/"+id+".sy")
	}
	slices.Reverse(paths)
	must(t, "ChangeSort", s.c.ChangeSort(t.Context(), s.box, paths))
	files := s.listUnder(t, pid)
	requireOrder(t, "children after ChangeSort", names(files), []string{"c3", "c2", "c1"})
	for i, f := range files {
		if f.Sort != i+1 {
			t.Fatalf("file %s sort = %d, want %d", f.Name, f.Sort, i+1)
		}
	}
}

func checkDocListRoot(t *testing.T, s *suite) {
	title := "root-" + randWord(6)
	doc := s.newDoc(t, title, "r")
	for _, hidden := range []bool{false, true} {
		list, err := s.c.ListDocsByPath(t.Context(), siyuan.ListDocsRequest{Notebook: s.box, Path: "/", ShowHidden: hidden})
		must(t, "ListDocsByPath /", err)
		if list.Box != s.box || list.Path != "/" {
			t.Fatalf("ListDocsByPath / = box %q path %q", list.Box, list.Path)
		}
		found := false
		for _, f := range list.Files {
			if f.ID == s.box {
				t.Fatalf("the notebook's own document is listed (showHidden=%v): %+v", hidden, f)
			}
			if f.ID == doc {
				found = true
				if f.Name != title || f.Path != "/"+doc+".sy" || f.SubFileCount != 0 {
					t.Fatalf("listed %+v", f)
				}
			}
		}
		if !found {
			t.Fatalf("doc %s not listed at root (showHidden=%v)", doc, hidden)
		}
	}
}

func checkDocInfo(t *testing.T, s *suite) {
	title := "info-" + randWord(6)
	doc := s.newDoc(t, title, "x")
	s.newDocAt(t, "/"+title+"/kid", "y")
	di, err := s.c.GetDocInfo(t.Context(), doc)
	must(t, "GetDocInfo", err)
	if di.ID != doc || di.RootID != doc || di.Name != title || di.SubFileCount != 1 || di.RefCount != 0 {
		t.Fatalf("GetDocInfo = %+v", di)
	}
	if di.IAL["type"] != "doc" || di.IAL["title"] != title || di.IAL["id"] != doc {
		t.Fatalf("GetDocInfo.IAL = %v", di.IAL)
	}
}

func checkDocInfoOfBlock(t *testing.T, s *suite) {
	// getDocInfo of a block describes the block's document, under the
	// block's own ID.
	title := "docinfoblk-" + randWord(6)
	doc, ps := s.docWithParas(t, title, "para")
	di, err := s.c.GetDocInfo(t.Context(), ps[0])
	must(t, "GetDocInfo(paragraph)", err)
	if di.ID != ps[0] || di.RootID != doc || di.Name != title {
		t.Fatalf("GetDocInfo(paragraph) = %+v, want id %s rootID %s name %q", di, ps[0], doc, title)
	}
	if di.IAL["id"] != doc || di.IAL["type"] != "doc" || di.IAL["title"] != title {
		t.Fatalf("GetDocInfo(paragraph).IAL = %v, want the document's IAL", di.IAL)
	}
}

func checkBlockInfo(t *testing.T, s *suite) {
	title := "binfo-" + randWord(6)
	doc, ps := s.docWithParas(t, title, "p")
	bi, err := s.c.GetBlockInfo(t.Context(), ps[0])
	must(t, "GetBlockInfo", err)
	want := siyuan.BlockInfo{Box: s.box, Path: "/" + doc + ".sy", RootID: doc, RootTitle: title, RootChildID: doc}
	if bi != want {
		t.Fatalf("GetBlockInfo = %+v\nwant %+v", bi, want)
	}
}

func checkDocKramdown(t *testing.T, s *suite) {
	title := "kd-" + randWord(6)
	doc, ps := s.docWithParas(t, title, "alpha", "beta")
	got := normKramdown(s.kramdown(t, doc), map[string]string{doc: "D", ps[0]: "P0", ps[1]: "P1"})
	want := "alpha\n{: id=\"P0\" updated=\"TS\"}\n\nbeta\n{: id=\"P1\" updated=\"TS\"}\n\n" +
		"{: id=\"D\" title=\"" + title + "\" type=\"doc\" updated=\"TS\"}"
	if got != want {
		t.Fatalf("doc kramdown\n got %q\nwant %q", got, want)
	}
}

// richMarkdown exercises the syntax agents write: headings, inline marks,
// nested and task lists, code, math, quotes, callouts, tables, links, tags.
const richMarkdown = "# Title here\n\nText with **bold**, *em*, `code`, ~~del~~, ==mark==, $x^2$ and a [link](https://example.com \"t\").\n\n" +
	"## Lists\n\n- one\n  - nested\n- two\n\n1. first\n2. second\n\n- [ ] todo\n- [x] done\n\n" +
	"```go\nfunc main() {}\n```\n\n$$\nE = mc^2\n$$\n\n> quoted **text**\n\n> [!NOTE]\n> callout body\n\n" +
	"| h1 | h2 |\n| :- | -: |\n| a | b |\n\n---\n\nA #tag# here.\n"

// checkRichKramdown: a document with varied syntax reads back with the same
// kramdown on every kernel, once ids and timestamps are normalised.
func checkRichKramdown(t *testing.T, s *suite) {
	title := "rich-" + randWord(6)
	doc := s.newDoc(t, title, richMarkdown)
	got := normKramdown(s.kramdown(t, doc), map[string]string{doc: "D"})
	got = strings.ReplaceAll(got, title, "TITLE")
	if got != richKramdown {
		t.Fatalf("rich kramdown\n got %q\nwant %q", got, richKramdown)
	}
}

// richKramdown is what SiYuan 3.7.3 answers for richMarkdown (ids → ID?).
const richKramdown = "# Title here\n{: id=\"ID?\" updated=\"TS\"}\n\nText with **bold**, *em*, `code`\u200b, ~~del~~, ==mark==, $x^2$ and a [link](https://example.com \"t\").\n{: id=\"ID?\" updated=\"TS\"}\n\n## Lists\n{: id=\"ID?\" updated=\"TS\"}\n\n- {: id=\"ID?\" updated=\"TS\"}one\n  {: id=\"ID?\" updated=\"TS\"}\n\n  - {: id=\"ID?\" updated=\"TS\"}nested\n    {: id=\"ID?\" updated=\"TS\"}\n  {: id=\"ID?\" updated=\"TS\"}\n- {: id=\"ID?\" updated=\"TS\"}two\n  {: id=\"ID?\" updated=\"TS\"}\n{: id=\"ID?\" updated=\"TS\"}\n\n1. {: id=\"ID?\" updated=\"TS\"}first\n   {: id=\"ID?\" updated=\"TS\"}\n2. {: id=\"ID?\" updated=\"TS\"}second\n   {: id=\"ID?\" updated=\"TS\"}\n{: id=\"ID?\" updated=\"TS\"}\n\n- {: id=\"ID?\" updated=\"TS\"}[ ] todo\n  {: id=\"ID?\" updated=\"TS\"}\n- {: id=\"ID?\" updated=\"TS\"}[X] done\n  {: id=\"ID?\" updated=\"TS\"}\n{: id=\"ID?\" updated=\"TS\"}\n\n```go\nfunc main() {}\n```\n{: id=\"ID?\" updated=\"TS\"}\n\n$$\nE = mc^2\n$$\n{: id=\"ID?\" updated=\"TS\"}\n\n> quoted **text**\n> {: id=\"ID?\" updated=\"TS\"}\n>\n{: id=\"ID?\" updated=\"TS\"}\n\n> [!NOTE]\n> callout body\n> {: id=\"ID?\" updated=\"TS\"}\n>\n{: id=\"ID?\" updated=\"TS\"}\n\n|h1|h2|\n| :---| ---: |\n|a|b|\n{: colgroup=\"|\" id=\"ID?\" updated=\"TS\"}\n\n---\n{: id=\"ID?\" updated=\"TS\"}\n\nA #tag# here.\n{: id=\"ID?\" updated=\"TS\"}\n\n{: id=\"D\" title=\"TITLE\" type=\"doc\" updated=\"TS\"}"

// ------------------------------------------------------------- block reads

func checkChildTypes(t *testing.T, s *suite) {
	md := "# Head\n\npara **b**\n\n- i1\n- i2\n\n```go\nx := 1\n```\n\n> q\n\n| a | b |\n| - | - |\n| 1 | 2 |\n"
	doc := s.newDoc(t, "types-"+randWord(6), md)
	kids := s.children(t, doc)
	type tk struct{ typ, sub string }
	var got []tk
	for _, k := range kids {
		got = append(got, tk{k.Type, k.SubType})
	}
	want := []tk{{"h", "h1"}, {"p", ""}, {"l", "u"}, {"c", ""}, {"b", ""}, {"t", ""}}
	if !slices.Equal(got, want) {
		t.Fatalf("child types = %v, want %v", got, want)
	}
	if kids[0].Content != "Head" || kids[0].Markdown != "# Head" || kids[1].Markdown != "para **b**" || kids[1].Content != "para b" {
		t.Fatalf("heading/paragraph = %+v %+v", kids[0], kids[1])
	}
	if kids[3].Markdown != "```go\nx := 1\n```" {
		t.Fatalf("code markdown = %q", kids[3].Markdown)
	}
	// Container content joins the children's text, each with a leading space.
	if kids[2].Markdown != "- i1\n- i2" || kids[2].Content != " i1 i2" {
		t.Fatalf("list = {markdown %q content %q}, want content \" i1 i2\"", kids[2].Markdown, kids[2].Content)
	}
	if kids[4].Markdown != "> q" || kids[4].Content != " q" {
		t.Fatalf("blockquote = {markdown %q content %q}, want content \" q\"", kids[4].Markdown, kids[4].Content)
	}
	// A list's children are its items.
	items := s.children(t, kids[2].ID)
	if len(items) != 2 || items[0].Type != "i" || items[0].SubType != "u" || items[0].Content != " i1" || items[0].Markdown != "- i1" {
		t.Fatalf("list children = %+v, want items with content \" i1\"", items)
	}
}

func checkBlockDOM(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "dom-"+randWord(6), "plain **bold** *em*")
	d, err := s.c.GetBlockDOM(t.Context(), ps[0])
	must(t, "GetBlockDOM", err)
	if d.ID != ps[0] {
		t.Fatalf("GetBlockDOM.ID = %q", d.ID)
	}
	for _, want := range []string{
		`data-node-id="` + ps[0] + `"`, `data-type="NodeParagraph"`, `class="p"`,
		`<span data-type="strong">bold</span>`, `<span data-type="em">em</span>`,
	} {
		if !strings.Contains(d.DOM, want) {
			t.Fatalf("DOM lacks %s:\n%s", want, d.DOM)
		}
	}
}

func checkKramdownsBatch(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "kds-"+randWord(6), "one", "two")
	m, err := s.c.GetBlockKramdowns(t.Context(), ps)
	must(t, "GetBlockKramdowns", err)
	if len(m) != 2 {
		t.Fatalf("GetBlockKramdowns = %v", m)
	}
	for i, txt := range []string{"one", "two"} {
		got := normKramdown(m[ps[i]], map[string]string{ps[i]: "P"})
		if want := txt + "\n{: id=\"P\" updated=\"TS\"}"; got != want {
			t.Fatalf("kramdown[%d] = %q, want %q", i, got, want)
		}
	}
}

// checkBlocksIndexes: getBlocksIndexes loads the first id's document and
// gives every id the 1-based position of the top-level block holding it
// (nested blocks share it); the document itself, blocks of other
// documents, unknown and malformed ids read 0; a first id that is unknown
// or malformed answers an empty map.
func checkBlocksIndexes(t *testing.T, s *suite) {
	doc := s.newDoc(t, "idx-"+randWord(6), "p1\n\n- item a\n- item b\n\n> quote\n\np4")
	top := s.childIDs(t, doc) // paragraph, list, blockquote, paragraph
	if len(top) != 4 {
		t.Fatalf("the document has %d top-level blocks, want 4", len(top))
	}
	items := s.childIDs(t, top[1])
	if len(items) != 2 {
		t.Fatalf("the list has %d items, want 2", len(items))
	}
	itemPara := s.childIDs(t, items[1])
	quotePara := s.childIDs(t, top[2])
	if len(itemPara) != 1 || len(quotePara) != 1 {
		t.Fatalf("list item children %v, blockquote children %v, want one paragraph each", itemPara, quotePara)
	}
	other := s.newDoc(t, "idx-other-"+randWord(6), "elsewhere")
	otherPara := s.childIDs(t, other)[0]
	ids := []string{top[0], items[1], itemPara[0], top[1], quotePara[0], top[3], doc, otherPara, unknownID, "bad"}
	got, err := s.c.GetBlocksIndexes(t.Context(), ids)
	must(t, "GetBlocksIndexes", err)
	want := map[string]int{top[0]: 1, items[1]: 2, itemPara[0]: 2, top[1]: 2, quotePara[0]: 3, top[3]: 4, doc: 0, otherPara: 0, unknownID: 0, "bad": 0}
	if !maps.Equal(got, want) {
		t.Fatalf("GetBlocksIndexes(%v)\n got %v\nwant %v", ids, got, want)
	}
	// Led by the document, or by a block of another document.
	got, err = s.c.GetBlocksIndexes(t.Context(), []string{doc, top[3], otherPara})
	must(t, "GetBlocksIndexes led by the document", err)
	wantEqual(t, "indexes led by the document", fmt.Sprint(got), fmt.Sprint(map[string]int{doc: 0, top[3]: 4, otherPara: 0}))
	got, err = s.c.GetBlocksIndexes(t.Context(), []string{otherPara, top[0], otherPara})
	must(t, "GetBlocksIndexes led by another document's block", err)
	wantEqual(t, "indexes led by another document's block", fmt.Sprint(got), fmt.Sprint(map[string]int{otherPara: 1, top[0]: 0}))
	for _, first := range []string{unknownID, "bad"} {
		got, err = s.c.GetBlocksIndexes(t.Context(), []string{first, top[0]})
		must(t, "GetBlocksIndexes led by "+first, err)
		wantEqual(t, "indexes led by "+first, len(got), 0)
	}
}

func checkKramdownsBatchNonID(t *testing.T, s *suite) {
	// Real SiYuan answers {code:0, data:null} when any ID is malformed, which
	// the client must report as a failure, not as a partial result.
	_, ps := s.docWithParas(t, "kdsbad-"+randWord(6), "one")
	m, err := s.c.GetBlockKramdowns(t.Context(), []string{ps[0], "nope"})
	var api *siyuan.APIError
	var null *siyuan.NullDataError
	if !errors.As(err, &api) && !errors.As(err, &null) {
		t.Fatalf("GetBlockKramdowns with a non-ID: want *APIError or *NullDataError, got %v (result %v)", err, m)
	}
	// Unknown but well-formed IDs are just left out.
	m, err = s.c.GetBlockKramdowns(t.Context(), []string{ps[0], unknownID})
	must(t, "GetBlockKramdowns with an unknown ID", err)
	if _, ok := m[unknownID]; ok || len(m) != 1 || m[ps[0]] == "" {
		t.Fatalf("GetBlockKramdowns = %v, want only %s", m, ps[0])
	}
}

func checkKramdownUnknown(t *testing.T, s *suite) {
	k, err := s.c.GetBlockKramdown(t.Context(), unknownID)
	must(t, "GetBlockKramdown of an unknown ID", err)
	if k.Kramdown != "" || k.ID != unknownID {
		t.Fatalf("GetBlockKramdown(unknown) = %+v, want empty kramdown for that id", k)
	}
}

func checkKramdownNonID(t *testing.T, s *suite) {
	// Real SiYuan 3.7.3 validates the ID shape first: code -1 "invalid ID argument".
	for _, bad := range []string{"nope", "2020-abc", "20200101000000-ABCDEFG"} {
		_, err := s.c.GetBlockKramdown(t.Context(), bad)
		api := apiError(t, "GetBlockKramdown("+bad+")", err)
		if api.Code != -1 || !strings.Contains(api.Msg, "invalid ID") {
			t.Fatalf("GetBlockKramdown(%s): code %d msg %q, want -1 invalid ID argument", bad, api.Code, api.Msg)
		}
	}
}

func checkAttrsUnknown(t *testing.T, s *suite) {
	a, err := s.c.GetBlockAttrs(t.Context(), unknownID)
	must(t, "GetBlockAttrs of an unknown ID", err)
	if len(a) != 0 {
		t.Fatalf("GetBlockAttrs(unknown) = %v, want empty", a)
	}
	_, err = s.c.GetBlockAttrs(t.Context(), "nope")
	apiError(t, "GetBlockAttrs(nope)", err)
}

func checkChildrenUnknown(t *testing.T, s *suite) {
	kids, err := s.c.GetChildBlocks(t.Context(), unknownID)
	must(t, "GetChildBlocks of an unknown ID", err)
	if len(kids) != 0 {
		t.Fatalf("GetChildBlocks(unknown) = %v", kids)
	}
	if s.exists(t, unknownID) {
		t.Fatalf("CheckBlockExist(unknown) = true")
	}
	_, err = s.c.GetChildBlocks(t.Context(), "nope")
	apiError(t, "GetChildBlocks(nope)", err)
}

// ----------------------------------------------------------- block inserts

func checkAppend(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "append-"+randWord(6), "first", "last")
	txs, err := s.c.AppendBlock(t.Context(), "markdown", "appended", doc)
	must(t, "AppendBlock", err)
	op := oneInsert(t, txs)
	id := siyuan.FirstInsertedID(txs)
	if !nodeIDRe.MatchString(id) || op.ID != id {
		t.Fatalf("FirstInsertedID = %q, op.ID = %q", id, op.ID)
	}
	if op.ParentID != doc || op.PreviousID != ps[1] {
		t.Fatalf("op parentID %q previousID %q, want %s %s", op.ParentID, op.PreviousID, doc, ps[1])
	}
	if dom, _ := op.Data.(string); !strings.Contains(dom, `data-node-id="`+id+`"`) {
		t.Fatalf("op data lacks the new block DOM: %v", op.Data)
	}
	requireOrder(t, "after append", s.childIDs(t, doc), []string{ps[0], ps[1], id})
	if kids := s.children(t, doc); kids[2].Content != "appended" {
		t.Fatalf("appended content = %q", kids[2].Content)
	}
}

func checkPrepend(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "prepend-"+randWord(6), "first", "last")
	txs, err := s.c.PrependBlock(t.Context(), "markdown", "prepended", doc)
	must(t, "PrependBlock", err)
	op := oneInsert(t, txs)
	id := siyuan.FirstInsertedID(txs)
	if !nodeIDRe.MatchString(id) || op.ID != id {
		t.Fatalf("FirstInsertedID = %q, op.ID = %q", id, op.ID)
	}
	if op.ParentID != doc || op.PreviousID != "" {
		t.Fatalf("op parentID %q previousID %q", op.ParentID, op.PreviousID)
	}
	requireOrder(t, "after prepend", s.childIDs(t, doc), []string{id, ps[0], ps[1]})
}

func checkInsertPrevious(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "insprev-"+randWord(6), "a", "b")
	txs, err := s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", Data: "after a", PreviousID: ps[0]})
	must(t, "InsertBlock", err)
	op := oneInsert(t, txs)
	id := siyuan.FirstInsertedID(txs)
	if !nodeIDRe.MatchString(id) || op.PreviousID != ps[0] || op.ParentID != doc {
		t.Fatalf("id %q, op previousID %q parentID %q", id, op.PreviousID, op.ParentID)
	}
	requireOrder(t, "after insert with previousID", s.childIDs(t, doc), []string{ps[0], id, ps[1]})
}

func checkInsertNext(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "insnext-"+randWord(6), "a", "b")
	txs, err := s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", Data: "before b", NextID: ps[1]})
	must(t, "InsertBlock", err)
	op := oneInsert(t, txs)
	id := siyuan.FirstInsertedID(txs)
	if !nodeIDRe.MatchString(id) || op.NextID != ps[1] {
		t.Fatalf("id %q, op nextID %q", id, op.NextID)
	}
	requireOrder(t, "after insert with nextID", s.childIDs(t, doc), []string{ps[0], id, ps[1]})
	// nextID wins over previousID.
	txs, err = s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", Data: "before a", NextID: ps[0], PreviousID: ps[1]})
	must(t, "InsertBlock", err)
	id2 := siyuan.FirstInsertedID(txs)
	requireOrder(t, "nextID over previousID", s.childIDs(t, doc), []string{id2, ps[0], id, ps[1]})
}

func checkInsertParent(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "inspar-"+randWord(6), "a", "b")
	txs, err := s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", Data: "via parent", ParentID: doc})
	must(t, "InsertBlock", err)
	op := oneInsert(t, txs)
	id := siyuan.FirstInsertedID(txs)
	if !nodeIDRe.MatchString(id) || op.ParentID != doc {
		t.Fatalf("id %q, op parentID %q", id, op.ParentID)
	}
	requireOrder(t, "after insert with parentID only", s.childIDs(t, doc), []string{id, ps[0], ps[1]})
}

func checkInsertMulti(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "multi-"+randWord(6), "a", "z")
	txs, err := s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", Data: "m1\n\nm2\n\n# m3", PreviousID: ps[0]})
	must(t, "InsertBlock", err)
	op := oneInsert(t, txs)
	ids := siyuan.InsertedIDs(txs)
	if len(ids) != 3 {
		t.Fatalf("InsertedIDs = %v, want 3 ids", ids)
	}
	if op.ID != ids[0] || siyuan.FirstInsertedID(txs) != ids[0] {
		t.Fatalf("op.ID %q / FirstInsertedID %q, want the first block %s", op.ID, siyuan.FirstInsertedID(txs), ids[0])
	}
	requireOrder(t, "after multi insert", s.childIDs(t, doc), []string{ps[0], ids[0], ids[1], ids[2], ps[1]})
	kids := s.children(t, doc)
	if kids[1].Content != "m1" || kids[2].Content != "m2" || kids[3].Type != "h" || kids[3].Content != "m3" {
		t.Fatalf("inserted blocks = %+v", kids[1:4])
	}
}

func checkInsertPinnedID(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "pinblk-"+randWord(6), "a")
	want := freshID()
	txs, err := s.c.AppendBlock(t.Context(), "markdown", "pinned block\n{: id=\""+want+"\" custom-pin=\"yes\"}", doc)
	must(t, "AppendBlock", err)
	if got := siyuan.FirstInsertedID(txs); got != want {
		t.Fatalf("FirstInsertedID = %q, want the IAL id %s", got, want)
	}
	requireOrder(t, "after pinned append", s.childIDs(t, doc), []string{ps[0], want})
	if a := s.attrs(t, want); a["custom-pin"] != "yes" || a["id"] != want {
		t.Fatalf("pinned block attrs = %v", a)
	}
}

func checkInsertUnknownPrevious(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "insunk-"+randWord(6), "a")
	txs, err := s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", Data: "orphan", PreviousID: unknownID})
	must(t, "InsertBlock after an unknown block (kernel says code 0)", err)
	if len(txs) != 1 || len(txs[0].DoOperations) != 1 {
		t.Fatalf("transactions = %+v", txs)
	}
	if op := txs[0].DoOperations[0]; op.ID != "" || op.PreviousID != unknownID {
		t.Fatalf("echoed op id %q previousID %q, want empty id (nothing inserted)", op.ID, op.PreviousID)
	}
	s.flush(t)
	if id := siyuan.FirstInsertedID(txs); id != "" && s.exists(t, id) {
		t.Fatalf("block %s from a failed insert exists", id)
	}
	requireOrder(t, "doc untouched", s.childIDs(t, doc), ps)
}

func checkInsertLeafParent(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "insleaf-"+randWord(6), "leaf")
	_, err := s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", Data: "child of a paragraph", ParentID: ps[0]})
	apiError(t, "InsertBlock into a paragraph", err)
	_, err = s.c.AppendBlock(t.Context(), "markdown", "child of a paragraph", ps[0])
	apiError(t, "AppendBlock into a paragraph", err)
	requireOrder(t, "doc untouched", s.childIDs(t, doc), ps)
}

// --------------------------------------------------- updates and attributes

func checkUpdateKramdown(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "upd-"+randWord(6), "before", "other")
	txs, err := s.c.UpdateBlock(t.Context(), ps[0], "markdown", "after **bold** `code`")
	must(t, "UpdateBlock", err)
	if len(txs) != 1 || len(txs[0].DoOperations) != 1 || txs[0].DoOperations[0].Action != "update" || txs[0].DoOperations[0].ID != ps[0] {
		t.Fatalf("UpdateBlock transactions = %+v", txs)
	}
	got := normKramdown(s.kramdown(t, ps[0]), map[string]string{ps[0]: "P"})
	if want := "after **bold** `code`\n{: id=\"P\" updated=\"TS\"}"; got != want {
		t.Fatalf("kramdown after update\n got %q\nwant %q", got, want)
	}
	requireOrder(t, "update keeps id and place", s.childIDs(t, doc), ps)
	// A heading replaces the paragraph but keeps the ID.
	_, err = s.c.UpdateBlock(t.Context(), ps[0], "markdown", "## now a heading")
	must(t, "UpdateBlock", err)
	kids := s.children(t, doc)
	if kids[0].ID != ps[0] || kids[0].Type != "h" || kids[0].SubType != "h2" {
		t.Fatalf("after update to heading: %+v", kids[0])
	}
}

func checkUpdateDropsAttrs(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "dropattr-"+randWord(6), "text")
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), ps[0], map[string]string{"custom-x": "y", "alias": "al"}))
	if a := s.attrs(t, ps[0]); a["custom-x"] != "y" {
		t.Fatalf("attrs before update = %v", a)
	}
	_, err := s.c.UpdateBlock(t.Context(), ps[0], "markdown", "changed")
	must(t, "UpdateBlock", err)
	a := s.attrs(t, ps[0])
	if _, ok := a["custom-x"]; ok {
		t.Fatalf("custom-x survived updateBlock: %v (real SiYuan drops it)", a)
	}
	if _, ok := a["alias"]; ok {
		t.Fatalf("alias survived updateBlock: %v (real SiYuan drops it)", a)
	}
	if a["id"] != ps[0] {
		t.Fatalf("attrs after update = %v", a)
	}
	got := normKramdown(s.kramdown(t, ps[0]), map[string]string{ps[0]: "P"})
	if want := "changed\n{: id=\"P\" updated=\"TS\"}"; got != want {
		t.Fatalf("kramdown after update = %q, want %q", got, want)
	}
}

func checkUpdateNewIAL(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "newial-"+randWord(6), "text")
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), ps[0], map[string]string{"custom-old": "1"}))
	_, err := s.c.UpdateBlock(t.Context(), ps[0], "markdown", "kept\n{: custom-new=\"2\"}")
	must(t, "UpdateBlock", err)
	a := s.attrs(t, ps[0])
	if a["custom-new"] != "2" || a["custom-old"] != "" || a["id"] != ps[0] {
		t.Fatalf("attrs after update with IAL = %v, want custom-new only", a)
	}
	got := normKramdown(s.kramdown(t, ps[0]), map[string]string{ps[0]: "P"})
	if want := "kept\n{: custom-new=\"2\" id=\"P\" updated=\"TS\"}"; got != want {
		t.Fatalf("kramdown = %q, want %q", got, want)
	}
}

func checkUpdateUpdated(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "updated-"+randWord(6), "v1")
	before := s.attrs(t, ps[0])["updated"]
	if !tsRe.MatchString(before) {
		t.Fatalf("updated = %q, want 14 digits", before)
	}
	time.Sleep(1100 * time.Millisecond) // `updated` has one-second resolution
	_, err := s.c.UpdateBlock(t.Context(), ps[0], "markdown", "v2")
	must(t, "UpdateBlock", err)
	after := s.attrs(t, ps[0])["updated"]
	if !tsRe.MatchString(after) || after <= before {
		t.Fatalf("updated %q -> %q, want it to increase", before, after)
	}
}

func checkAttrsSetGet(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "attrs-"+randWord(6), "text")
	set := map[string]string{"custom-a": "1", "custom-b": "with \"quotes\" & <tags>", "name": "nm", "alias": "al", "memo": "me", "bookmark": "bm"}
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), ps[0], set))
	a := s.attrs(t, ps[0])
	for k, v := range set {
		if a[k] != v {
			t.Fatalf("attr %s = %q, want %q (all: %v)", k, a[k], v, a)
		}
	}
	if a["id"] != ps[0] || !tsRe.MatchString(a["updated"]) {
		t.Fatalf("attrs = %v", a)
	}
	k := s.kramdown(t, ps[0])
	if !strings.Contains(k, `custom-a="1"`) || !strings.Contains(k, `name="nm"`) {
		t.Fatalf("kramdown IAL lacks the attributes: %q", k)
	}
	// Setting one attribute leaves the others alone.
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), ps[0], map[string]string{"custom-a": "2"}))
	a = s.attrs(t, ps[0])
	if a["custom-a"] != "2" || a["custom-b"] != set["custom-b"] || a["name"] != "nm" {
		t.Fatalf("attrs after partial set = %v", a)
	}
}

func checkAttrsRemove(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "attrrm-"+randWord(6), "text")
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), ps[0], map[string]string{"custom-e": "1", "custom-n": "2", "custom-k": "3"}))
	must(t, "SetBlockAttrs empty", s.c.SetBlockAttrs(t.Context(), ps[0], map[string]string{"custom-e": ""}))
	raw := map[string]any{"id": ps[0], "attrs": map[string]any{"custom-n": nil}}
	must(t, "setBlockAttrs null", s.c.Do(t.Context(), "/api/attr/setBlockAttrs", raw, nil, siyuan.Write))
	a := s.attrs(t, ps[0])
	if _, ok := a["custom-e"]; ok {
		t.Fatalf(`"" did not remove custom-e: %v`, a)
	}
	if _, ok := a["custom-n"]; ok {
		t.Fatalf("null did not remove custom-n: %v", a)
	}
	if a["custom-k"] != "3" {
		t.Fatalf("untouched custom-k lost: %v", a)
	}
	if k := s.kramdown(t, ps[0]); strings.Contains(k, "custom-e") || strings.Contains(k, "custom-n") {
		t.Fatalf("removed attributes still in kramdown: %q", k)
	}
}

func checkAttrsBatch(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "attrbatch-"+randWord(6), "one", "two")
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), ps[1], map[string]string{"custom-two": "2"}))
	m, err := s.c.BatchGetBlockAttrs(t.Context(), append(slices.Clone(ps), unknownID))
	must(t, "BatchGetBlockAttrs", err)
	if _, ok := m[unknownID]; ok {
		t.Fatalf("BatchGetBlockAttrs lists the unknown id: %v", m)
	}
	if len(m) != 2 || m[ps[0]]["id"] != ps[0] || m[ps[1]]["custom-two"] != "2" || m[ps[0]]["custom-two"] != "" {
		t.Fatalf("BatchGetBlockAttrs = %v", m)
	}
}

func checkAttrsInvalidName(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "attrbad-"+randWord(6), "text")
	err := s.c.SetBlockAttrs(t.Context(), ps[0], map[string]string{"Bad Name": "x"})
	apiError(t, "SetBlockAttrs with an invalid name", err)
	if a := s.attrs(t, ps[0]); len(a) != 2 {
		t.Fatalf("attrs after refused set = %v, want only id and updated", a)
	}
}

func checkTransactions(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "tx-"+randWord(6), "before tx")
	d, err := s.c.GetBlockDOM(t.Context(), ps[0])
	must(t, "GetBlockDOM", err)
	newDOM := strings.Replace(d.DOM, "before tx", "after tx", 1)
	if newDOM == d.DOM {
		t.Fatalf("DOM does not contain the text: %s", d.DOM)
	}
	out, err := s.c.Transactions(t.Context(), []siyuan.Transaction{{
		DoOperations:   []siyuan.Operation{{Action: "update", ID: ps[0], Data: newDOM}},
		UndoOperations: []siyuan.Operation{{Action: "update", ID: ps[0], Data: d.DOM}},
	}})
	must(t, "Transactions", err)
	if len(out) != 1 || len(out[0].DoOperations) != 1 || out[0].DoOperations[0].Action != "update" || out[0].Timestamp == 0 {
		t.Fatalf("Transactions returned %+v", out)
	}
	s.flush(t)
	got := normKramdown(s.kramdown(t, ps[0]), map[string]string{ps[0]: "P"})
	if !strings.HasPrefix(got, "after tx\n{: id=\"P\" ") {
		t.Fatalf("kramdown after transaction = %q", got)
	}
}

// --------------------------------------------------- move, delete and fold

func checkMovePrevious(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "mvprev-"+randWord(6), "a", "b", "c")
	must(t, "MoveBlock", s.c.MoveBlock(t.Context(), ps[0], ps[2], ""))
	requireOrder(t, "after move", s.childIDs(t, doc), []string{ps[1], ps[2], ps[0]})
	got := normKramdown(s.kramdown(t, ps[0]), map[string]string{ps[0]: "P"})
	if want := "a\n{: id=\"P\" updated=\"TS\"}"; got != want {
		t.Fatalf("moved block kramdown = %q, want %q", got, want)
	}
}

func checkMoveAcross(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "mvacross-"+randWord(6), "a", "b", "c")
	title2 := "mvacross2-" + randWord(6)
	doc2, qs := s.docWithParas(t, title2, "x")
	must(t, "SetBlockAttrs", s.c.SetBlockAttrs(t.Context(), ps[1], map[string]string{"custom-m": "1"}))
	must(t, "MoveBlock across docs", s.c.MoveBlock(t.Context(), ps[1], qs[0], ""))
	requireOrder(t, "source after move", s.childIDs(t, doc), []string{ps[0], ps[2]})
	requireOrder(t, "target after move", s.childIDs(t, doc2), []string{qs[0], ps[1]})
	// The block keeps its ID, content and attributes, and every lookup by
	// ID finds it in its new document.
	if !s.exists(t, ps[1]) {
		t.Fatalf("moved block %s: CheckBlockExist = false", ps[1])
	}
	bi, err := s.c.GetBlockInfo(t.Context(), ps[1])
	must(t, "GetBlockInfo of the moved block", err)
	if bi.RootID != doc2 || bi.RootTitle != title2 || bi.Path != "/"+doc2+".sy" {
		t.Fatalf("GetBlockInfo after move = %+v, want root %s", bi, doc2)
	}
	hp, err := s.c.GetHPathByID(t.Context(), ps[1])
	must(t, "GetHPathByID of the moved block", err)
	if hp != "/"+title2 {
		t.Fatalf("GetHPathByID after move = %q", hp)
	}
	if a := s.attrs(t, ps[1]); a["custom-m"] != "1" {
		t.Fatalf("moved block attrs = %v", a)
	}
	got := normKramdown(s.kramdown(t, ps[1]), map[string]string{ps[1]: "P"})
	if want := "b\n{: custom-m=\"1\" id=\"P\" updated=\"TS\"}"; got != want {
		t.Fatalf("moved block kramdown = %q, want %q", got, want)
	}
	_, err = s.c.UpdateBlock(t.Context(), ps[1], "markdown", "b moved")
	must(t, "UpdateBlock of the moved block", err)
	if k := s.children(t, doc2); k[1].ID != ps[1] || k[1].Content != "b moved" {
		t.Fatalf("target after updating the moved block = %+v", k)
	}
}

func checkMoveParent(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "mvpar-"+randWord(6), "a", "b", "c")
	must(t, "MoveBlock", s.c.MoveBlock(t.Context(), ps[2], "", doc))
	requireOrder(t, "after move into parent", s.childIDs(t, doc), []string{ps[2], ps[0], ps[1]})
}

func checkDelete(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "del-"+randWord(6), "keep", "drop")
	txs, err := s.c.DeleteBlock(t.Context(), ps[1])
	must(t, "DeleteBlock", err)
	if len(txs) != 1 || len(txs[0].DoOperations) != 1 || txs[0].DoOperations[0].Action != "delete" || txs[0].DoOperations[0].ID != ps[1] {
		t.Fatalf("DeleteBlock transactions = %+v", txs)
	}
	s.flush(t) // the kernel queues the delete without waiting for it
	if s.exists(t, ps[1]) {
		t.Fatalf("deleted block still exists")
	}
	k, err := s.c.GetBlockKramdown(t.Context(), ps[1])
	must(t, "GetBlockKramdown of a deleted block", err)
	if k.Kramdown != "" {
		t.Fatalf("kramdown of a deleted block = %q", k.Kramdown)
	}
	requireOrder(t, "after delete", s.childIDs(t, doc), ps[:1])
}

func checkDeleteNonID(t *testing.T, s *suite) {
	_, err := s.c.DeleteBlock(t.Context(), "nope")
	api := apiError(t, "DeleteBlock(nope)", err)
	if api.Code != -1 {
		t.Fatalf("code = %d", api.Code)
	}
}

func checkFoldList(t *testing.T, s *suite) {
	doc := s.newDoc(t, "foldlist-"+randWord(6), "- i1\n- i2")
	list := s.children(t, doc)[0].ID
	must(t, "FoldBlock", s.c.FoldBlock(t.Context(), list))
	if a := s.attrs(t, list); a["fold"] != "1" {
		t.Fatalf("attrs after fold = %v", a)
	}
	if k := s.kramdown(t, doc); !strings.Contains(k, `fold="1"`) {
		t.Fatalf("doc kramdown lacks fold: %q", k)
	}
	must(t, "UnfoldBlock", s.c.UnfoldBlock(t.Context(), list))
	if a := s.attrs(t, list); a["fold"] != "" {
		t.Fatalf("attrs after unfold = %v", a)
	}
	if _, ok := s.attrs(t, list)["fold"]; ok {
		t.Fatalf("fold attribute left after unfold")
	}
}

func checkFoldHeading(t *testing.T, s *suite) {
	doc := s.newDoc(t, "foldhead-"+randWord(6), "# H\n\nunder one\n\nunder two")
	kids := s.children(t, doc)
	if len(kids) != 3 {
		t.Fatalf("children = %+v", kids)
	}
	h := kids[0].ID
	under := s.childIDs(t, h) // a heading's children are the blocks under it
	requireOrder(t, "heading children", under, []string{kids[1].ID, kids[2].ID})
	must(t, "FoldBlock heading", s.c.FoldBlock(t.Context(), h))
	if a := s.attrs(t, h); a["fold"] != "1" || a["heading-fold"] != "" {
		t.Fatalf("heading attrs after fold = %v", a)
	}
	for _, id := range under {
		if a := s.attrs(t, id); a["heading-fold"] != "1" || a["fold"] != "1" {
			t.Fatalf("block under folded heading: attrs %v, want fold=1 heading-fold=1", a)
		}
	}
	must(t, "UnfoldBlock heading", s.c.UnfoldBlock(t.Context(), h))
	for _, id := range append([]string{h}, under...) {
		a := s.attrs(t, id)
		if _, ok := a["fold"]; ok {
			t.Fatalf("fold left after unfold on %s: %v", id, a)
		}
		if _, ok := a["heading-fold"]; ok {
			t.Fatalf("heading-fold left after unfold on %s: %v", id, a)
		}
	}
}

func checkFoldDocument(t *testing.T, s *suite) {
	doc := s.newDoc(t, "folddoc-"+randWord(6), "x")
	apiError(t, "FoldBlock(document)", s.c.FoldBlock(t.Context(), doc))
	apiError(t, "UnfoldBlock(document)", s.c.UnfoldBlock(t.Context(), doc))
	if a := s.attrs(t, doc); a["fold"] != "" {
		t.Fatalf("document got fold attr: %v", a)
	}
}

// ---------------------------------------------------------- malformed input

func checkUpdateNonID(t *testing.T, s *suite) {
	_, err := s.c.UpdateBlock(t.Context(), "not-a-block-id", "markdown", "x")
	api := apiError(t, "UpdateBlock(not-a-block-id)", err)
	if api.Code != -1 || !strings.Contains(api.Msg, "invalid ID") {
		t.Fatalf("code %d msg %q, want -1 invalid ID argument", api.Code, api.Msg)
	}
}

func checkUpdateUnknownID(t *testing.T, s *suite) {
	_, err := s.c.UpdateBlock(t.Context(), unknownID, "markdown", "x")
	apiError(t, "UpdateBlock(unknown id)", err)
	if s.exists(t, unknownID) {
		t.Fatalf("update of an unknown id created it")
	}
}

func checkInvalidIALID(t *testing.T, s *suite) {
	doc, ps := s.docWithParas(t, "badial-"+randWord(6), "a")
	bad := "bad block\n{: id=\"not-a-valid-node-id\"}"
	try := func(what string, err error) {
		t.Helper()
		api := apiError(t, what+" with an invalid IAL id", err)
		if api.Code != -1 || !strings.Contains(api.Msg, "invalid ID") {
			t.Fatalf("%s: code %d msg %q, want -1 ... invalid ID ...", what, api.Code, api.Msg)
		}
	}
	_, err := s.c.AppendBlock(t.Context(), "markdown", bad, doc)
	try("AppendBlock", err)
	_, err = s.c.PrependBlock(t.Context(), "markdown", bad, doc)
	try("PrependBlock", err)
	_, err = s.c.InsertBlock(t.Context(), siyuan.InsertBlockRequest{DataType: "markdown", Data: bad, PreviousID: ps[0]})
	try("InsertBlock", err)
	_, err = s.c.UpdateBlock(t.Context(), ps[0], "markdown", bad)
	try("UpdateBlock", err)
	requireOrder(t, "doc untouched", s.childIDs(t, doc), ps)
	if c := s.children(t, doc)[0].Content; c != "a" {
		t.Fatalf("block changed to %q", c)
	}
}

func checkShortIALID(t *testing.T, s *suite) {
	// SiYuan 3.7.3's parser panics on an IAL id shorter than 14 characters
	// and the handler answers {code:0, data:null}; the client must still
	// report a failure (NullDataError), and nothing may be inserted.
	doc, ps := s.docWithParas(t, "shortial-"+randWord(6), "a")
	_, err := s.c.AppendBlock(t.Context(), "markdown", "short\n{: id=\"zzz\"}", doc)
	var api *siyuan.APIError
	var null *siyuan.NullDataError
	if !errors.As(err, &api) && !errors.As(err, &null) {
		t.Fatalf("AppendBlock with a short IAL id: want *APIError or *NullDataError, got %T: %v", err, err)
	}
	s.flush(t)
	requireOrder(t, "doc untouched", s.childIDs(t, doc), ps)
}

// ---------------------------------------------------------- SQL and search

func (s *suite) rowsByID(t *testing.T, id string) []map[string]any {
	t.Helper()
	return s.sqlRows(t, "SELECT id, content FROM blocks WHERE id='"+id+"'")
}

func checkSQLInsertLag(t *testing.T, s *suite) {
	doc, _ := s.docWithParas(t, "sqlins-"+randWord(6), "a")
	word := randWord(12)
	txs, err := s.c.AppendBlock(t.Context(), "markdown", "lag "+word, doc)
	must(t, "AppendBlock", err)
	id := siyuan.FirstInsertedID(txs)
	before := s.rowsByID(t, id)
	switch {
	case len(before) == 0:
		t.Logf("SQL lag observed: new block %s not yet indexed", id)
	case !s.k.Live:
		t.Fatalf("new block visible in SQL before any flush: %v", before)
	default:
		t.Logf("live kernel had already indexed the block")
	}
	s.flush(t)
	after := s.rowsByID(t, id)
	if len(after) == 0 {
		t.Fatalf("new block %s not in SQL after FlushTransaction", id)
	}
	for _, r := range after {
		if str(r["id"]) != id || str(r["content"]) != "lag "+word {
			t.Fatalf("row = %v", r)
		}
	}
}

func checkSQLUpdateLag(t *testing.T, s *suite) {
	_, ps := s.docWithParas(t, "sqlupd-"+randWord(6), "old content")
	s.flush(t)
	rows := s.rowsByID(t, ps[0])
	if len(rows) == 0 || str(rows[0]["content"]) != "old content" {
		t.Fatalf("rows after flush = %v", rows)
	}
	_, err := s.c.UpdateBlock(t.Context(), ps[0], "markdown", "new content")
	must(t, "UpdateBlock", err)
	rows = s.rowsByID(t, ps[0])
	stale := len(rows) > 0 && str(rows[0]["content"]) == "old content"
	switch {
	case stale:
		t.Logf("SQL lag observed: still %q right after the update", "old content")
	case !s.k.Live:
		t.Fatalf("update visible in SQL before any flush: %v", rows)
	default:
		t.Logf("live kernel had already indexed the update: %v", rows)
	}
	s.flush(t)
	rows = s.rowsByID(t, ps[0])
	if len(rows) == 0 {
		t.Fatalf("block gone from SQL after flush")
	}
	for _, r := range rows {
		if str(r["content"]) != "new content" {
			t.Fatalf("rows after flush = %v, want only the new content", rows)
		}
	}
}

func checkSQLColumns(t *testing.T, s *suite) {
	title := "sqlcols-" + randWord(6)
	doc := s.newDoc(t, title, "# Head\n\npara text")
	kids := s.children(t, doc)
	s.flush(t)
	rows := s.sqlRows(t, "SELECT id, root_id, parent_id, box, path, hpath, type, subtype, content, markdown FROM blocks WHERE root_id='"+doc+"' ORDER BY sort")
	byID := map[string]map[string]any{}
	for _, r := range rows {
		byID[str(r["id"])] = r // real SiYuan may return a block twice
		if str(r["root_id"]) != doc || str(r["box"]) != s.box || str(r["path"]) != "/"+doc+".sy" || str(r["hpath"]) != "/"+title {
			t.Fatalf("row = %v", r)
		}
	}
	want := map[string][3]string{ // id -> type, subtype, content
		doc:        {"d", "", title},
		kids[0].ID: {"h", "h1", "Head"},
		kids[1].ID: {"p", "", "para text"},
	}
	if len(byID) != len(want) {
		t.Fatalf("rows = %v, want blocks %v", byID, want)
	}
	for id, w := range want {
		r, ok := byID[id]
		if !ok {
			t.Fatalf("block %s missing from SQL: %v", id, rows)
		}
		if str(r["type"]) != w[0] || str(r["subtype"]) != w[1] || str(r["content"]) != w[2] {
			t.Fatalf("row %s = %v, want type %q subtype %q content %q", id, r, w[0], w[1], w[2])
		}
	}
	if p := str(byID[kids[0].ID]["parent_id"]); p != doc {
		t.Fatalf("heading parent_id = %q, want the doc", p)
	}
	if p := str(byID[kids[1].ID]["parent_id"]); p != kids[0].ID {
		t.Fatalf("paragraph after a heading: parent_id = %q, want the heading %s", p, kids[0].ID)
	}
	if m := str(byID[kids[1].ID]["markdown"]); m != "para text" {
		t.Fatalf("paragraph markdown = %q", m)
	}
}

func checkSQLReadonly(t *testing.T, s *suite) {
	_, err := s.c.QuerySQL(t.Context(), "DELETE FROM blocks WHERE id='"+unknownID+"'")
	apiError(t, "QuerySQL(DELETE)", err)
	rows := s.sqlRows(t, "SELECT 1 AS one")
	if len(rows) != 1 || str(rows[0]["one"]) != "1" {
		t.Fatalf("SELECT 1 = %v", rows)
	}
}

func checkSQLSyntax(t *testing.T, s *suite) {
	_, err := s.c.QuerySQL(t.Context(), "SELEC nonsense")
	apiError(t, "QuerySQL(syntax error)", err)
}

// checkSQLEscape: a statement with a LIKE ... ESCAPE clause answers code 0
// with data null, even where rows match (so nothing may read it as "no
// rows"); the same condition with instr answers the rows, and a query
// matching nothing answers [].
func checkSQLEscape(t *testing.T, s *suite) {
	word := "esc" + randWord(10)
	doc := s.newDoc(t, "escape-"+randWord(6), "the "+word+" here")
	s.flush(t)
	where := " FROM blocks WHERE root_id='" + doc + "' AND "
	for _, stmt := range []string{
		"SELECT id" + where + "markdown LIKE '%" + word + "%' ESCAPE '\\'",
		"SELECT id" + where + "markdown LIKE '%" + word + "%' ESCAPE '!' LIMIT 5",
		"SELECT count(*) AS n FROM (SELECT id" + where + "content LIKE 'x!%' ESCAPE '!')",
	} {
		r := s.rawJSON(t, "/api/query/sql", `{"stmt":`+jsonString(stmt)+`,"mode":"readonly"}`)
		if got := strings.TrimSpace(string(r.body)); got != `{"code":0,"msg":"","data":null}` {
			t.Errorf("%s: %s, want data null", stmt, got)
		}
		if _, err := s.c.QuerySQLStrict(t.Context(), stmt); err == nil {
			t.Errorf("QuerySQLStrict(%s) read null as rows", stmt)
		}
	}
	rows, err := s.c.QuerySQLStrict(t.Context(), "SELECT id"+where+"instr(markdown, '"+word+"') > 0")
	must(t, "QuerySQLStrict(instr)", err)
	if len(rows) == 0 {
		t.Fatalf("instr found nothing")
	}
	rows, err = s.c.QuerySQLStrict(t.Context(), "SELECT id"+where+"instr(markdown, 'zz"+word+"') > 0")
	must(t, "QuerySQLStrict(no match)", err)
	if rows == nil || len(rows) != 0 {
		t.Fatalf("no match: %v, want []", rows)
	}
}

func checkSearch(t *testing.T, s *suite) {
	title := "search-" + randWord(6)
	word := randWord(14)
	doc := s.newDoc(t, title, "# H\n\nneedle "+word+" haystack")
	para := s.children(t, doc)[1].ID
	req := siyuan.FullTextSearchRequest{Query: word, Paths: []string{s.box}}
	res, err := s.c.FullTextSearchBlock(t.Context(), req)
	must(t, "FullTextSearchBlock", err)
	if len(res.Blocks) == 0 {
		t.Logf("search lag observed: nothing found before flush")
	} else if !s.k.Live {
		t.Fatalf("found before any flush: %+v", res.Blocks)
	}
	s.flush(t)
	res, err = s.c.FullTextSearchBlock(t.Context(), req)
	must(t, "FullTextSearchBlock", err)
	if len(res.Blocks) == 0 || res.MatchedBlockCount < 1 || res.MatchedRootCount != 1 || res.PageCount != 1 {
		t.Fatalf("search result = %+v", res)
	}
	for _, b := range res.Blocks {
		if b.ID != para {
			t.Fatalf("unexpected hit %+v", b)
		}
		if b.RootID != doc || b.Box != s.box || b.HPath != "/"+title || b.Path != "/"+doc+".sy" || b.Type != "NodeParagraph" {
			t.Fatalf("hit = %+v", b)
		}
		if !strings.Contains(b.Content, "<mark>"+word+"</mark>") {
			t.Fatalf("hit content %q lacks <mark>%s</mark>", b.Content, word)
		}
		if b.Markdown != "needle "+word+" haystack" {
			t.Fatalf("hit markdown = %q", b.Markdown)
		}
	}
}

// ---------------------------------------------------- files, assets, export

func pngBytes() []byte {
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00")
	return append(b, []byte("sisyphus-contract\x00\xff\xfe binary tail")...)
}

func checkAssetUpload(t *testing.T, s *suite) {
	// The assets go into the suite's notebook folder, so removing the
	// notebook removes them too.
	body := pngBytes()
	res, err := s.c.UploadAsset(t.Context(), siyuan.AssetUploadRequest{
		AssetsDirPath: "/" + s.box + "/assets/",
		Files:         []siyuan.UploadFile{{Name: "pic.png", Body: bytes.NewReader(body)}},
	})
	must(t, "UploadAsset", err)
	if len(res.ErrFiles) != 0 || len(res.SuccMap) != 1 {
		t.Fatalf("UploadAsset = %+v", res)
	}
	rel := res.SuccMap["pic.png"]
	if !regexp.MustCompile(`^` + s.box + `/assets/pic-\d{14}-[0-9a-z]{7}\.png$`).MatchString(rel) {
		t.Fatalf("asset path = %q, want %s/assets/pic-<id>.png", rel, s.box)
	}
	t.Cleanup(func() { _ = s.c.RemoveFile(context.Background(), "/data/"+rel) })
	rc, ctype, err := s.c.GetFile(t.Context(), "/data/"+rel)
	must(t, "GetFile asset", err)
	got := readAll(t, rc)
	if !bytes.Equal(got, body) {
		t.Fatalf("asset bytes differ: got %x want %x", got, body)
	}
	if !strings.HasPrefix(ctype, "image/png") {
		t.Fatalf("asset content type = %q", ctype)
	}
}

func checkPutFile(t *testing.T, s *suite) {
	dir := s.storage + "/put"
	p := dir + "/note.txt"
	body := []byte("hello from the sisyphus contract suite\n\x00binary\xff")
	mt := time.Now().Add(-time.Hour).Truncate(time.Second)
	must(t, "PutFile", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: p, ModTime: mt.UnixMilli(), Body: bytes.NewReader(body)}))
	rc, _, err := s.c.GetFile(t.Context(), p)
	must(t, "GetFile", err)
	if got := readAll(t, rc); !bytes.Equal(got, body) {
		t.Fatalf("GetFile = %q, want %q", got, body)
	}
	entries, err := s.c.ReadDir(t.Context(), dir)
	must(t, "ReadDir", err)
	if len(entries) != 1 || entries[0].Name != "note.txt" || entries[0].IsDir || entries[0].IsSymlink {
		t.Fatalf("ReadDir = %+v", entries)
	}
	if d := entries[0].Updated - mt.Unix(); d < -2 || d > 2 {
		t.Fatalf("ReadDir updated = %d, want the modTime %d (seconds)", entries[0].Updated, mt.Unix())
	}
	// Overwrite replaces the content.
	must(t, "PutFile overwrite", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: p, Body: strings.NewReader("v2")}))
	rc, _, err = s.c.GetFile(t.Context(), p)
	must(t, "GetFile", err)
	if got := readAll(t, rc); string(got) != "v2" {
		t.Fatalf("after overwrite GetFile = %q", got)
	}
	must(t, "RemoveFile", s.c.RemoveFile(t.Context(), p))
	_, _, err = s.c.GetFile(t.Context(), p)
	if api := apiError(t, "GetFile after remove", err); api.Code != 404 {
		t.Fatalf("GetFile after remove: code %d", api.Code)
	}
	entries, err = s.c.ReadDir(t.Context(), dir)
	must(t, "ReadDir", err)
	if len(entries) != 0 {
		t.Fatalf("ReadDir after remove = %+v", entries)
	}
}

func checkPutDir(t *testing.T, s *suite) {
	dir := s.storage + "/made-dir"
	must(t, "PutFile isDir", s.c.PutFile(t.Context(), siyuan.PutFileRequest{Path: dir, IsDir: true}))
	entries, err := s.c.ReadDir(t.Context(), s.storage)
	must(t, "ReadDir", err)
	for _, e := range entries {
		if e.Name == "made-dir" {
			if !e.IsDir {
				t.Fatalf("made-dir listed as a file: %+v", e)
			}
			inside, err := s.c.ReadDir(t.Context(), dir)
			must(t, "ReadDir new dir", err)
			if len(inside) != 0 {
				t.Fatalf("new dir not empty: %+v", inside)
			}
			return
		}
	}
	t.Fatalf("made-dir not listed: %+v", entries)
}

func checkGetFileMissing(t *testing.T, s *suite) {
	rc, _, err := s.c.GetFile(t.Context(), s.storage+"/does-not-exist.txt")
	if err == nil {
		b := readAll(t, rc)
		t.Fatalf("GetFile of a missing file returned content %q", b)
	}
	api := apiError(t, "GetFile(missing)", err)
	if api.Code != 404 {
		t.Fatalf("code = %d msg %q, want 404", api.Code, api.Msg)
	}
	// On the wire: HTTP 202 with a JSON envelope, not the file body.
	body := strings.NewReader(`{"path":"` + s.storage + `/does-not-exist.txt"}`)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, strings.TrimSuffix(s.k.URL, "/")+"/api/file/getFile", body)
	must(t, "NewRequest", err)
	req.Header.Set("Authorization", "Token "+s.k.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.k.http().Do(req)
	must(t, "raw getFile", err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	must(t, "read raw getFile", err)
	var env struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	}
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &env) != nil || env.Code != 404 || string(env.Data) != "null" {
		t.Fatalf("raw getFile of a missing file: HTTP %d %q, want 202 {code:404, data:null}", resp.StatusCode, raw)
	}
}

func checkGetFileDir(t *testing.T, s *suite) {
	rc, _, err := s.c.GetFile(t.Context(), "/data/"+s.box)
	if err == nil {
		b := readAll(t, rc)
		t.Fatalf("GetFile of a directory returned content %q", b)
	}
	if api := apiError(t, "GetFile(directory)", err); api.Code != 409 {
		t.Fatalf("code = %d msg %q, want 409", api.Code, api.Msg)
	}
}

func checkRemoveFileMissing(t *testing.T, s *suite) {
	err := s.c.RemoveFile(t.Context(), s.storage+"/never-there.txt")
	if api := apiError(t, "RemoveFile(missing)", err); api.Code != 404 {
		t.Fatalf("code = %d, want 404", api.Code)
	}
}

func checkReadDirMissing(t *testing.T, s *suite) {
	_, err := s.c.ReadDir(t.Context(), s.storage+"/no-such-dir")
	if api := apiError(t, "ReadDir(missing)", err); api.Code != 404 {
		t.Fatalf("code = %d, want 404", api.Code)
	}
	_, err = s.c.ReadDir(t.Context(), "/data/"+s.box+"/"+s.box+".sy")
	if api := apiError(t, "ReadDir(file)", err); api.Code != 409 {
		t.Fatalf("ReadDir of a file: code = %d, want 409", api.Code)
	}
}

func checkExportResources(t *testing.T, s *suite) {
	doc := s.newDoc(t, "export-"+randWord(6), "exported text")
	name := "sisyphus-contract-" + s.tag
	zp, err := s.c.ExportResources(t.Context(), []string{"data/" + s.box + "/" + doc + ".sy"}, name)
	must(t, "ExportResources", err)
	if !regexp.MustCompile(`^temp/export/[0-9a-f]{32}-` + name + `\.zip$`).MatchString(zp) {
		t.Fatalf("export path = %q, want temp/export/<32 hex>-%s.zip", zp, name)
	}
	t.Cleanup(func() { _ = s.c.RemoveFile(context.Background(), "/"+zp) })
	rc, ctype, err := s.c.GetFile(t.Context(), "/"+zp)
	must(t, "GetFile zip", err)
	b := readAll(t, rc)
	if !strings.HasPrefix(ctype, "application/zip") {
		t.Fatalf("zip content type = %q", ctype)
	}
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	must(t, "open zip", err)
	var listing []string
	found := false
	for _, f := range zr.File {
		listing = append(listing, f.Name)
		if f.Name == name+"/"+doc+".sy" {
			found = true
			r, err := f.Open()
			must(t, "open zip entry", err)
			content, err := io.ReadAll(r)
			r.Close()
			must(t, "read zip entry", err)
			if !bytes.Contains(content, []byte("exported text")) || !bytes.Contains(content, []byte(doc)) {
				t.Fatalf("zipped .sy lacks the document: %.300s", content)
			}
		}
	}
	if !found {
		t.Fatalf("zip lists %v, want %s/%s.sy", listing, name, doc)
	}
}

func checkExportMd(t *testing.T, s *suite) {
	title := "exportmd-" + randWord(6)
	doc := s.newDoc(t, title, "## Sub\n\nsome **markdown** text\n\n- item")
	md, err := s.c.ExportMdContent(t.Context(), doc)
	must(t, "ExportMdContent", err)
	if md.HPath != "/"+title {
		t.Fatalf("hPath = %q", md.HPath)
	}
	want := "# " + title + "\n\n## Sub\n\nsome **markdown** text\n\n- item\n"
	if md.Content != want {
		t.Fatalf("content\n got %q\nwant %q", md.Content, want)
	}
	// A block ID exports just that block, under its document's title.
	para := s.children(t, doc)[1].ID
	md, err = s.c.ExportMdContent(t.Context(), para)
	must(t, "ExportMdContent(block)", err)
	want = "# " + title + "\n\nsome **markdown** text\n"
	if md.HPath != "/"+title || md.Content != want {
		t.Fatalf("ExportMdContent(block) = %+v\nwant content %q", md, want)
	}
}

// jsonString is s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
