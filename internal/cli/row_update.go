package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// rowUpdateOptions is `row update <row-id>`: a row file and/or a status.
type rowUpdateOptions struct {
	*app
	id, config, status string
}

func (a *app) rowUpdateCmd() *cobra.Command {
	o := &rowUpdateOptions{app: a}
	c := &cobra.Command{
		Use:   "update <row-id> [--config <file>] [--status hide|display]",
		Short: "Change a row's metadata, metrics or status",
		Long: "--config takes a row file (what `row export <row-id>` writes, or just the fields to\n" +
			"change: metadata, metrics, status, trial_ids); what it omits is kept. --status wins over it.",
		Args: exactArgs(1, "one row id"),
		RunE: a.runVerb(o),
	}
	c.Flags().StringVar(&o.config, "config", "", "row file (.yaml/.yml/.json)")
	c.Flags().StringVar(&o.status, "status", "", "display or hide")
	a.addJSON(c)
	return c
}

func (o *rowUpdateOptions) Complete(_ *cobra.Command, args []string) error {
	o.id = args[0]
	return nil
}

func (o *rowUpdateOptions) Validate() error {
	if o.config == "" && o.status == "" {
		return usagef("give --config or --status")
	}
	if o.status != "" && o.status != "display" && o.status != "hide" {
		return usagef("--status must be display or hide, not %q", o.status)
	}
	return nil
}

func (o *rowUpdateOptions) Run(ctx context.Context) error {
	var rf *hub.RowFile
	if o.config != "" {
		var err error
		if rf, err = hub.LoadRow(o.config); err != nil {
			return err
		}
	}
	cl, row, err := o.row(ctx, o.id)
	if err != nil {
		return err
	}
	next, fields, err := cl.UpdateRow(ctx, row, rf, o.status)
	if err != nil {
		return err
	}
	if o.json {
		if fields == nil {
			fields = []string{}
		}
		return o.printJSON(map[string]any{"row": hub.RowToJSON("", hub.RankedRow{Row: next}), "changed_fields": fields})
	}
	if len(fields) == 0 {
		fmt.Fprintf(o.stdout, "No changes to row %s\n", hubv1alpha1.ID(row))
		return nil
	}
	fmt.Fprintf(o.stdout, "Updated row %s: %s\n", hubv1alpha1.ID(row), strings.Join(fields, ", "))
	return nil
}
