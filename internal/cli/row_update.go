package cli

import (
	"context"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// rowUpdateOptions is `row update <row-id>`: a row file and/or a status.
type rowUpdateOptions struct {
	*app
	oneArg
	config, status string
}

func (a *app) rowUpdateCmd() *cobra.Command {
	return a.verb(&rowUpdateOptions{app: a}, "hub leaderboard row update", exactArgs(1, "one row id"))
}

// addFlags adds the verb's own flags to c.
func (o *rowUpdateOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.config, "config", "", "row file (.yaml/.yml/.json)")
	c.Flags().StringVar(&o.status, "status", "", "display or hide")
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
	cl, row, err := o.row(ctx, o.arg)
	if err != nil {
		return err
	}
	next, fields, err := cl.UpdateRow(ctx, row, rf, o.status)
	if err != nil {
		return err
	}
	return o.print(next, fields)
}
