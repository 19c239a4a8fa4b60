package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/boardcsv"
	"podium.dev/podium/internal/cli/hub"
	"podium.dev/podium/internal/ranking"
)

func (a *app) rowExportCmd() *cobra.Command {
	var output, format string
	var all, force bool
	c := &cobra.Command{
		Use:   "export (<row-id> | <leaderboard> --all | <leaderboard> --format csv) --output <file>",
		Short: "Export one row, or every row of a leaderboard (--all), to edit and apply; or a board's ranking as CSV",
		Long: "One row exports as a row file for `row update --config`; --all exports every row of the\n" +
			"board (shown and hidden, each with its status) as a rows file for `update --rows`.\n" +
			"Files carry expected_updated_at: applying a file whose target changed since is refused.\n" +
			"--format csv writes the board's ranked rows as the HTTP API's CSV (.csv; docs/http-api.md):\n" +
			"rank, the rank range when the rules name an uncertainty, id, times, then metadata and metrics.",
		Args: exactArgs(1, "one row id, or one leaderboard with --all or --format csv"),
		RunE: func(c *cobra.Command, args []string) error {
			if output == "" {
				return usagef("--output is required")
			}
			switch format {
			case "", string(hub.FormatYAML), string(hub.FormatJSON):
			case "csv":
				return a.exportCSV(c, args[0], output, all, force)
			default:
				return usagef("--format must be yaml, json or csv, not %q", format)
			}
			_, ff, err := hub.OutputFormat(output, format)
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
				if !hubv1alpha1.IsUUID(args[0]) {
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
	f.StringVarP(&output, "output", "o", "", "file to write (.yaml, .yml or .json; .csv with --format csv)")
	f.StringVar(&format, "format", "", "yaml or json (default: by extension), or csv: the board's ranked rows")
	f.BoolVar(&all, "all", false, "export every row of the leaderboard")
	f.BoolVar(&force, "force", false, "overwrite an existing file")
	a.addJSON(c)
	return c
}

// exportCSV writes a board's ranked rows as CSV, the bytes the HTTP API's CSV read
// serves for the same rows (package boardcsv).
func (a *app) exportCSV(c *cobra.Command, board, output string, all, force bool) error {
	if all {
		return usagef("--format csv exports the board's ranked rows; --all is for rows files (.yaml, .yml, .json)")
	}
	if !strings.EqualFold(filepath.Ext(output), ".csv") {
		return usagef("--format csv writes a .csv file; %q does not end in .csv", output)
	}
	cl, err := a.hub()
	if err != nil {
		return err
	}
	lb, err := cl.Board(a.ctx(c), board)
	if err != nil {
		return err
	}
	rows, err := cl.BoardRows(a.ctx(c), lb)
	if err != nil {
		return err
	}
	ranked := make([]*hubv1alpha1.LeaderboardRow, 0, len(rows))
	for i := range rows {
		if ranking.Ranked(&rows[i]) {
			ranked = append(ranked, &rows[i])
		}
	}
	var buf bytes.Buffer
	if err := boardcsv.Write(&buf, lb, ranking.Sort(lb.Spec.RankBy, ranked)); err != nil {
		return err
	}
	if err := hub.WriteFile(output, buf.Bytes(), force); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(map[string]any{"id": string(lb.UID), "output": output, "rows": len(ranked)})
	}
	fmt.Fprintf(a.stdout, "Exported %s to %s\n", count(len(ranked), "ranked row"), output)
	return nil
}
