package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

// rowDeleteOptions is `row delete <row-id>...`.
type rowDeleteOptions struct {
	*app
	ids []string
	yes bool
}

func (a *app) rowDeleteCmd() *cobra.Command {
	return a.verb(&rowDeleteOptions{app: a}, "hub leaderboard row delete", func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("row delete takes one or more row ids")
		}
		for _, id := range args {
			if !hubv1alpha1.IsUUID(id) {
				return usagef("%q is not a row id (a UUID)", id)
			}
		}
		return nil
	})
}

// addFlags adds the verb's own flags to c.
func (o *rowDeleteOptions) addFlags(c *cobra.Command) {
	c.Flags().BoolVarP(&o.yes, "yes", "y", false, "delete without asking")
}

func (o *rowDeleteOptions) Complete(_ *cobra.Command, args []string) error {
	o.ids = args
	return nil
}

func (o *rowDeleteOptions) Validate() error {
	if !o.yes && !isTerminal(o.stdin) {
		return usagef("refusing to delete %s without confirmation: stdin is not a terminal; pass --yes", count(len(hub.Dedupe(o.ids)), "row"))
	}
	return nil
}

func (o *rowDeleteOptions) Run(ctx context.Context) error {
	if !o.yes && !o.confirm(fmt.Sprintf("Permanently delete %s and their trial links? Type 'yes' to confirm: ", count(len(hub.Dedupe(o.ids)), "row"))) {
		return fmt.Errorf("not confirmed: nothing was deleted")
	}
	cl, err := o.hub()
	if err != nil {
		return err
	}
	rows, err := cl.DeleteRows(ctx, o.ids)
	if err != nil {
		return err
	}
	return o.print(rows)
}
