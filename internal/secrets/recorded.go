package secrets

import (
	"slices"
	"strings"
)

// The granted Secrets of an org namespace that the operator recorded on the namespace
// (hubv1alpha1.AnnotationGrantedSecrets; docs/design/delivery.md, "Who may read a granted
// Secret"). The run Secret admission policy reads that list with CEL's split(','); this is
// the one place the operator writes and reads it.

// MaxRecordedBytes bounds the recorded list (annotations of one object share 256 KiB):
// granted Secrets that do not fit stay the granted Secrets policy's params, protected
// as before, only at one rule evaluation each.
const MaxRecordedBytes = 64 << 10

// RecordedNames parses a namespace's recorded list ("" is none).
func RecordedNames(annotation string) []string {
	if annotation == "" {
		return nil
	}
	return strings.Split(annotation, ",")
}

// GrantedPrefix starts the name reserved for every Secret granted to a hosted secret in
// an org namespace (docs/design/delivery.md, "Who may read a granted Secret"): the admission
// policies refuse every Pod and pod template naming such a name, whether the Secret
// exists yet or not, and refuse granting a Secret under another name.
const GrantedPrefix = "podium-granted-"

// NeedsRecord says whether a granted Secret named name is protected only once its name is
// recorded on its namespace: a name without GrantedPrefix, as grants were named before
// the prefix was reserved.
func NeedsRecord(name string) bool { return !strings.HasPrefix(name, GrantedPrefix) }

// RecordList is the annotation recording names: sorted, each once, as many as fit in
// MaxRecordedBytes (in sorted order); fits are the names it holds.
func RecordList(names []string) (annotation string, fits []string) {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	size := 0
	for _, n := range sorted {
		if n == "" || strings.Contains(n, ",") {
			continue // no Secret name has either; never split a name
		}
		if size+len(n)+1 > MaxRecordedBytes {
			break
		}
		size += len(n) + 1
		fits = append(fits, n)
	}
	return strings.Join(fits, ","), fits
}
