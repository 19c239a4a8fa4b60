package cli

import (
	"fmt"
	"strings"

	"podium.dev/podium/internal/wire/secretswire"
)

// secretPrinter prints the answers of the secrets and registry-credential commands: JSON
// with --json, ids with --quiet, else a table or a line for people. Nothing it prints
// can hold a value: the records have no such field.
type secretPrinter struct{ a *app }

func (a *app) secretPrinter() secretPrinter { return secretPrinter{a} }

func (p secretPrinter) stored(rec secretswire.Record, replaced bool) error {
	if p.a.json {
		return p.a.printJSON(rec)
	}
	fmt.Fprintf(p.a.stdout, "%s %s (%s, %s, id %s)\n", storedVerb(replaced), rec.EnvVar, rec.Scope, masked(rec.ValueLast4), rec.ID)
	return nil
}

func (p secretPrinter) secrets(pg paging, all []secretswire.Record) error {
	lo, hi, page := p.a.window(pg, len(all))
	items := all[lo:hi]
	switch {
	case p.a.json:
		return p.a.printJSON(newListPage(items, page))
	case p.a.quiet:
		for _, s := range items {
			fmt.Fprintln(p.a.stdout, s.ID)
		}
		return nil
	}
	t := p.a.newTable("ENV VAR", "SCOPE", "JOB", "VALUE", "STATUS", "CREATED", "LAST USED", "ID")
	for _, s := range items {
		t.row(s.EnvVar, s.Scope, orDash(s.JobID), masked(s.ValueLast4), s.Status, s.CreatedAt, orDash(s.LastUsedAt), s.ID)
	}
	if err := t.flush(); err != nil {
		return err
	}
	p.a.pageHint(pg, page, "secret")
	return nil
}

func (p secretPrinter) registryStored(rec secretswire.RegistryRecord, replaced bool) error {
	if p.a.json {
		return p.a.printJSON(rec)
	}
	fmt.Fprintf(p.a.stdout, "%s registry credential %q (%s) for %s@%s (%s, id %s)\n", storedVerb(replaced), rec.DisplayName, rec.Provider, rec.Username, rec.RegistryHost, rec.Fingerprint, rec.ID)
	return nil
}

func (p secretPrinter) registry(pg paging, all []secretswire.RegistryRecord) error {
	lo, hi, page := p.a.window(pg, len(all))
	items := all[lo:hi]
	switch {
	case p.a.json:
		return p.a.printJSON(newListPage(items, page))
	case p.a.quiet:
		for _, r := range items {
			fmt.Fprintln(p.a.stdout, r.ID)
		}
		return nil
	}
	t := p.a.newTable("NAME", "PROVIDER", "REGISTRY HOST", "USERNAME", "FINGERPRINT", "STATUS", "CREATED", "LAST USED", "ID")
	for _, r := range items {
		t.row(r.DisplayName, r.Provider, r.RegistryHost, r.Username, r.Fingerprint, r.Status, r.CreatedAt, orDash(r.LastUsedAt), r.ID)
	}
	if err := t.flush(); err != nil {
		return err
	}
	p.a.pageHint(pg, page, "credential")
	return nil
}

// affected prints the answer of a DELETE.
func (p secretPrinter) affected(out secretswire.Affected, what string, purge bool) error {
	if p.a.json {
		return p.a.printJSON(out)
	}
	verb := "Revoked"
	if purge {
		verb = "Purged"
	}
	if out.Affected == 0 {
		fmt.Fprintf(p.a.stdout, "Nothing to %s: %s has no %s record\n", strings.ToLower(verb[:len(verb)-1]), what, map[bool]string{true: "", false: "active "}[purge])
		return nil
	}
	fmt.Fprintf(p.a.stdout, "%s %s (%s)\n", verb, what, count(out.Affected, "record"))
	return nil
}

func storedVerb(replaced bool) string {
	if replaced {
		return "Replaced"
	}
	return "Stored"
}
