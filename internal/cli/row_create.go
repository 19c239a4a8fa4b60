package cli

import (
	"context"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// rowCreateOptions is `row create <leaderboard> --config <rows file>`.
type rowCreateOptions struct {
	*app
	oneArg
	config string
}

func (a *app) rowCreateCmd() *cobra.Command {
	return a.listVerb(&rowCreateOptions{app: a}, "row ids", "hub leaderboard row create", exactArgs(1, "one leaderboard"))
}

// addFlags adds the verb's own flags to c.
func (o *rowCreateOptions) addFlags(c *cobra.Command) {
	c.Flags().StringVar(&o.config, "config", "", "rows file ({rows: [...]}, .yaml/.yml/.json)")
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
	cl, lb, err := o.board(ctx, o.arg)
	if err != nil {
		return err
	}
	rows, err := cl.CreateRows(ctx, lb, rf)
	if err != nil {
		return err
	}
	return o.print(lb, rows)
}
