package preflight

import (
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// ResolveVersion finds the version a ref names: "latest" (or "") is the newest by
// createdAt, else a tag, else a version id. ok is false when nothing matches.
func ResolveVersion(ds *hubv1alpha1.Dataset, ref string) (v *hubv1alpha1.DatasetVersion, ok bool) {
	vs := ds.Spec.Versions
	if ref == "" || ref == "latest" {
		for i := range vs {
			if v == nil || vs[i].CreatedAt.After(v.CreatedAt.Time) || (vs[i].CreatedAt.Equal(&v.CreatedAt) && vs[i].ID > v.ID) {
				v = &vs[i]
			}
		}
		return v, v != nil
	}
	for i := range vs {
		if vs[i].Tag == ref {
			return &vs[i], true
		}
	}
	for i := range vs {
		if strings.EqualFold(vs[i].ID, ref) {
			return &vs[i], true
		}
	}
	return nil, false
}

// TaskEnvs lists the env vars every task of a version hard-requires.
func TaskEnvs(v *hubv1alpha1.DatasetVersion) []TaskEnv {
	var out []TaskEnv
	for _, t := range v.Tasks {
		for _, e := range t.RequiredEnv {
			phase := string(e.Phase)
			if phase == "" {
				phase = string(hubv1alpha1.TaskPhaseAgent)
			}
			out = append(out, TaskEnv{Task: t.Name, EnvVar: e.Name, Phase: phase})
		}
	}
	return out
}
