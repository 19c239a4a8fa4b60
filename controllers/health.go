package controllers

import (
	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/health"
)

// verdictOf says what a reason of a board's Ready or a row's Valid condition means to a
// GitOps tool (docs/gitops.md): waiting for another object that is expected to appear
// (the dataset, a version of it, the row's board) is Waiting; everything else that is
// not ready needs a change from an author (DuplicateName, InvalidSchema,
// UnknownAccessor, PackageInOtherOrg, ValuesInvalid, LeaderboardNotReady) and is Stalled.
func verdictOf(reason string) health.Verdict {
	switch reason {
	case hubv1alpha1.ReasonReady, hubv1alpha1.ReasonValuesValid:
		return health.Healthy
	case hubv1alpha1.ReasonDatasetNotFound, hubv1alpha1.ReasonVersionNotFound, hubv1alpha1.ReasonLeaderboardNotFound:
		return health.Waiting
	}
	return health.Stalled
}

// worstProblem returns the verdict of a board with these problems and the reason that
// decides it: the first problem that needs its author when there is one (a board with a
// bad schema is stalled even while it also waits for its dataset), else the first one.
func worstProblem(problems []problem) (health.Verdict, string) {
	for _, p := range problems {
		if verdictOf(p.reason) == health.Stalled {
			return health.Stalled, p.reason
		}
	}
	return verdictOf(problems[0].reason), problems[0].reason
}
