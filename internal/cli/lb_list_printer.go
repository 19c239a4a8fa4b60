package cli

import (
	"fmt"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print prints a page of leaderboards: a table, their slugs (--quiet), or the list page
// (--json).
func (o *listOptions) print(boards []hubv1alpha1.Leaderboard, pg Pagination) error {
	switch {
	case o.json:
		out := []hub.BoardJSON{}
		for i := range boards {
			out = append(out, hub.BoardToJSON(&boards[i]))
		}
		return o.printJSON(newListPage(out, pg))
	case o.quiet:
		for i := range boards {
			fmt.Fprintln(o.stdout, hub.Slug(&boards[i]))
		}
		return nil
	}
	t := o.newTable("SLUG", "ID", "TITLE", "VISIBILITY", "ROWS", "READY")
	for i := range boards {
		j := hub.BoardToJSON(&boards[i])
		t.row(hub.Slug(&boards[i]), j.ID, clip(j.Title, 40), j.Visibility, fmt.Sprint(j.Rows), readyText(j))
	}
	if err := t.flush(); err != nil {
		return err
	}
	o.pageHint(o.paging, pg, "leaderboard")
	return nil
}

// readyText is a board's Ready condition, with the reason when it is not.
func readyText(j hub.BoardJSON) string {
	if j.Ready {
		return "True"
	}
	if j.Reason != "" {
		return "False (" + j.Reason + ")"
	}
	return "False"
}
