package cli

import (
	"fmt"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print prints a page of a row's trial links: trial id and when it was linked, the
// ids (--quiet), or the list page (--json).
func (o *trialListOptions) print(page []hub.TrialLink, pg Pagination) error {
	switch {
	case o.json:
		return o.printJSON(newListPage(page, pg))
	case o.quiet:
		for _, l := range page {
			fmt.Fprintln(o.stdout, l.TrialID)
		}
		return nil
	}
	tb := o.newTable("TRIAL ID", "LINKED")
	for _, l := range page {
		linked := "-"
		if l.LinkedAt != nil {
			linked = *l.LinkedAt
		}
		tb.row(l.TrialID, linked)
	}
	if err := tb.flush(); err != nil {
		return err
	}
	o.pageHint(o.paging, pg, "trial")
	return nil
}

// print says how many trials the row links now, or (--json) which.
func (o *trialChangeOptions) print(row *hubv1alpha1.LeaderboardRow) error {
	if o.json {
		return o.printJSON(map[string]any{"row_id": hubv1alpha1.ID(row), "trial_ids": append([]string{}, row.Spec.TrialIDs...)})
	}
	fmt.Fprintf(o.stdout, "Row %s now links %s\n", hubv1alpha1.ID(row), count(len(row.Spec.TrialIDs), "trial"))
	return nil
}
