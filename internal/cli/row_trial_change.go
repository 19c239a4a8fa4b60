package cli

import (
	"context"

	"github.com/spf13/cobra"

	"podium.dev/podium/internal/cli/hub"
)

// trialChangeOptions is `row trial set|add|remove <row-id>`.
type trialChangeOptions struct {
	*app
	oneArg
	verb  string
	ids   []string
	file  string
	clear bool
}

func (a *app) trialChangeCmd(verb string) *cobra.Command {
	return a.verb(&trialChangeOptions{app: a, verb: verb}, "hub leaderboard row trial "+verb, exactArgs(1, "one row id"))
}

// addFlags adds the verb's own flags to c.
func (o *trialChangeOptions) addFlags(c *cobra.Command) {
	c.Flags().StringArrayVar(&o.ids, "trial-id", nil, "trial UUID; repeatable")
	if o.verb == "set" {
		c.Flags().StringVar(&o.file, "trial-ids-file", "", "YAML or JSON file with a non-empty trial_ids list (used on its own)")
		c.Flags().BoolVar(&o.clear, "clear", false, "remove every link")
	}
}

func (o *trialChangeOptions) Validate() error {
	given := 0
	for _, b := range []bool{len(o.ids) > 0, o.file != "", o.clear} {
		if b {
			given++
		}
	}
	switch {
	case o.verb == "set" && given != 1:
		return usagef("trial set takes exactly one of --trial-id, --trial-ids-file or --clear")
	case o.verb != "set" && len(o.ids) == 0:
		return usagef("trial %s needs --trial-id", o.verb)
	}
	if _, j := hub.DuplicateTrialID(o.ids); j >= 0 {
		return usagef("--trial-id %s is given twice", o.ids[j])
	}
	return nil
}

func (o *trialChangeOptions) Run(ctx context.Context) error {
	ids := o.ids
	if o.file != "" {
		var err error
		if ids, err = hub.LoadTrialIDs(o.file); err != nil {
			return err
		}
	}
	cl, row, err := o.row(ctx, o.arg)
	if err != nil {
		return err
	}
	op := map[string]hub.TrialOp{"set": hub.TrialsSet, "add": hub.TrialsAdd, "remove": hub.TrialsRemove}[o.verb]
	next, err := cl.ChangeTrials(ctx, row, op, ids)
	if err != nil {
		return err
	}
	return o.print(next)
}
