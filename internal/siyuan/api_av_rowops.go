package siyuan

// Operations of /api/transactions for a select column's options and for
// copying rows, as SiYuan 3.7.3's editor sends them.

// UpdateAttrViewColOptionsOp sends a select or mSelect column's options:
// options the column has (by name) take the colour and description sent;
// names it lacks are appended in the order sent. Only when no name is new
// does the kernel reorder the column's options as sent. Empty names are
// dropped, and an empty list changes nothing; options not sent are kept.
func UpdateAttrViewColOptionsOp(avID, keyID string, options []*AVSelectOption) Operation {
	if options == nil {
		options = []*AVSelectOption{}
	}
	return Operation{Action: "updateAttrViewColOptions", AvID: avID, ID: keyID, Data: options}
}

// RemoveAttrViewColOptionOp removes a select or mSelect column's option by
// name, and that option from the column's cells and from the views'
// filters on the column (a filter left with no option goes).
func RemoveAttrViewColOptionOp(avID, keyID, name string) Operation {
	return Operation{Action: "removeAttrViewColOption", AvID: avID, ID: keyID, Data: name}
}

// DuplicateAttrViewRowOp copies row srcItemID as a new detached row
// newItemID (the caller chooses it; the kernel does not check it is new),
// put after previousItemID in every view ("" or an unknown one: last).
// The copy's primary key is the source's text; every cell but rollup,
// created and updated is copied, and a two-way relation cell adds the
// copy to the related rows' back relation.
func DuplicateAttrViewRowOp(avID, srcItemID, newItemID, previousItemID string) Operation {
	return Operation{Action: "duplicateAttrViewRow", AvID: avID, SrcIDs: []string{srcItemID}, ID: newItemID, PreviousID: previousItemID}
}

// New-item templates of a database (SiYuan 3.7.3 kernel/av:
// NewItemTemplate and its parts), in the kernel's field order;
// [AttributeView] keeps them as raw JSON.

// AVNewItemTemplate is one template: what a new item of the database made
// from it is (a detached row, or a row bound to a new document), its
// primary key (a Go template rendered at creation) and field values.
type AVNewItemTemplate struct {
	ID                  string                          `json:"id"`
	Name                string                          `json:"name"`
	Icon                string                          `json:"icon,omitempty"`
	TargetType          string                          `json:"targetType"` // detached, document
	PrimaryKeyTemplate  string                          `json:"primaryKeyTemplate,omitempty"`
	FieldValues         map[string]*AVNewItemFieldValue `json:"fieldValues,omitempty"`
	SaveLocation        *AVNewItemSaveLocation          `json:"saveLocation,omitempty"`
	ContentTemplatePath string                          `json:"contentTemplatePath,omitempty"`
}

// AVNewItemFieldValue is a field's value in a template: static (Value) or
// the creation time (currentTime, date fields).
type AVNewItemFieldValue struct {
	Mode  string   `json:"mode"`
	Value *AVValue `json:"value,omitempty"`
}

// AVNewItemSaveLocation is where a document-bound item's document goes.
type AVNewItemSaveLocation struct {
	BoxID        string `json:"boxID,omitempty"`
	PathTemplate string `json:"pathTemplate"`
}

// AVNewItemTemplatesConfig is the data of setAttrViewNewItemTemplates: the
// complete list and the default template's ID ("" for none).
type AVNewItemTemplatesConfig struct {
	Templates         []*AVNewItemTemplate `json:"templates"`
	DefaultTemplateID string               `json:"defaultTemplateID,omitempty"`
}

// SetAttrViewNewItemTemplatesOp replaces a database's new-item templates
// and its default template. The kernel checks the whole list (ids, names,
// target types, each field value against its key) and refuses it whole;
// it trims names, icons and paths, drops the icon of a detached target and
// normalises each static value to its key's type.
func SetAttrViewNewItemTemplatesOp(avID string, config AVNewItemTemplatesConfig) Operation {
	if config.Templates == nil {
		config.Templates = []*AVNewItemTemplate{}
	}
	return Operation{Action: "setAttrViewNewItemTemplates", AvID: avID, Data: config}
}
