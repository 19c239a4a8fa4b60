package cli

import (
	"context"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// rowCreateOptions is `row create <leaderboard> --config <rows file>`.
type rowCreateOptions struct {
	*app
	ref, config string
}

func (a *app) rowCreateCmd() *cobra.Command {
	o := &rowCreateOptions{app: a}
	c := &cobra.Command{
		Use:   "create <leaderboard> --config <rows file>",
		Short: "Add 1 to 500 rows, all or nothing",
		Args:  exactArgs(1, "one leaderboard"),
		RunE:  a.runVerb(o),
	}
	c.Flags().StringVar(&o.config, "config", "", "rows file ({rows: [...]}, .yaml/.yml/.json)")
	a.addListFlags(c, "row ids")
	return c
}

func (o *rowCreateOptions) Complete(_ *cobra.Command, args []string) error {
	o.ref = args[0]
	return nil
}

func (o *rowCreateOptions) Validate() error {
	if o.config == "" {
		return usagef("--config is required")
	}
	return nil
}

func (o *rowCreateOptions) Run(ctx context.Context) error {
	rf, err := hub.LoadRows(o.config)
	if err != nil {
		return err
	}
	cl, lb, err := o.board(ctx, o.ref)
	if err != nil {
		return err
	}
	rows, err := cl.CreateRows(ctx, lb, rf)
	if err != nil {
		return err
	}
	return o.print(lb, rows)
}
