package cli

import (
	"context"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/rowhistory"
)

// rowHistoryOptions is `row history <row-id>`.
type rowHistoryOptions struct {
	*app
	oneArg
}

func (a *app) rowHistoryCmd() *cobra.Command {
	return a.verb(&rowHistoryOptions{app: a}, "hub leaderboard row history", exactArgs(1, "one row id"))
}

func (o *rowHistoryOptions) Run(ctx context.Context) error {
	_, row, lb, err := o.rowAndBoard(ctx, o.arg)
	if err != nil {
		return err
	}
	// The CLI's users read the row with their own Kubernetes rights: members, who see
	// user names on every board.
	return o.print(rowhistory.Served(hubv1alpha1.ID(lb), row, true))
}
