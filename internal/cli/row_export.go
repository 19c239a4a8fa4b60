package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) rowExportCmd() *cobra.Command {
	var output string
	var all, force bool
	c := &cobra.Command{
		Use:   "export (<row-id> | <leaderboard> --all) --output <file>",
		Short: "Export one row, or every row of a leaderboard (--all), to edit and apply",
		Long: "One row exports as a row file for `row update --config`; --all exports every row of the\n" +
			"board (shown and hidden, each with its status) as a rows file for `update --rows`.\n" +
			"Files carry expected_updated_at: applying a file whose target changed since is refused.",
		Args: exactArgs(1, "one row id, or one leaderboard with --all"),
		RunE: func(c *cobra.Command, args []string) error {
			if output == "" {
				return usagef("--output is required")
			}
			ff, err := hub.FormatOf(output)
			if err != nil {
				return usageError{err}
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			var doc any
			var n int
			var id string
			if all {
				lb, err := cl.Board(a.ctx(c), args[0])
				if err != nil {
					return err
				}
				rows, err := cl.BoardRows(a.ctx(c), lb)
				if err != nil {
					return err
				}
				f := hub.RowsExport(lb, rows)
				doc, n, id = f, len(f.Rows), string(lb.UID)
			} else {
				if !hub.IsUUID(args[0]) {
					return usagef("%q is not a row id; to export every row of a leaderboard add --all", args[0])
				}
				row, err := cl.Row(a.ctx(c), args[0])
				if err != nil {
					return err
				}
				lb, err := cl.BoardOf(a.ctx(c), row)
				if err != nil {
					return err
				}
				doc, n, id = hub.RowExport(lb, row), 1, string(row.UID)
			}
			data, err := hub.Marshal(doc, ff)
			if err != nil {
				return err
			}
			if err := hub.WriteFile(output, data, force); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"id": id, "output": output, "rows": n})
			}
			fmt.Fprintf(a.stdout, "Exported %s to %s\n", count(n, "row"), output)
			return nil
		},
	}
	f := c.Flags()
	f.StringVarP(&output, "output", "o", "", "file to write (.yaml, .yml or .json)")
	f.BoolVar(&all, "all", false, "export every row of the leaderboard")
	f.BoolVar(&force, "force", false, "overwrite an existing file")
	a.addJSON(c)
	return c
}
