package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// createOptions is `leaderboard create`: a board from a file and/or flags, with rows.
type createOptions struct {
	*app
	cmd          *cobra.Command
	config, rows string
	over         hub.BoardFlags
	description  string
}

func (a *app) createCmd() *cobra.Command {
	return a.verb(&createOptions{app: a}, "hub leaderboard create", noArgs)
}

// addFlags adds the verb's own flags to c.
func (o *createOptions) addFlags(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&o.config, "config", "", "definition file (.yaml/.yml/.json, or manifests from export --format manifest)")
	f.StringVarP(&o.over.Package, "package", "p", "", "dataset slug <org>/<dataset> (overrides the file)")
	f.StringVarP(&o.over.Name, "name", "n", "", "leaderboard slug (overrides the file)")
	f.StringVarP(&o.over.Title, "title", "t", "", "title (overrides the file)")
	f.StringVarP(&o.description, "description", "d", "", "description (overrides the file)")
	f.StringVar(&o.over.Visibility, "visibility", "", "public or private (overrides the file)")
	f.StringArrayVar(&o.over.Refs, "dataset-version-ref", nil, "dataset version ref (latest or a tag); repeatable; replaces the file's associations")
	f.StringArrayVar(&o.over.IDs, "dataset-version-id", nil, "dataset version UUID; repeatable; replaces the file's associations")
	f.StringVar(&o.rows, "rows", "", "rows file to add in the same operation (1 to 500 rows)")
}

func (o *createOptions) Complete(c *cobra.Command, _ []string) error {
	o.cmd = c
	if c.Flags().Changed("description") {
		o.over.Description = &o.description
	}
	o.over.VersionFlags = c.Flags().Changed("dataset-version-ref") || c.Flags().Changed("dataset-version-id")
	return nil
}

func (o *createOptions) Validate() error {
	if o.config == "" {
		if err := requireFlags(o.cmd, "package", "name", "title"); err != nil {
			return usagef("%s (or give --config)", err.Error())
		}
	}
	return validDefinition(o.over.DefinitionFlags)
}

func (o *createOptions) Run(ctx context.Context) error {
	var cfg *hub.Config
	var err error
	if o.config != "" {
		if cfg, err = hub.LoadConfig(o.config); err != nil {
			return err
		}
	}
	var rf *hub.RowsFile
	if o.rows != "" {
		if rf, err = hub.LoadRows(o.rows); err != nil {
			return err
		}
	}
	cl, err := o.hub()
	if err != nil {
		return err
	}
	out, err := cl.CreateBoard(ctx, cfg, rf, o.over)
	if err != nil {
		return err
	}
	if o.json {
		rowsJSON := []hub.RowJSON{}
		for _, r := range out.Rows {
			rowsJSON = append(rowsJSON, hub.RowToJSON(hubv1alpha1.ID(out.Board), hub.RankedRow{Row: r}))
		}
		return o.printJSON(map[string]any{"leaderboard": hub.BoardToJSON(out.Board), "rows": rowsJSON})
	}
	fmt.Fprintf(o.stdout, "Created leaderboard %s (%s) with %s\n", hub.Slug(out.Board), hubv1alpha1.ID(out.Board), count(len(out.Rows), "row"))
	return nil
}

// validDefinition refuses a --visibility other than public or private (or none) and a
// --dataset-version-id that is not a UUID.
func validDefinition(d hub.DefinitionFlags) error {
	if v := d.Visibility; v != "" && v != "public" && v != "private" {
		return usagef("--visibility must be public or private, not %q", v)
	}
	if !d.VersionFlags {
		return nil
	}
	for _, id := range d.IDs {
		if !hubv1alpha1.IsUUID(id) {
			return usagef("--dataset-version-id %q is not a UUID", id)
		}
	}
	return nil
}
