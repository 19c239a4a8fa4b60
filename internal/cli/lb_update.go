package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

func (a *app) updateCmd() *cobra.Command {
	var title, description, visibility, config, rows string
	var refs, ids []string
	var dryRun bool
	c := &cobra.Command{
		Use:   "update <leaderboard> [--title] [--description] [--visibility public|private] [--dataset-version-ref <ref>]... [--dataset-version-id <uuid>]... [--config <file>] [--rows <file>] [--dry-run]",
		Short: "Change a leaderboard's definition and/or apply a rows file, as one transaction",
		Long: "Flags override the values of --config. The package and the name cannot change.\n" +
			"Dataset-version flags replace the associations; without them the associations stay.\n" +
			"--config with --rows is one transaction: everything is validated (also by a server-side\n" +
			"dry-run) before the first write, and a failed write restores what was written.\n" +
			"--dry-run needs both a definition change and --rows; it prints the change and writes nothing.",
		Args: exactArgs(1, "one leaderboard"),
		RunE: func(c *cobra.Command, args []string) error {
			f := c.Flags()
			req := hub.UpdateRequest{DryRun: dryRun}
			if f.Changed("title") {
				req.Title = &title
			}
			if f.Changed("description") {
				req.Description = &description
			}
			if visibility != "" && visibility != "public" && visibility != "private" {
				return usagef("--visibility must be public or private, not %q", visibility)
			}
			req.Visibility = visibility
			if f.Changed("dataset-version-ref") || f.Changed("dataset-version-id") {
				req.VersionFlags, req.Refs, req.IDs = true, refs, ids
				for _, id := range ids {
					if !hub.IsUUID(id) {
						return usagef("--dataset-version-id %q is not a UUID", id)
					}
				}
			}
			definition := config != "" || req.Title != nil || req.Description != nil || visibility != "" || req.VersionFlags
			if dryRun && (!definition || rows == "") {
				return usagef("--dry-run needs both a definition change (--config or a definition flag) and --rows")
			}
			if !definition && rows == "" {
				return usagef("nothing to update: give --config, --rows or a definition flag")
			}
			var err error
			if config != "" {
				if req.Config, err = hub.LoadConfig(config); err != nil {
					return err
				}
			}
			if rows != "" {
				if req.Rows, err = hub.LoadRows(rows); err != nil {
					return err
				}
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			lb, err := cl.Board(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			res, err := cl.UpdateBoard(a.ctx(c), lb, req)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"leaderboard": hub.BoardToJSON(res.Board), "result": res})
			}
			a.printUpdate(hub.Slug(lb), res)
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&title, "title", "", "new title")
	f.StringVar(&description, "description", "", "new description")
	f.StringVar(&visibility, "visibility", "", "public or private")
	f.StringArrayVar(&refs, "dataset-version-ref", nil, "dataset version ref (latest or a tag); repeatable; replaces the associations")
	f.StringArrayVar(&ids, "dataset-version-id", nil, "dataset version UUID; repeatable; replaces the associations")
	f.StringVar(&config, "config", "", "definition file (from export, edited)")
	f.StringVar(&rows, "rows", "", "rows file (from row export --all, edited; rows without id are added)")
	f.BoolVar(&dryRun, "dry-run", false, "print the change and write nothing")
	a.addJSON(c)
	return c
}

func (a *app) printUpdate(slug string, res *hub.UpdateResult) {
	w := a.stdout
	verb := "Updated"
	if res.DryRun {
		verb = "Dry run: would update"
	}
	if len(res.Diff) == 0 && len(res.RowDiffs) == 0 {
		fmt.Fprintf(w, "No changes to %s\n", slug)
		return
	}
	fmt.Fprintf(w, "%s leaderboard %s\n", verb, slug)
	for _, d := range res.Diff {
		fmt.Fprintf(w, "  %s:\n    - %s\n    + %s\n", d.Field, clip(string(d.Old), 200), clip(string(d.New), 200))
	}
	for _, r := range res.RowDiffs {
		if r.New {
			fmt.Fprintf(w, "  + rows[%d]: new row\n", r.Index)
		} else {
			fmt.Fprintf(w, "  ~ rows[%d] (row %s): %s\n", r.Index, r.ID, strings.Join(r.Fields, ", "))
		}
	}
	created := len(res.RowsCreated)
	if res.DryRun {
		for _, r := range res.RowDiffs {
			if r.New {
				created++
			}
		}
	}
	fmt.Fprintf(w, "%s, %s updated, %s added, %s unchanged\n", count(len(res.Diff), "definition field"), count(len(res.RowsUpdated), "row"), count(created, "row"), count(res.RowsSkipped, "row"))
}
