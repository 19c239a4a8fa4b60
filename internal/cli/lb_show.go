package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) showCmd() *cobra.Command {
	var p paging
	c := &cobra.Command{
		Use:   "show <leaderboard>",
		Short: "Show a leaderboard and its ranked rows (by UUID or <org>/<dataset>/<leaderboard>)",
		Long: "Prints the board, then its ranked rows as the public read serves them (shown, valid\n" +
			"rows in rank order) as a table: rank, the board's columns, status. --json prints the\n" +
			"read's payload, {leaderboard, rows, pagination}, one page. `row list` shows the hidden\n" +
			"and invalid rows too.",
		Args: exactArgs(1, "one leaderboard"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := p.check(c); err != nil {
				return err
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			lb, err := cl.Board(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			rows, err := cl.BoardRows(a.ctx(c), lb)
			if err != nil {
				return err
			}
			var ranked []hub.RankedRow
			for _, r := range hub.Ranked(lb, rows) {
				if r.Rank > 0 {
					ranked = append(ranked, r)
				}
			}
			lo, hi, pg := a.window(p, len(ranked))
			page := ranked[lo:hi]
			j := hub.BoardToJSON(lb)
			if a.json {
				out := []hub.RowJSON{}
				for _, r := range page {
					out = append(out, hub.RowToJSON(string(lb.UID), r.Row, r.Rank))
				}
				return a.printJSON(map[string]any{"leaderboard": j, "rows": out, "pagination": pg})
			}
			desc := ""
			if j.Description != nil {
				desc = *j.Description
			}
			versions := strings.Join(j.DatasetVersionIDs, ", ")
			if versions == "" {
				versions = "(none)"
			}
			w := a.stdout
			fmt.Fprintf(w, "Slug:        %s\nID:          %s\nTitle:       %s\nDescription: %s\nVisibility:  %s\nPackage:     %s (%s)\nVersions:    %s\nRows:        %d (%d ranked)\nReady:       %s\n",
				hub.Slug(lb), j.ID, j.Title, desc, j.Visibility, j.Package, j.PackageID, versions, j.Rows, len(ranked), readyText(j))
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
			headers := []string{"RANK"}
			for _, col := range lb.Spec.Columns {
				headers = append(headers, col.Header)
			}
			headers = append(headers, "STATUS")
			t := a.newTable(headers...)
			for _, r := range page {
				cells := []string{rankText(r.Rank)}
				for _, col := range lb.Spec.Columns {
					cells = append(cells, cellValue(col, r.Row))
				}
				cells = append(cells, hub.RowToJSON(string(lb.UID), r.Row, r.Rank).Status)
				t.row(cells...)
			}
			if err := t.flush(); err != nil {
				return err
			}
			a.pageHint(p, pg, "ranked row")
			return nil
		},
	}
	p.add(c)
	a.addJSON(c)
	c.Flags().BoolVar(&a.noHeaders, "no-headers", false, "omit the rows table's header")
	return c
}
