package v1alpha1

import (
	"regexp"
	"testing"
)

// IsUUID and UUIDPattern (which the CRDs and the secrets API use) accept the same ids.
func FuzzIsUUID(f *testing.F) {
	for _, s := range []string{
		"6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6BA7B810-9DAD-11D1-80B4-00C04FD430C8",
		"6ba7b8109dad11d180b400c04fd430c8", "{6ba7b810-9dad-11d1-80b4-00c04fd430c8}",
		"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6ba7b810-9dad-11d1-80b4-00c04fd430cg",
		"6ba7b810-9dad-11d1-80b4_00c04fd430c8", "", "6ba7b810-9dad-11d1-80b4-00c04fd430c8\n",
	} {
		f.Add(s)
	}
	re := regexp.MustCompile(UUIDPattern)
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsUUID(s), re.MatchString(s); got != want {
			t.Fatalf("IsUUID(%q) = %v, UUIDPattern says %v", s, got, want)
		}
	})
}
