package wire

// A database's new-item templates (SiYuan 3.7.3 kernel/av: NewItemTemplate
// and its parts), in the kernel's field order. AttributeView keeps them as
// raw JSON (NewItemTemplates); these decode and encode them.

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
