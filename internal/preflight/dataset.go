package preflight

import (
	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

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
