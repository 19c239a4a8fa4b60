package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) rowShowCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "show <row-id>",
		Short: "Show a row",
		Args:  exactArgs(1, "one row id"),
		RunE: func(c *cobra.Command, args []string) error {
			cl, err := a.hub()
			if err != nil {
				return err
			}
			row, err := cl.Row(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			lb, err := cl.BoardOf(a.ctx(c), row)
			if err != nil {
				return err
			}
			rank, err := cl.RankOf(a.ctx(c), lb, row)
			if err != nil {
				return err
			}
			j := hub.RowToJSON(string(lb.UID), row, rank)
			if a.json {
				return a.printJSON(j)
			}
			w := a.stdout
			fmt.Fprintf(w, "ID:          %s\nLeaderboard: %s (%s)\nRank:        %s\nStatus:      %s\nMetadata:    %s\nMetrics:     %s\nTrials:      %d\nCreated:     %s\nUpdated:     %s\n",
				j.ID, hub.Slug(lb), lb.UID, rankText(rank), statusText(j), compact(j.Metadata), compact(j.Metrics), j.NTrials, j.CreatedAt, j.UpdatedAt)
			for _, f := range j.InvalidFields {
				fmt.Fprintf(w, "Invalid:     %s: %s\n", f.Field, f.Message)
			}
			if len(j.TrialIDs) > 0 {
				fmt.Fprintf(w, "Trial IDs:   %s\n", strings.Join(j.TrialIDs, "\n             "))
			}
			return nil
		},
	}
	a.addJSON(c)
	return c
}

func compact(r json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, r) != nil {
		return string(r)
	}
	return b.String()
}
