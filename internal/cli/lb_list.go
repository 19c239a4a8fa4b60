package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// listOptions is `leaderboard list [<org>/<dataset> | <dataset-id>]`.
type listOptions struct {
	*app
	filter string
	paging paging
}

func (a *app) listCmd() *cobra.Command {
	o := &listOptions{app: a}
	c := &cobra.Command{
		Use:     "list [<org>/<dataset> | <dataset-id>]",
		Aliases: []string{"ls"},
		Short:   "List leaderboards, optionally of one dataset",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("list takes at most one dataset (%d given)", len(args))
			}
			return nil
		},
		RunE: a.runVerb(o),
	}
	o.paging.add(c)
	a.addListFlags(c, "leaderboard slugs")
	return c
}

func (o *listOptions) Complete(c *cobra.Command, args []string) error {
	if len(args) == 1 {
		o.filter = args[0]
	}
	o.paging.complete(c)
	return nil
}

func (o *listOptions) Validate() error { return o.paging.validate() }

func (o *listOptions) Run(ctx context.Context) error {
	cl, err := o.hub()
	if err != nil {
		return err
	}
	boards, err := cl.Boards(ctx, o.filter)
	if err != nil {
		return err
	}
	slices.SortFunc(boards, func(x, y hubv1alpha1.Leaderboard) int { return strings.Compare(hub.Slug(&x), hub.Slug(&y)) })
	lo, hi, pg := o.window(o.paging, len(boards))
	return o.print(boards[lo:hi], pg)
}
