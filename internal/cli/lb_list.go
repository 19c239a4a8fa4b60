package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// listOptions is `leaderboard list [<org>/<dataset> | <dataset-id>]`: the argument is
// the dataset filter.
type listOptions struct {
	*app
	listArgs
}

func (a *app) listCmd() *cobra.Command {
	return a.listVerb(&listOptions{app: a}, "leaderboard slugs", "hub leaderboard list", func(c *cobra.Command, args []string) error {
		if len(args) > 1 {
			return usagef("list takes at most one dataset (%d given)", len(args))
		}
		return nil
	})
}

func (o *listOptions) Run(ctx context.Context) error {
	cl, err := o.hub()
	if err != nil {
		return err
	}
	boards, err := cl.Boards(ctx, o.arg)
	if err != nil {
		return err
	}
	slices.SortFunc(boards, func(x, y hubv1alpha1.Leaderboard) int { return strings.Compare(hub.Slug(&x), hub.Slug(&y)) })
	return o.print(boards)
}
