package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) rowCreateCmd() *cobra.Command {
	var config string
	c := &cobra.Command{
		Use:   "create <leaderboard> --config <rows file>",
		Short: "Add 1 to 500 rows, all or nothing",
		Args:  exactArgs(1, "one leaderboard"),
		RunE: func(c *cobra.Command, args []string) error {
			if config == "" {
				return usagef("--config is required")
			}
			rf, err := hub.LoadRows(config)
			if err != nil {
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
			rows, err := cl.CreateRows(a.ctx(c), lb, rf)
			if err != nil {
				return err
			}
			switch {
			case a.json:
				out := []hub.RowJSON{}
				for _, r := range rows {
					out = append(out, hub.RowToJSON(string(lb.UID), r, 0))
				}
				return a.printJSON(map[string]any{"rows": out})
			case a.quiet:
				for _, r := range rows {
					fmt.Fprintln(a.stdout, r.UID)
				}
				return nil
			}
			fmt.Fprintf(a.stderr, "Created %s on %s\n", count(len(rows), "row"), hub.Slug(lb))
			t := a.newTable("INDEX", "ID")
			for i, r := range rows {
				t.row(fmt.Sprint(i), string(r.UID))
			}
			return t.flush()
		},
	}
	c.Flags().StringVar(&config, "config", "", "rows file ({rows: [...]}, .yaml/.yml/.json)")
	a.addListFlags(c, "row ids")
	return c
}
