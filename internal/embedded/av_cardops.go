package embedded

import (
	"github.com/sisyphus-go/sisyphus/internal/siyuan/wire"
)

// The card settings of a gallery or kanban view, as SiYuan 3.7.3's
// setAttrViewCoverFrom, setAttrViewCoverFromAssetKeyID,
// setAttrViewCardSize, setAttrViewCardAspectRatio, setAttrViewFitImage,
// setAttrViewDisplayFieldName and setAttrViewFillColBackgroundColor (a
// kanban's only), on the view the database block shows; a table view
// is left unsaved. setAttrViewShowIcon and setAttrViewWrapField apply to
// tables too (wrapping every column or field).

// applyAVCardOp applies one of those operations; handled is false for any
// other.
func (k *Kernel) applyAVCardOp(op *wire.Operation) (handled bool, err error) {
	num := func() (int, error) {
		n, ok := op.Data.(float64)
		if !ok {
			return 0, errf("data must be a number")
		}
		return int(n), nil
	}
	flag := func() (bool, error) {
		b, ok := op.Data.(bool)
		if !ok {
			return false, errf("data must be a bool")
		}
		return b, nil
	}
	// card edits the card layout of a gallery or kanban view.
	card := func(edit func(l *avCardLayout, kanban bool) error) error {
		return k.avEditBlockView(op.AvID, op.BlockID, func(_ *wire.AttributeView, v *wire.AVView) error {
			l := cardLayout(v)
			if l == nil {
				return errAVNoSave
			}
			if err := edit(l, v.LayoutType == "kanban"); err != nil {
				return err
			}
			setCardLayout(v, l)
			return nil
		})
	}
	switch op.Action {
	case "setAttrViewCoverFrom":
		err = card(func(l *avCardLayout, _ bool) (err error) { l.CoverFrom, err = num(); return })
	case "setAttrViewCoverFromAssetKeyID":
		err = card(func(l *avCardLayout, _ bool) error { l.CoverFromAssetKeyID = op.KeyID; return nil })
	case "setAttrViewCardSize":
		err = card(func(l *avCardLayout, _ bool) (err error) { l.CardSize, err = num(); return })
	case "setAttrViewCardAspectRatio":
		err = card(func(l *avCardLayout, _ bool) (err error) { l.CardAspectRatio, err = num(); return })
	case "setAttrViewFitImage":
		err = card(func(l *avCardLayout, _ bool) (err error) { l.FitImage, err = flag(); return })
	case "setAttrViewDisplayFieldName":
		err = card(func(l *avCardLayout, _ bool) (err error) { l.DisplayFieldName, err = flag(); return })
	case "setAttrViewFillColBackgroundColor":
		err = card(func(l *avCardLayout, kanban bool) error {
			if !kanban {
				return errAVNoSave
			}
			b, err := flag()
			l.FillColBackgroundColor = &b
			return err
		})
	case "setAttrViewShowIcon", "setAttrViewWrapField":
		var b bool
		if b, err = flag(); err != nil {
			break
		}
		wrap := op.Action == "setAttrViewWrapField"
		err = k.avEditBlockView(op.AvID, op.BlockID, func(_ *wire.AttributeView, v *wire.AVView) error {
			if v.LayoutType == "table" {
				if v.Table == nil {
					return errAVNoSave
				}
				if wrap {
					v.Table.WrapField = b
					for _, c := range v.Table.Columns {
						c.Wrap = b
					}
				} else {
					v.Table.ShowIcon = b
				}
				return nil
			}
			l := cardLayout(v)
			if l == nil {
				return errAVNoSave
			}
			if wrap {
				l.WrapField = b
				for _, f := range l.Fields {
					f.Wrap = b
				}
			} else {
				l.ShowIcon = b
			}
			setCardLayout(v, l)
			return nil
		})
	default:
		return false, nil
	}
	if err != nil {
		return true, &txFailure{op.Action, err}
	}
	return true, nil
}
