package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) createCmd() *cobra.Command {
	var config, rows string
	var over hub.BoardFlags
	var description string
	c := &cobra.Command{
		Use:   "create [--config <file>] [-p <org>/<dataset>] [-n <name>] [-t <title>] [-d <description>] [--rows <file>] [--visibility public|private]",
		Short: "Create a leaderboard from a file and/or flags, optionally with rows, all or nothing",
		Long: "The definition comes from --config, from flags, or from both: a flag overrides the file's\n" +
			"value. Without --config the board has the flags' fields and empty schemas, columns and\n" +
			"ranking (add them later with export, edit, update --config).",
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			f := c.Flags()
			if config == "" {
				if err := requireFlags(c, "package", "name", "title"); err != nil {
					return usagef("%s (or give --config)", err.Error())
				}
			}
			if v := over.Visibility; v != "" && v != "public" && v != "private" {
				return usagef("--visibility must be public or private, not %q", v)
			}
			if f.Changed("description") {
				over.Description = &description
			}
			if f.Changed("dataset-version-ref") || f.Changed("dataset-version-id") {
				over.VersionFlags = true
				for _, id := range over.IDs {
					if !hub.IsUUID(id) {
						return usagef("--dataset-version-id %q is not a UUID", id)
					}
				}
			}
			var cfg *hub.Config
			var err error
			if config != "" {
				if cfg, err = hub.LoadConfig(config); err != nil {
					return err
				}
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
			out, err := cl.CreateBoard(a.ctx(c), cfg, rf, over)
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
	f.StringVarP(&over.Package, "package", "p", "", "dataset slug <org>/<dataset> (overrides the file)")
	f.StringVarP(&over.Name, "name", "n", "", "leaderboard slug (overrides the file)")
	f.StringVarP(&over.Title, "title", "t", "", "title (overrides the file)")
	f.StringVarP(&description, "description", "d", "", "description (overrides the file)")
	f.StringVar(&over.Visibility, "visibility", "", "public or private (overrides the file)")
	f.StringArrayVar(&over.Refs, "dataset-version-ref", nil, "dataset version ref (latest or a tag); repeatable; replaces the file's associations")
	f.StringArrayVar(&over.IDs, "dataset-version-id", nil, "dataset version UUID; repeatable; replaces the file's associations")
	f.StringVar(&rows, "rows", "", "rows file to add in the same operation (1 to 500 rows)")
	a.addJSON(c)
	return c
}
