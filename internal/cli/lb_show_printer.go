package cli

import (
	"fmt"
	"strings"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// print prints the board and a page of its ranked rows; --json prints the read's
// payload, {leaderboard, rows, pagination}.
func (o *showOptions) print(lb *hubv1alpha1.Leaderboard, ranked int, page []hub.RankedRow, pg Pagination) error {
	j := hub.BoardToJSON(lb)
	if o.json {
		out := []hub.RowJSON{}
		for _, r := range page {
			out = append(out, hub.RowToJSON(hubv1alpha1.ID(lb), r))
		}
		return o.printJSON(map[string]any{"leaderboard": j, "rows": out, "pagination": pg})
	}
	o.printBoard(lb, j, ranked)
	if err := o.printRowTable(lb, page, []rowColumn{rankColumn}, []rowColumn{statusColumn}); err != nil {
		return err
	}
	o.pageHint(o.paging, pg, "ranked row")
	return nil
}

// printBoard prints the board's fields, one a line, and a blank line.
func (o *showOptions) printBoard(lb *hubv1alpha1.Leaderboard, j hub.BoardJSON, ranked int) {
	desc := ""
	if j.Description != nil {
		desc = *j.Description
	}
	versions := strings.Join(j.DatasetVersionIDs, ", ")
	if versions == "" {
		versions = "(none)"
	}
	w := o.stdout
	fmt.Fprintf(w, "Slug:        %s\nID:          %s\nTitle:       %s\nDescription: %s\nVisibility:  %s\nPackage:     %s (%s)\nVersions:    %s\nRows:        %d (%d ranked)\nReady:       %s\n",
		hub.Slug(lb), j.ID, j.Title, desc, j.Visibility, j.Package, j.PackageID, versions, j.Rows, ranked, readyText(j))
	if j.Message != "" {
		fmt.Fprintf(w, "             %s\n", j.Message)
	}
	fmt.Fprintf(w, "Created:     %s\nUpdated:     %s\n", j.CreatedAt, j.UpdatedAt)
	rules := []string{}
	for _, r := range j.RankBy {
		nulls := r.Nulls
		if nulls == "" {
			nulls = "last"
		}
		rules = append(rules, fmt.Sprintf("%s %s (nulls %s)", r.Accessor, r.Direction, nulls))
	}
	if len(rules) == 0 {
		rules = append(rules, "creation order")
	}
	fmt.Fprintf(w, "Ranked by:   %s\n\n", strings.Join(rules, ", then "))
}
