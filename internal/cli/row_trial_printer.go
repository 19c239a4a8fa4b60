package cli

import (
	"fmt"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print prints the page of a row's trial links asked for: trial id and when it was
// linked, the ids (--quiet), or the list page (--json).
func (o *trialListOptions) print(links []hub.TrialLink) error {
	return printList(o.app, o.paging, links, list[hub.TrialLink]{
		noun:    "trial",
		id:      func(l hub.TrialLink) string { return l.TrialID },
		columns: trialColumns,
	})
}

var trialColumns = []column[hub.TrialLink]{
	{"TRIAL ID", func(l hub.TrialLink) string { return l.TrialID }},
	{"LINKED", func(l hub.TrialLink) string { return orDash(l.LinkedAt) }},
}

// print says how many trials the row links now, or (--json) which.
func (o *trialChangeOptions) print(row *hubv1alpha1.LeaderboardRow) error {
	if o.json {
		return o.printJSON(map[string]any{"row_id": hubv1alpha1.ID(row), "trial_ids": append([]string{}, row.Spec.TrialIDs...)})
	}
	fmt.Fprintf(o.stdout, "Row %s now links %s\n", hubv1alpha1.ID(row), count(len(row.Spec.TrialIDs), "trial"))
	return nil
}
