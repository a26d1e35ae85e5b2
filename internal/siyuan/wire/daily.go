package wire

// DailyNote is createDailyNote's answer: the id of today's note, created or
// found.
type DailyNote struct {
	ID string `json:"id"`
}

// DuplicatedDoc is duplicateDoc's answer: where the copy lives. SiYuan
// builds HPath by appending " " and " (Duplicated <time>)" to the source's
// human path, so it holds two spaces where getHPathByID answers one.
type DuplicatedDoc struct {
	ID       string `json:"id"`
	Notebook string `json:"notebook"`
	Path     string `json:"path"`
	HPath    string `json:"hPath"`
}

// Doc2Heading is doc2Heading's answer: where the removed source document
// lived (both empty when the target did not exist and nothing was done).
type Doc2Heading struct {
	SrcTreeBox  string `json:"srcTreeBox"`
	SrcTreePath string `json:"srcTreePath"`
}
