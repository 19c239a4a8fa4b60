// Package dsversion finds a Dataset's versions by the names boards and run
// configurations give them (docs/leaderboards.md, "Dataset versions"): "latest" is the
// newest by createdAt (on a tie the greater id, so the answer never depends on list
// order), a tag names one version (tags are unique in a dataset), and ids compare
// without regard to case. The leaderboard and dataset controllers and the preflight
// all resolve versions here.
package dsversion

import (
	"sort"
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Latest names the newest version in a ref.
const Latest = "latest"

// Newest returns the newest version, or nil when there is none.
func Newest(versions []hubv1alpha1.DatasetVersion) *hubv1alpha1.DatasetVersion {
	var newest *hubv1alpha1.DatasetVersion
	for i := range versions {
		if v := &versions[i]; newest == nil || newer(v, newest) {
			newest = v
		}
	}
	return newest
}

func newer(a, b *hubv1alpha1.DatasetVersion) bool {
	if !a.CreatedAt.Equal(&b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt.Time)
	}
	return a.ID > b.ID
}

// ByRef returns the version a board's ref names: Latest or a tag; nil when none does.
func ByRef(ref string, versions []hubv1alpha1.DatasetVersion) *hubv1alpha1.DatasetVersion {
	if ref == Latest {
		return Newest(versions)
	}
	for i := range versions {
		if versions[i].Tag == ref {
			return &versions[i]
		}
	}
	return nil
}

// ByID returns the version with this id (any case), nil when none has it.
func ByID(id string, versions []hubv1alpha1.DatasetVersion) *hubv1alpha1.DatasetVersion {
	for i := range versions {
		if strings.EqualFold(versions[i].ID, id) {
			return &versions[i]
		}
	}
	return nil
}

// Find returns the version a run configuration names: "" or Latest, a tag, else an id.
func Find(ref string, versions []hubv1alpha1.DatasetVersion) *hubv1alpha1.DatasetVersion {
	if ref == "" {
		ref = Latest
	}
	if v := ByRef(ref, versions); v != nil {
		return v
	}
	return ByID(ref, versions)
}

// IDsByAge returns the version ids oldest first (the reverse of Newest's order).
func IDsByAge(versions []hubv1alpha1.DatasetVersion) []string {
	vs := make([]*hubv1alpha1.DatasetVersion, len(versions))
	for i := range versions {
		vs[i] = &versions[i]
	}
	sort.SliceStable(vs, func(i, j int) bool { return newer(vs[j], vs[i]) })
	ids := make([]string, len(vs))
	for i, v := range vs {
		ids[i] = v.ID
	}
	return ids
}
