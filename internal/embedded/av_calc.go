package embedded

import "github.com/sisyphus-go/sisyphus/internal/siyuan/wire"

// avFieldCalc is the kernel's av.FieldCalc, a column's calculation.
type avFieldCalc struct {
	Operator string        `json:"operator"`
	Result   *wire.AVValue `json:"result"`
	Template string        `json:"template,omitempty"`
}
