package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// rowShowOptions is `row show <row-id>`.
type rowShowOptions struct {
	*app
	oneArg
}

func (a *app) rowShowCmd() *cobra.Command {
	return a.verb(&rowShowOptions{app: a}, "hub leaderboard row show", exactArgs(1, "one row id"))
}

func (o *rowShowOptions) Run(ctx context.Context) error {
	cl, row, lb, err := o.rowAndBoard(ctx, o.arg)
	if err != nil {
		return err
	}
	ranked, err := cl.RankOf(ctx, lb, row)
	if err != nil {
		return err
	}
	return o.print(lb, ranked)
}
