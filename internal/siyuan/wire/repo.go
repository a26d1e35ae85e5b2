package wire

import "encoding/json"

// RepoSnapshot is one snapshot of the data repository as
// getRepoSnapshots and getRepoTagSnapshots answer it (the kernel's
// model.Snapshot: dejavu's Log with the file type counts after it).
// Created is in milliseconds, HCreated and HTagUpdated in the kernel's
// time zone as "2006-01-02 15:04:05". Size is the sum of the sizes of
// the snapshot's Count files and HSize that in SI units ("14.5 MB").
// Files is always null: the kernel drops the list before answering.
// Tag and HTagUpdated are empty in getRepoSnapshots, even for a tagged
// snapshot; getRepoTagSnapshots lists a snapshot once per tag.
type RepoSnapshot struct {
	ID          string          `json:"id"`
	Memo        string          `json:"memo"`
	Created     int64           `json:"created"`
	HCreated    string          `json:"hCreated"`
	Files       json.RawMessage `json:"files"`
	Count       int             `json:"count"`
	Size        int64           `json:"size"`
	HSize       string          `json:"hSize"`
	SystemID    string          `json:"systemID"`
	SystemName  string          `json:"systemName"`
	SystemOS    string          `json:"systemOS"`
	Tag         string          `json:"tag"`
	HTagUpdated string          `json:"hTagUpdated"`
	TypesCount  []RepoTypeCount `json:"typesCount"`
}

// RepoTypeCount is how many files of a snapshot have one extension
// (".sy", ".json", "NoExt" for none), most first.
type RepoTypeCount struct {
	Type  string `json:"type"`
	Count int    `json:"count"`
}

// RepoSnapshotsPage is getRepoSnapshots (a map in the kernel): one page
// of 32 snapshots, newest first.
type RepoSnapshotsPage struct {
	PageCount  int            `json:"pageCount"`
	Snapshots  []RepoSnapshot `json:"snapshots"`
	TotalCount int            `json:"totalCount"`
}

// RepoTagSnapshots is getRepoTagSnapshots (a map in the kernel): one
// entry per tag, newest snapshot first.
type RepoTagSnapshots struct {
	Snapshots []RepoSnapshot `json:"snapshots"`
}

// RepoDiffFile is one file of a diffRepoSnapshots list (the kernel's
// model.DiffFile). FileID names this version of the file in the
// repository (openRepoSnapshotFile and rollbackRepoSnapshotFile take
// it); Title is a document's title for a .sy file, the file's base name
// otherwise; Path is under the data directory ("/<box>/<id>.sy");
// IndexID is always empty and HPath absent here. Updated is the file's
// modification time in milliseconds.
type RepoDiffFile struct {
	FileID  string `json:"fileID"`
	IndexID string `json:"indexID"`
	Title   string `json:"title"`
	Path    string `json:"path"`
	HPath   string `json:"hPath,omitempty"`
	HSize   string `json:"hSize"`
	Updated int64  `json:"updated"`
}

// RepoDiffIndex names one side of a diff: the snapshot's id and creation
// time in milliseconds.
type RepoDiffIndex struct {
	ID      string `json:"id"`
	Created int64  `json:"created"`
}

// RepoDiff is diffRepoSnapshots (a map in the kernel) of a left and a
// right snapshot: AddsLeft the files only the right one has (added since
// the left), RemovesRight those only the left one has, UpdatesLeft and
// UpdatesRight the two versions of the files both have with another
// modification second (in no fixed order, the same files in each). The
// lists are never null; a file whose title cannot be read is left out.
type RepoDiff struct {
	AddsLeft     []RepoDiffFile `json:"addsLeft"`
	Left         RepoDiffIndex  `json:"left"`
	RemovesRight []RepoDiffFile `json:"removesRight"`
	Right        RepoDiffIndex  `json:"right"`
	UpdatesLeft  []RepoDiffFile `json:"updatesLeft"`
	UpdatesRight []RepoDiffFile `json:"updatesRight"`
}

// RepoSnapshotFile is openRepoSnapshotFile (a map in the kernel): a
// file of a snapshot. For a document (.sy) Title is its title and
// Content its blocks as read-only block DOM (DisplayInText false), or
// its Markdown when the document is too large to render
// (DisplayInText true). For a text or JSON file Content is the text,
// Title the path and DisplayInText true; for another file Content is
// its path. Updated is the file's modification time in milliseconds.
type RepoSnapshotFile struct {
	Content       string `json:"content"`
	DisplayInText bool   `json:"displayInText"`
	Title         string `json:"title"`
	Updated       int64  `json:"updated"`
}

// RepoKey is initRepoKey (a map in the kernel): the new key, base64.
type RepoKey struct {
	Key string `json:"key"`
}
