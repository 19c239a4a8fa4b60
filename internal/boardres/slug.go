package boardres

import (
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// Slug returns a board's "<org>/<dataset>/<name>", or "" while its package is unknown
// (a board named by packageID before the controller resolved it).
func Slug(lb *hubv1alpha1.Leaderboard) string {
	pkg := Package(lb)
	if pkg == "" {
		return ""
	}
	return pkg + "/" + lb.Spec.Name
}

// Package returns a board's "<org>/<dataset>": spec.package, or for a board named by
// packageID the package the controller resolved (status.package); "" until then.
func Package(lb *hubv1alpha1.Leaderboard) string {
	if lb.Spec.Package != "" {
		return lb.Spec.Package
	}
	return lb.Status.Package
}

// SplitSlug splits "<org>/<dataset>/<name>" into the package and the name.
func SplitSlug(slug string) (pkg, name string, ok bool) {
	parts := strings.Split(slug, "/")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", false
	}
	return parts[0] + "/" + parts[1], parts[2], true
}

// Servable says whether a board may be served (the public read, the web pages): not
// when its package belongs to another organization than the board's namespace. Such a
// board (the controller reports it not Ready, reason PackageInOtherOrg) would otherwise
// be shown under another org's dataset and id. It is answered like a missing board
// (Access.Board). The same holds while its package is unknown: a board named by
// packageID is served once the controller has resolved the id in the board's own
// namespace (status.package); until then nobody knows whose dataset it names.
func Servable(lb *hubv1alpha1.Leaderboard) bool {
	for _, c := range lb.Status.Conditions {
		if c.Type == hubv1alpha1.ConditionReady && c.Reason == hubv1alpha1.ReasonPackageInOtherOrg {
			return false
		}
	}
	org, _, ok := strings.Cut(Package(lb), "/")
	return ok && org == lb.Namespace
}
