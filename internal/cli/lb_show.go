package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) showCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "show <leaderboard>",
		Short: "Show one leaderboard (by UUID or <org>/<dataset>/<leaderboard>)",
		Args:  exactArgs(1, "one leaderboard"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.hub()
			if err != nil {
				return err
			}
			lb, err := cl.Board(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			j := hub.BoardToJSON(lb)
			if a.json {
				return a.printJSON(j)
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
			fmt.Fprintf(w, "Slug:        %s\nID:          %s\nTitle:       %s\nDescription: %s\nVisibility:  %s\nPackage:     %s (%s)\nVersions:    %s\nRows:        %d\nReady:       %s\n",
				hub.Slug(lb), j.ID, j.Title, desc, j.Visibility, j.Package, j.PackageID, versions, j.Rows, readyText(j))
			if j.Message != "" {
				fmt.Fprintf(w, "             %s\n", j.Message)
			}
			fmt.Fprintf(w, "Created:     %s\nUpdated:     %s\n", j.CreatedAt, j.UpdatedAt)
			fmt.Fprintln(w, "\nColumns:")
			t := a.newTable("  ID", "HEADER", "ACCESSOR", "TYPE")
			for _, col := range j.Columns {
				t.row("  "+col.ID, col.Header, col.Accessor, col.Type)
			}
			if err := t.flush(); err != nil {
				return err
			}
			fmt.Fprintln(w, "\nRanked by:")
			if len(j.RankBy) == 0 {
				fmt.Fprintln(w, "  creation order")
			}
			for i, r := range j.RankBy {
				nulls := r.Nulls
				if nulls == "" {
					nulls = "last"
				}
				fmt.Fprintf(w, "  %d. %s %s (nulls %s)\n", i+1, r.Accessor, r.Direction, nulls)
			}
			return nil
		},
	}
	a.addJSON(c)
	return c
}
