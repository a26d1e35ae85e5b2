// Package mdexport is SiYuan 3.7.3's Markdown export of one document or
// block (the kernel's ExportMarkdownContent: exportTree, embeds, refs as
// links, anchor text or footnotes, the title, YAML front matter), written
// over a Source of trees, so that the embedded kernel and the tools render
// an export with one code.
//
// The embedded kernel exports from its own store. The file tool renders an
// export itself only when SiYuan's would show a notebook hidden from agents:
// its Source answers a hidden block as missing, so a reference into a
// hidden notebook comes out as SiYuan writes a reference to a removed block
// (its anchor text and a footnote number without a definition), and an
// embed never shows a hidden block.
//
// The package also reads the .sy files SiYuan stores documents in
// (ParseSY) and configures Lute as SiYuan's kernel does (NewLute).
package mdexport
