package strict

import "testing"

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		p  Policy
		ok bool
	}{
		{Policy{Class: Read}, true},
		{Policy{Class: Additive}, true},
		{Policy{Class: External}, true},
		{Policy{Class: Mutation, Precondition: ExpectedStateHash}, true},
		{Policy{Class: Mutation, Precondition: ExpectedStructureHash}, true},
		{Policy{Class: Mutation, Precondition: ExpectedManifestHash}, true},
		{Policy{Class: Mutation, Precondition: ExpectedSourceHash}, true},
		{Policy{}, false},
		{Policy{Class: Mutation}, false},
		{Policy{Class: Mutation, Precondition: "expectedHash"}, false},
		{Policy{Class: Read, Precondition: ExpectedStateHash}, false},
		{Policy{Class: Class(42)}, false},
	}
	for _, tt := range tests {
		if err := tt.p.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tt.p, err, tt.ok)
		}
	}
}
