// Package embedded is a SiYuan-compatible kernel that serves the subset of the
// SiYuan 3.7.3 HTTP API Sisyphus uses, on a workspace directory laid out as
// SiYuan lays it out.
//
// It exists so that every test, benchmark and demo has a kernel that behaves
// like SiYuan without a SiYuan install. Documents are parsed and rendered with
// github.com/88250/lute at the version SiYuan 3.7.3 pins, so kramdown, IALs,
// block DOM and ids come out as the real kernel's do. Behaviours clients must
// survive (custom attributes dropped by updateBlock, getFile's HTTP 202 for a
// missing file, the lagging SQL index) are reproduced on purpose; where the
// real kernel panics into {code:0,data:null} on malformed input, this kernel
// answers code -1 with a clear message instead.
//
// Databases (attribute views) are kept as SiYuan keeps them, one file per
// database in data/storage/av/, and rendered as its kernel renders table
// views (see av_render.go for what is and is not rendered).
//
// The data repository (snapshots of data/, their tags, diffs, one file of
// a snapshot read or rolled back) answers as SiYuan's does but is a small
// content-addressed store of this kernel's own under repo/, not SiYuan's
// dejavu library, which would bring cloud storage clients into the binary
// (repo_store.go).
//
// The package is imported only by cmd/sisyphus and by tests.
package embedded
