package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) createCmd() *cobra.Command {
	var config, rows, visibility string
	c := &cobra.Command{
		Use:   "create --config <file> [--rows <file>] [--visibility public|private]",
		Short: "Create a leaderboard, optionally with rows, all or nothing",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if config == "" {
				return usagef("--config is required")
			}
			if visibility != "" && visibility != "public" && visibility != "private" {
				return usagef("--visibility must be public or private, not %q", visibility)
			}
			cfg, err := hub.LoadConfig(config)
			if err != nil {
				return err
			}
			var rf *hub.RowsFile
			if rows != "" {
				if rf, err = hub.LoadRows(rows); err != nil {
					return err
				}
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			out, err := cl.CreateBoard(a.ctx(c), cfg, rf, visibility)
			if err != nil {
				return err
			}
			if a.json {
				rowsJSON := []hub.RowJSON{}
				for _, r := range out.Rows {
					rowsJSON = append(rowsJSON, hub.RowToJSON(string(out.Board.UID), r, 0))
				}
				return a.printJSON(map[string]any{"leaderboard": hub.BoardToJSON(out.Board), "rows": rowsJSON})
			}
			fmt.Fprintf(a.stdout, "Created leaderboard %s (%s) with %s\n", hub.Slug(out.Board), out.Board.UID, count(len(out.Rows), "row"))
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&config, "config", "", "definition file (.yaml/.yml/.json, or manifests from export --format manifest)")
	f.StringVar(&rows, "rows", "", "rows file to add in the same operation")
	f.StringVar(&visibility, "visibility", "", "public or private (overrides the file)")
	a.addJSON(c)
	return c
}
