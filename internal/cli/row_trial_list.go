package cli

import (
	"context"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// trialListOptions is `row trial list <row-id>`.
type trialListOptions struct {
	*app
	id     string
	paging paging
}

func (a *app) trialListCmd() *cobra.Command {
	o := &trialListOptions{app: a}
	c := &cobra.Command{
		Use:     "list <row-id>",
		Aliases: []string{"ls"},
		Short:   "List a row's linked trial ids",
		Args:    exactArgs(1, "one row id"),
		RunE:    a.runVerb(o),
	}
	o.paging.add(c)
	a.addListFlags(c, "trial ids")
	return c
}

func (o *trialListOptions) Complete(c *cobra.Command, args []string) error {
	o.id = args[0]
	o.paging.complete(c)
	return nil
}

func (o *trialListOptions) Validate() error { return o.paging.validate() }

func (o *trialListOptions) Run(ctx context.Context) error {
	_, row, err := o.row(ctx, o.id)
	if err != nil {
		return err
	}
	links := hub.TrialLinks(row)
	lo, hi, pg := o.window(o.paging, len(links))
	return o.print(links[lo:hi], pg)
}
