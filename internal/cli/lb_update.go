package cli

import (
	"context"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// updateOptions is `leaderboard update`: a definition change and/or a rows file, as
// one transaction.
type updateOptions struct {
	*app
	oneArg
	title, description, visibility, config, rowsFile string
	refs, ids                                        []string
	dryRun                                           bool
	req                                              hub.UpdateRequest
}

func (a *app) updateCmd() *cobra.Command {
	return a.verb(&updateOptions{app: a}, "hub leaderboard update", exactArgs(1, "one leaderboard"))
}

// addFlags adds the verb's own flags to c.
func (o *updateOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.title, "title", "", "new title")
	f.StringVar(&o.description, "description", "", "new description")
	f.StringVar(&o.visibility, "visibility", "", "public or private")
	f.StringArrayVar(&o.refs, "dataset-version-ref", nil, "dataset version ref (latest or a tag); repeatable; replaces the associations")
	f.StringArrayVar(&o.ids, "dataset-version-id", nil, "dataset version UUID; repeatable; replaces the associations")
	f.StringVar(&o.config, "config", "", "definition file (from export, edited; or Harbor's export)")
	f.StringVar(&o.rowsFile, "rows", "", "rows file (from row export --all, edited, or Harbor's; rows without id are added)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the change and write nothing")
}

func (o *updateOptions) Complete(c *cobra.Command, args []string) error {
	o.arg = args[0]
	f := c.Flags()
	o.req = hub.UpdateRequest{DryRun: o.dryRun, DefinitionFlags: hub.DefinitionFlags{Visibility: o.visibility}}
	if f.Changed("title") {
		o.req.Title = &o.title
	}
	if f.Changed("description") {
		o.req.Description = &o.description
	}
	if f.Changed("dataset-version-ref") || f.Changed("dataset-version-id") {
		o.req.VersionFlags, o.req.Refs, o.req.IDs = true, o.refs, o.ids
	}
	return nil
}

func (o *updateOptions) Validate() error {
	if err := validDefinition(o.req.DefinitionFlags); err != nil {
		return err
	}
	definition := o.config != "" || o.req.Title != nil || o.req.Description != nil || o.visibility != "" || o.req.VersionFlags
	if o.dryRun && (!definition || o.rowsFile == "") {
		return usagef("--dry-run needs both a definition change (--config or a definition flag) and --rows")
	}
	if !definition && o.rowsFile == "" {
		return usagef("nothing to update: give --config, --rows or a definition flag")
	}
	return nil
}

func (o *updateOptions) Run(ctx context.Context) error {
	var err error
	if o.config != "" {
		if o.req.Config, err = hub.LoadConfig(o.config); err != nil {
			return err
		}
	}
	if o.rowsFile != "" {
		if o.req.Rows, err = hub.LoadRows(o.rowsFile); err != nil {
			return err
		}
	}
	cl, lb, err := o.board(ctx, o.arg)
	if err != nil {
		return err
	}
	res, err := cl.UpdateBoard(ctx, lb, o.req)
	if err != nil {
		return err
	}
	return o.print(hub.Slug(lb), res)
}
