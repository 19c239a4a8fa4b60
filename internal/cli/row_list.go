package cli

import (
	"context"

	"github.com/spf13/cobra"
)

// rowListOptions is `row list <leaderboard>`: every row, ranked ones first.
type rowListOptions struct {
	*app
	listArgs
}

func (a *app) rowListCmd() *cobra.Command {
	return a.listVerb(&rowListOptions{app: a}, "row ids", "hub leaderboard row list", exactArgs(1, "one leaderboard"))
}

func (o *rowListOptions) Run(ctx context.Context) error {
	lb, rows, err := o.rankedBoard(ctx, o.arg)
	if err != nil {
		return err
	}
	return o.print(lb, rows)
}
