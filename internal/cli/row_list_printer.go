package cli

import (
	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print prints the page of rows asked for: the row table with ids, their ids (--quiet),
// or the list page (--json).
func (o *rowListOptions) print(lb *hubv1alpha1.Leaderboard, rows []hub.RankedRow) error {
	return printList(o.app, o.paging, rows, list[hub.RankedRow]{
		noun: "row",
		id:   func(r hub.RankedRow) string { return hubv1alpha1.ID(r.Row) },
		json: func(r hub.RankedRow) any { return hub.RowToJSON(hubv1alpha1.ID(lb), r) },
		table: func(page []hub.RankedRow) error {
			return o.printRowTable(lb, page, []rowColumn{rankColumn, idColumn, stateColumn}, []rowColumn{trialsColumn})
		},
	})
}
