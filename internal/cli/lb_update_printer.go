package cli

import (
	"fmt"
	"strings"

	"podium.dev/podium/internal/cli/hub"
)

// print prints what an update changed (or, with --dry-run, would change); --json
// prints the board and the result.
func (o *updateOptions) print(slug string, res *hub.UpdateResult) error {
	if o.json {
		return o.printJSON(map[string]any{"leaderboard": hub.BoardToJSON(res.Board), "result": res})
	}
	w := o.stdout
	verb := "Updated"
	if res.DryRun {
		verb = "Dry run: would update"
	}
	if len(res.Diff) == 0 && len(res.RowDiffs) == 0 {
		fmt.Fprintf(w, "No changes to %s\n", slug)
		return nil
	}
	fmt.Fprintf(w, "%s leaderboard %s\n", verb, slug)
	for _, d := range res.Diff {
		fmt.Fprintf(w, "  %s:\n    - %s\n    + %s\n", d.Field, clip(string(d.Old), 200), clip(string(d.New), 200))
	}
	for _, r := range res.RowDiffs {
		if r.New {
			fmt.Fprintf(w, "  + rows[%d]: new row\n", r.Index)
		} else {
			fmt.Fprintf(w, "  ~ rows[%d] (row %s): %s\n", r.Index, r.ID, strings.Join(r.Fields, ", "))
		}
	}
	created := len(res.RowsCreated)
	if res.DryRun {
		for _, r := range res.RowDiffs {
			if r.New {
				created++
			}
		}
	}
	fmt.Fprintf(w, "%s, %s updated, %s added, %s unchanged\n", count(len(res.Diff), "definition field"), count(len(res.RowsUpdated), "row"), count(created, "row"), count(res.RowsSkipped, "row"))
	return nil
}
