package strict

import "fmt"

// Class is how Strict Safe Writes treats an action.
type Class int

const (
	// Unclassified is the zero value; an action left unclassified is a bug
	// that the registry refuses.
	Unclassified Class = iota
	// Read changes nothing; no preflight, no ledger.
	Read
	// Mutation changes state guarded by a precondition hash (see Precondition).
	Mutation
	// Additive creates something new: no hash, but a preflight-issued request id.
	Additive
	// External has side effects outside SiYuan state that cannot be read
	// back: preflight is refused, a real call runs once without the guarantee.
	External
)

func (c Class) String() string {
	switch c {
	case Read:
		return "read"
	case Mutation:
		return "mutation"
	case Additive:
		return "additive"
	case External:
		return "external"
	}
	return fmt.Sprintf("unclassified(%d)", int(c))
}

// Precondition names the hash field a guarded mutation requires.
type Precondition string

// The precondition fields a guarded write may require; the credential
// field of a preflight reply is named exactly like the write parameter.
const (
	NoPrecondition        Precondition = ""
	ExpectedStateHash     Precondition = "expectedStateHash"
	ExpectedStructureHash Precondition = "expectedStructureHash"
	ExpectedManifestHash  Precondition = "expectedManifestHash"
	ExpectedSourceHash    Precondition = "expectedSourceHash"
)

// WritePolicy is an action's entry in the policy table.
type WritePolicy struct {
	Class        Class
	Precondition Precondition // set only for Mutation
}

// Validate reports an incoherent policy entry.
func (p WritePolicy) Validate() error {
	switch p.Class {
	case Read, Additive, External:
		if p.Precondition != NoPrecondition {
			return fmt.Errorf("%s action must not declare precondition %q", p.Class, p.Precondition)
		}
	case Mutation:
		switch p.Precondition {
		case ExpectedStateHash, ExpectedStructureHash, ExpectedManifestHash, ExpectedSourceHash:
		default:
			return fmt.Errorf("mutation needs a precondition field, got %q", p.Precondition)
		}
	default:
		return fmt.Errorf("action is not classified")
	}
	return nil
}
