package cli

import (
	"context"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// trialListOptions is `row trial list <row-id>`.
type trialListOptions struct {
	*app
	listArgs
}

func (a *app) trialListCmd() *cobra.Command {
	return a.listVerb(&trialListOptions{app: a}, "trial ids", "hub leaderboard row trial list", exactArgs(1, "one row id"))
}

func (o *trialListOptions) Run(ctx context.Context) error {
	_, row, err := o.row(ctx, o.arg)
	if err != nil {
		return err
	}
	return o.print(hub.TrialLinks(row))
}
