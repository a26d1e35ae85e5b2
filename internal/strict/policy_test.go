package strict

import "testing"

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		p  WritePolicy
		ok bool
	}{
		{WritePolicy{Class: Read}, true},
		{WritePolicy{Class: Additive}, true},
		{WritePolicy{Class: External}, true},
		{WritePolicy{Class: Mutation, Precondition: ExpectedStateHash}, true},
		{WritePolicy{Class: Mutation, Precondition: ExpectedStructureHash}, true},
		{WritePolicy{Class: Mutation, Precondition: ExpectedManifestHash}, true},
		{WritePolicy{Class: Mutation, Precondition: ExpectedSourceHash}, true},
		{WritePolicy{}, false},
		{WritePolicy{Class: Mutation}, false},
		{WritePolicy{Class: Mutation, Precondition: "expectedHash"}, false},
		{WritePolicy{Class: Read, Precondition: ExpectedStateHash}, false},
		{WritePolicy{Class: Class(42)}, false},
	}
	for _, tt := range tests {
		if err := tt.p.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v: Validate() = %v, want ok=%v", tt.p, err, tt.ok)
		}
	}
}
