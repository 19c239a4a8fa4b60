package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) rowListCmd() *cobra.Command {
	var p paging
	c := &cobra.Command{
		Use:     "list <leaderboard>",
		Aliases: []string{"ls"},
		Short:   "List a leaderboard's rows with ids and ranks",
		Long: "Rows in rank order as the server ranks them (shown, valid rows), then the unranked\n" +
			"(hidden, invalid or not yet validated) rows in creation order, with rank \"-\".",
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
			ranked := hub.Ranked(lb, rows)
			lo, hi, pg := a.window(p, len(ranked))
			page := ranked[lo:hi]
			switch {
			case a.json:
				out := []hub.RowJSON{}
				for _, r := range page {
					out = append(out, hub.RowToJSON(string(lb.UID), r.Row, r.Rank))
				}
				return a.printJSON(newListPage(out, pg))
			case a.quiet:
				for _, r := range page {
					fmt.Fprintln(a.stdout, r.Row.UID)
				}
				return nil
			}
			headers := []string{"RANK", "ID", "STATUS"}
			for _, col := range lb.Spec.Columns {
				headers = append(headers, col.Header)
			}
			headers = append(headers, "TRIALS")
			t := a.newTable(headers...)
			for _, r := range page {
				j := hub.RowToJSON(string(lb.UID), r.Row, r.Rank)
				cells := []string{rankText(r.Rank), j.ID, statusText(j)}
				for _, col := range lb.Spec.Columns {
					cells = append(cells, cellValue(col, r.Row))
				}
				cells = append(cells, fmt.Sprint(j.NTrials))
				t.row(cells...)
			}
			if err := t.flush(); err != nil {
				return err
			}
			a.pageHint(p, pg, "row")
			return nil
		},
	}
	p.add(c)
	a.addListFlags(c, "row ids")
	return c
}

func statusText(j hub.RowJSON) string {
	switch {
	case j.Valid == nil:
		return j.Status + " (pending)"
	case !*j.Valid:
		return j.Status + " (invalid)"
	}
	return j.Status
}
