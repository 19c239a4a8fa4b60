package cli

import (
	"fmt"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print prints the new rows' ids: a table of index and id (the count on stderr), one
// a line (--quiet), or the rows (--json).
func (o *rowCreateOptions) print(lb *hubv1alpha1.Leaderboard, rows []*hubv1alpha1.LeaderboardRow) error {
	switch {
	case o.json:
		out := []hub.RowJSON{}
		for _, r := range rows {
			out = append(out, hub.RowToJSON(hubv1alpha1.ID(lb), hub.RankedRow{Row: r}))
		}
		return o.printJSON(map[string]any{"rows": out})
	case o.quiet:
		for _, r := range rows {
			fmt.Fprintln(o.stdout, hubv1alpha1.ID(r))
		}
		return nil
	}
	fmt.Fprintf(o.stderr, "Created %s on %s\n", count(len(rows), "row"), hub.Slug(lb))
	t := o.newTable("INDEX", "ID")
	for i, r := range rows {
		t.row(fmt.Sprint(i), hubv1alpha1.ID(r))
	}
	return t.flush()
}
