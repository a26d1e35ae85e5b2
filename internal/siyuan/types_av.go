package siyuan

import "github.com/sisyphus-go/sisyphus/internal/siyuan/wire"

// Databases (attribute views): the stored format and the /api/av/*
// answers, shared with the embedded kernel. See package wire.
type (
	AttributeView      = wire.AttributeView
	AVKeyValues        = wire.AVKeyValues
	AVKey              = wire.AVKey
	AVSelectOption     = wire.AVSelectOption
	AVRelation         = wire.AVRelation
	AVRollup           = wire.AVRollup
	AVRollupCalc       = wire.AVRollupCalc
	AVView             = wire.AVView
	AVViewFilter       = wire.AVViewFilter
	AVViewSort         = wire.AVViewSort
	AVValue            = wire.AVValue
	AVValueBlock       = wire.AVValueBlock
	AVValueContent     = wire.AVValueContent
	AVValueNumber      = wire.AVValueNumber
	AVValueDate        = wire.AVValueDate
	AVValueSelect      = wire.AVValueSelect
	AVValueAsset       = wire.AVValueAsset
	AVValueCheckbox    = wire.AVValueCheckbox
	AVValueRelation    = wire.AVValueRelation
	AVRender           = wire.AVRender
	AVViewData         = wire.AVViewData
	AVTable            = wire.AVTable
	AVColumn           = wire.AVColumn
	AVRow              = wire.AVRow
	AVCell             = wire.AVCell
	AVBlockKeys        = wire.AVBlockKeys
	AVFilterSort       = wire.AVFilterSort
	AVSearchResult     = wire.AVSearchResult
	AVPrimaryKeyValues = wire.AVPrimaryKeyValues
	AVRefDefs          = wire.AVRefDefs
	AVDuplicate        = wire.AVDuplicate
)

// The key (column) types.
const (
	AVKeyBlock      = wire.AVKeyBlock
	AVKeyText       = wire.AVKeyText
	AVKeyNumber     = wire.AVKeyNumber
	AVKeyDate       = wire.AVKeyDate
	AVKeySelect     = wire.AVKeySelect
	AVKeyMSelect    = wire.AVKeyMSelect
	AVKeyURL        = wire.AVKeyURL
	AVKeyEmail      = wire.AVKeyEmail
	AVKeyPhone      = wire.AVKeyPhone
	AVKeyMAsset     = wire.AVKeyMAsset
	AVKeyTemplate   = wire.AVKeyTemplate
	AVKeyCreated    = wire.AVKeyCreated
	AVKeyUpdated    = wire.AVKeyUpdated
	AVKeyCheckbox   = wire.AVKeyCheckbox
	AVKeyRelation   = wire.AVKeyRelation
	AVKeyRollup     = wire.AVKeyRollup
	AVKeyLineNumber = wire.AVKeyLineNumber
)
