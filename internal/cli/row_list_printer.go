package cli

import (
	"fmt"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print prints a page of rows: the row table with ids, their ids (--quiet), or the
// list page (--json).
func (o *rowListOptions) print(lb *hubv1alpha1.Leaderboard, page []hub.RankedRow, pg Pagination) error {
	switch {
	case o.json:
		out := []hub.RowJSON{}
		for _, r := range page {
			out = append(out, hub.RowToJSON(hubv1alpha1.ID(lb), r))
		}
		return o.printJSON(newListPage(out, pg))
	case o.quiet:
		for _, r := range page {
			fmt.Fprintln(o.stdout, hubv1alpha1.ID(r.Row))
		}
		return nil
	}
	if err := o.printRowTable(lb, page, []rowColumn{rankColumn, idColumn, stateColumn}, []rowColumn{trialsColumn}); err != nil {
		return err
	}
	o.pageHint(o.paging, pg, "row")
	return nil
}
