// Package tplguard decides whether a SiYuan template may be rendered for an
// agent. SiYuan renders templates (template files with .action{ }
// delimiters, sprig text with {{ }}, database template columns, daily-note
// and document save paths) with one function map: text/template's builtins,
// sprig's TxtFuncMap and its own helpers, several of which read the SQL
// index or documents across every notebook, or run SQL that writes. Every
// function of that map is classified here, by what it reaches; a template
// calling anything else is refused (fail closed).
package tplguard

import "strings"

// Class is what a template function reaches.
type Class int

const (
	// Pure functions compute from their arguments: text, numbers, lists,
	// dates, encodings, hashes, random values, certificates.
	Pure Class = iota + 1
	// Index functions read SiYuan's SQL index or documents of any
	// notebook (querySQL, queryBlocks, querySpans, getBlock, getHPathByID,
	// statBlock). They cannot be limited by notebook, so they are refused
	// while a notebook is hidden from agents; the ones that run a
	// statement are checked not to write.
	Index
	// Host functions read the kernel's environment, files or network
	// (sprig's env, expandenv, getHostByName, which SiYuan 3.7.3 removes
	// from its map): always refused.
	Host
)

func (c Class) String() string {
	switch c {
	case Pure:
		return "pure"
	case Index:
		return "index"
	case Host:
		return "host"
	}
	return "unknown"
}

// SQLRunners are the Index functions that run a statement given as their
// first argument (querySQL runs any single statement; queryBlocks and
// querySpans run what their parser does not take for a SELECT as it is).
var SQLRunners = map[string]bool{"querySQL": true, "queryBlocks": true, "querySpans": true}

// Funcs classifies every function of SiYuan 3.7.3's template function map
// (kernel/filesys/template.go BuiltInTemplateFuncs, kernel/sql/database.go
// SQLTemplateFuncs, kernel/model/template.go RenderGoTemplateAt), with the
// sprig version SiYuan pins (v3.3.0), and text/template's builtins. The
// tests compare it with sprig.TxtFuncMap() and with
// testdata/siyuan-template-funcs.txt.
var Funcs = func() map[string]Class {
	m := map[string]Class{}
	for _, n := range strings.Fields(builtins + " " + sprigPure + " " + siyuanPure) {
		m[n] = Pure
	}
	for _, n := range strings.Fields(siyuanIndex) {
		m[n] = Index
	}
	for _, n := range strings.Fields(hostFuncs) {
		m[n] = Host
	}
	return m
}()

// builtins are text/template's own functions.
const builtins = `and call html index slice js len not or print printf println urlquery eq ge gt le lt ne`

// sprigPure are sprig v3.3.0's TxtFuncMap functions but the Host ones.
const sprigPure = `
	abbrev abbrevboth add add1 add1f addf adler32sum ago all any append atoi b32dec b32enc b64dec b64enc
	base bcrypt biggest buildCustomCert camelcase cat ceil chunk clean coalesce compact concat contains date
	dateInZone dateModify date_in_zone date_modify decryptAES deepCopy deepEqual default derivePassword dict
	dig dir div divf duration durationRound empty encryptAES ext fail first float64 floor fromJson genCA
	genCAWithKey genPrivateKey genSelfSignedCert genSelfSignedCertWithKey genSignedCert genSignedCertWithKey
	get has hasKey hasPrefix hasSuffix hello htmlDate htmlDateInZone htpasswd indent initial initials int
	int64 isAbs join kebabcase keys kindIs kindOf last list lower max maxf merge mergeOverwrite min minf mod
	mul mulf mustAppend mustChunk mustCompact mustDateModify mustDeepCopy mustFirst mustFromJson mustHas
	mustInitial mustLast mustMerge mustMergeOverwrite mustPrepend mustPush mustRegexFind mustRegexFindAll
	mustRegexMatch mustRegexReplaceAll mustRegexReplaceAllLiteral mustRegexSplit mustRest mustReverse mustSlice
	mustToDate mustToJson mustToPrettyJson mustToRawJson mustUniq mustWithout must_date_modify nindent nospace
	now omit osBase osClean osDir osExt osIsAbs pick pluck plural prepend push quote randAlpha randAlphaNum
	randAscii randBytes randInt randNumeric regexFind regexFindAll regexMatch regexQuoteMeta regexReplaceAll
	regexReplaceAllLiteral regexSplit repeat replace rest reverse round semver semverCompare seq set sha1sum
	sha256sum sha512sum shuffle slice snakecase sortAlpha split splitList splitn squote sub subf substr
	swapcase ternary title toDate toDecimal toJson toPrettyJson toRawJson toString toStrings trim trimAll
	trimPrefix trimSuffix trimall trunc tuple typeIs typeIsLike typeOf uniq unixEpoch unset until untilStep
	untitle upper urlJoin urlParse uuidv4 values without wrap wrapWith`

// siyuanPure are SiYuan's own helpers that compute from their arguments
// (dates and weeks, powers and logarithms, number formats, word counts,
// Markdown to text, countif); now is the fixed time of a render.
const siyuanPure = `Weekday WeekdayCN WeekdayCN2 ISOWeek ISOYear ISOMonth ISOWeekDate pow powf log logf parseTime
	FormatFloat runeCount wordCount markdown2text markdown2content countif now`

// siyuanIndex are SiYuan's helpers that read the index or documents.
const siyuanIndex = `querySQL queryBlocks querySpans getBlock getHPathByID statBlock`

// hostFuncs reach the kernel's environment or network.
const hostFuncs = `env expandenv getHostByName`
