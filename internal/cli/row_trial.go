package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/cli/hub"
)

func (a *app) trialCmd() *cobra.Command {
	t := &cobra.Command{Use: "trial", Aliases: []string{"trials"}, Short: "Manage a row's linked trial ids", Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	t.AddCommand(a.trialListCmd(), a.trialChangeCmd("set"), a.trialChangeCmd("add"), a.trialChangeCmd("remove"))
	return t
}

func (a *app) trialListCmd() *cobra.Command {
	var p paging
	c := &cobra.Command{
		Use:     "list <row-id>",
		Aliases: []string{"ls"},
		Short:   "List a row's linked trial ids",
		Args:    exactArgs(1, "one row id"),
		RunE: func(c *cobra.Command, args []string) error {
			if err := p.check(c); err != nil {
				return err
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			row, err := cl.Row(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			links := hub.TrialLinks(row)
			lo, hi, pg := a.window(p, len(links))
			page := links[lo:hi]
			switch {
			case a.json:
				return a.printJSON(newListPage(page, pg))
			case a.quiet:
				for _, l := range page {
					fmt.Fprintln(a.stdout, l.TrialID)
				}
				return nil
			}
			tb := a.newTable("TRIAL ID", "LINKED")
			for _, l := range page {
				linked := "-"
				if l.LinkedAt != nil {
					linked = *l.LinkedAt
				}
				tb.row(l.TrialID, linked)
			}
			if err := tb.flush(); err != nil {
				return err
			}
			a.pageHint(p, pg, "trial")
			return nil
		},
	}
	p.add(c)
	a.addListFlags(c, "trial ids")
	return c
}

func (a *app) trialChangeCmd(verb string) *cobra.Command {
	var ids []string
	var file string
	var clear bool
	short := map[string]string{
		"set":    "Replace all of a row's trial links (--trial-id..., --trial-ids-file, or --clear)",
		"add":    "Add trial links to a row",
		"remove": "Remove trial links from a row",
	}[verb]
	c := &cobra.Command{
		Use:   verb + " <row-id> --trial-id <id>...",
		Short: short,
		Args:  exactArgs(1, "one row id"),
		RunE: func(c *cobra.Command, args []string) error {
			op := map[string]hub.TrialOp{"set": hub.TrialsSet, "add": hub.TrialsAdd, "remove": hub.TrialsRemove}[verb]
			given := 0
			for _, b := range []bool{len(ids) > 0, file != "", clear} {
				if b {
					given++
				}
			}
			switch {
			case verb == "set" && given != 1:
				return usagef("trial set takes exactly one of --trial-id, --trial-ids-file or --clear")
			case verb != "set" && len(ids) == 0:
				return usagef("trial %s needs --trial-id", verb)
			}
			if _, j := hub.DuplicateTrialID(ids); j >= 0 {
				return usagef("--trial-id %s is given twice", ids[j])
			}
			if file != "" {
				var err error
				if ids, err = hub.LoadTrialIDs(file); err != nil {
					return err
				}
			}
			cl, err := a.hub()
			if err != nil {
				return err
			}
			row, err := cl.Row(a.ctx(c), args[0])
			if err != nil {
				return err
			}
			next, err := cl.ChangeTrials(a.ctx(c), row, op, ids)
			if err != nil {
				return err
			}
			return a.printTrials(next)
		},
	}
	c.Flags().StringArrayVar(&ids, "trial-id", nil, "trial UUID; repeatable")
	if verb == "set" {
		c.Flags().StringVar(&file, "trial-ids-file", "", "YAML or JSON file with a non-empty trial_ids list (used on its own)")
		c.Flags().BoolVar(&clear, "clear", false, "remove every link")
	}
	a.addJSON(c)
	return c
}

func (a *app) printTrials(row *hubv1alpha1.LeaderboardRow) error {
	if a.json {
		return a.printJSON(map[string]any{"row_id": string(row.UID), "trial_ids": append([]string{}, row.Spec.TrialIDs...)})
	}
	fmt.Fprintf(a.stdout, "Row %s now links %s\n", row.UID, count(len(row.Spec.TrialIDs), "trial"))
	return nil
}
