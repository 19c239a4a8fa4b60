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
	return printList(p.a, pg, all, list[secretswire.Record]{noun: "secret", id: func(s secretswire.Record) string { return s.ID }, columns: secretColumns})
}

var secretColumns = []column[secretswire.Record]{
	{"ENV VAR", func(s secretswire.Record) string { return s.EnvVar }},
	{"SCOPE", func(s secretswire.Record) string { return s.Scope }},
	{"JOB", func(s secretswire.Record) string { return orDash(s.JobID) }},
	{"VALUE", func(s secretswire.Record) string { return masked(s.ValueLast4) }},
	{"STATUS", func(s secretswire.Record) string { return s.Status }},
	{"CREATED", func(s secretswire.Record) string { return s.CreatedAt }},
	{"LAST USED", func(s secretswire.Record) string { return orDash(s.LastUsedAt) }},
	{"ID", func(s secretswire.Record) string { return s.ID }},
}

func (p secretPrinter) registryStored(rec secretswire.RegistryRecord, replaced bool) error {
	if p.a.json {
		return p.a.printJSON(rec)
	}
	fmt.Fprintf(p.a.stdout, "%s registry credential %q (%s) for %s@%s (%s, id %s)\n", storedVerb(replaced), rec.DisplayName, rec.Provider, rec.Username, rec.RegistryHost, rec.Fingerprint, rec.ID)
	return nil
}

func (p secretPrinter) registry(pg paging, all []secretswire.RegistryRecord) error {
	return printList(p.a, pg, all, list[secretswire.RegistryRecord]{noun: "credential", id: func(r secretswire.RegistryRecord) string { return r.ID }, columns: registryColumns})
}

var registryColumns = []column[secretswire.RegistryRecord]{
	{"NAME", func(r secretswire.RegistryRecord) string { return r.DisplayName }},
	{"PROVIDER", func(r secretswire.RegistryRecord) string { return r.Provider }},
	{"REGISTRY HOST", func(r secretswire.RegistryRecord) string { return r.RegistryHost }},
	{"USERNAME", func(r secretswire.RegistryRecord) string { return r.Username }},
	{"FINGERPRINT", func(r secretswire.RegistryRecord) string { return r.Fingerprint }},
	{"STATUS", func(r secretswire.RegistryRecord) string { return r.Status }},
	{"CREATED", func(r secretswire.RegistryRecord) string { return r.CreatedAt }},
	{"LAST USED", func(r secretswire.RegistryRecord) string { return orDash(r.LastUsedAt) }},
	{"ID", func(r secretswire.RegistryRecord) string { return r.ID }},
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
