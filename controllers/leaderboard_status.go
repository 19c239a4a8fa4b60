package controllers

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/accessor"
	"podium.dev/podium/internal/boardres"
	"podium.dev/podium/internal/dsversion"
	"podium.dev/podium/internal/health"
	"podium.dev/podium/internal/schema"
)

// boardFacts are the other objects a board's status depends on, read from the cache.
type boardFacts struct {
	// dataset is the board's Dataset in its namespace, nil when not found.
	dataset *hubv1alpha1.Dataset
	// datasetElsewhere is the Dataset the board names when it lives in another org.
	datasetElsewhere *hubv1alpha1.Dataset
	// sameName are the boards with the board's slug (the board itself included).
	sameName []hubv1alpha1.Leaderboard
	// rows and ranked count the board's rows and its shown, valid ones.
	rows, ranked int32
	// invalid counts the rows whose values fail the schemas; invalidNames are the
	// first few of their names, sorted.
	invalid      int32
	invalidNames []string
}

// problem is one reason a board is not Ready.
type problem struct{ reason, message string }

// boardStatus decides a board's status from the board and the facts at time now. It is
// pure: the reconciler writes what it returns when it differs from what is stored.
func boardStatus(lb *hubv1alpha1.Leaderboard, f boardFacts, now time.Time) hubv1alpha1.LeaderboardStatus {
	st := *lb.Status.DeepCopy()
	st.UpdatedAt = specChangedAt(lb, st.ObservedGeneration, st.UpdatedAt, now)
	st.ObservedGeneration = lb.Generation
	st.Rows, st.RankedRows = f.rows, f.ranked
	st.InvalidRows, st.InvalidRowNames = f.invalid, f.invalidNames
	if lb.Spec.Package != "" {
		st.Package = lb.Spec.Package
	}
	var problems []problem

	metaSchema, metricsSchema, schemaProblems := parseBoardSchemas(lb)
	problems = append(problems, schemaProblems...)

	switch {
	case f.dataset != nil:
		st.Package = f.dataset.Namespace + "/" + f.dataset.Name
		st.PackageID = hubv1alpha1.ID(f.dataset)
	case f.datasetElsewhere != nil:
		problems = append(problems, problem{hubv1alpha1.ReasonPackageInOtherOrg, fmt.Sprintf(
			"package: %s/%s belongs to another organization: a leaderboard must live in its dataset's namespace %q",
			f.datasetElsewhere.Namespace, f.datasetElsewhere.Name, f.datasetElsewhere.Namespace)})
	case lb.Spec.Package != "":
		problems = append(problems, problem{hubv1alpha1.ReasonDatasetNotFound, fmt.Sprintf("package: dataset %q does not exist", lb.Spec.Package)})
	default:
		problems = append(problems, problem{hubv1alpha1.ReasonDatasetNotFound, fmt.Sprintf("packageID: no dataset with id %q in namespace %q", lb.Spec.PackageID, lb.Namespace)})
	}

	if owner := slugOwner(lb, f.sameName); owner != nil {
		problems = append(problems, problem{hubv1alpha1.ReasonDuplicateName, fmt.Sprintf(
			"name: leaderboard %q (object %s) of package %s already has this name", lb.Spec.Name, owner.Name, st.Package)})
	}

	if f.dataset != nil {
		if p := resolveVersions(lb, f.dataset, &st); p != nil {
			problems = append(problems, *p)
		}
	}

	if len(schemaProblems) == 0 {
		if unknown := undeclaredAccessors(lb, metaSchema, metricsSchema); len(unknown) > 0 {
			problems = append(problems, problem{hubv1alpha1.ReasonUnknownAccessor,
				"accessors not declared by the schemas: " + strings.Join(unknown, ", ")})
		}
	}

	verdict, reason := health.Healthy, hubv1alpha1.ReasonReady
	message := fmt.Sprintf("leaderboard is ready with %d dataset versions", len(st.DatasetVersionIDs))
	if len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.message
		}
		verdict, reason = worstProblem(problems)
		message = truncate(strings.Join(msgs, "; "), 4096)
	}
	health.Set(&st.Conditions, lb.Generation, verdict, reason, message)
	return st
}

// specChangedAt is status.updatedAt: when the object's spec last changed, as the
// controller saw it. The status write a new generation causes anyway (observedGeneration)
// carries it, so it costs no write of its own. The first status of generation 1 takes
// the creation time; any other generation the status has not described yet takes now,
// but at least a second after the previous value (or the creation), whatever the clocks:
// updated_at is served to the second and is the token of stale protection, so every
// spec change must move it, two changes within one second too. While the
// generation stays the one the status describes, it is kept as it is: labels,
// annotations, status and resyncs never move it, and an object whose generation was
// observed before the field existed keeps none rather than being written again.
//
// A status restored from a backup (docs/operations.md, "Backup and restore") describes a generation
// larger than the re-created object's: the object was created again with the spec that
// status describes, so its time is kept too. The creation time is the recorded one
// (hubv1alpha1.CreatedAt), which a restore keeps.
func specChangedAt(obj metav1.Object, observed int64, prev *metav1.Time, now time.Time) *metav1.Time {
	gen, created := obj.GetGeneration(), hubv1alpha1.CreatedAt(obj)
	switch {
	case gen == observed:
		return prev
	case observed > gen && prev != nil:
		return prev
	case observed == 0 && gen <= 1:
		return &created
	}
	last := created.Time
	if prev != nil && prev.After(last) {
		last = prev.Time
	}
	t := now.Truncate(time.Second)
	if next := last.Truncate(time.Second).Add(time.Second); t.Before(next) {
		t = next
	}
	return &metav1.Time{Time: t}
}

func parseBoardSchemas(lb *hubv1alpha1.Leaderboard) (metaSchema, metricsSchema *schema.Schema, problems []problem) {
	var err error
	if metaSchema, err = schema.Parse(rawJSON(lb.Spec.MetadataSchema)); err != nil {
		problems = append(problems, problem{hubv1alpha1.ReasonInvalidSchema, "metadataSchema" + pathSep(err.Error())})
	}
	if metricsSchema, err = schema.Parse(rawJSON(lb.Spec.MetricsSchema)); err != nil {
		problems = append(problems, problem{hubv1alpha1.ReasonInvalidSchema, "metricsSchema" + pathSep(err.Error())})
	}
	return metaSchema, metricsSchema, problems
}

// pathSep joins a schema error to the field it is in: "type: ..." becomes
// ".type: ...", a message without a path becomes ": ...".
func pathSep(msg string) string {
	if i := strings.Index(msg, ": "); i > 0 && !strings.Contains(msg[:i], " ") {
		return "." + msg
	}
	return ": " + msg
}

// slugOwner returns the board that owns lb's slug when it is another one (lb is then
// DuplicateName), by the one rule of internal/boardres that the read, the web pages and
// the CLI follow too. same are the boards the cache knows with lb's slug; lb itself
// takes part as it is now, whether or not the cache has it yet.
func slugOwner(lb *hubv1alpha1.Leaderboard, same []hubv1alpha1.Leaderboard) *hubv1alpha1.Leaderboard {
	claimants := make([]hubv1alpha1.Leaderboard, 0, len(same)+1)
	claimants = append(claimants, *lb)
	for i := range same {
		if same[i].UID != lb.UID && same[i].Spec.Name == lb.Spec.Name {
			claimants = append(claimants, same[i])
		}
	}
	if owner := boardres.Owner(claimants); owner.UID != lb.UID {
		return owner
	}
	return nil
}

// resolvedFrom is what status.resolvedFrom records: the spec's refs and ids, with
// omitted (null) and empty ([]) kept apart because they mean different things
// (docs/leaderboards.md, "Dataset versions").
func resolvedFrom(spec *hubv1alpha1.LeaderboardSpec) string {
	b, _ := json.Marshal(struct {
		Refs *[]string `json:"refs"`
		IDs  *[]string `json:"ids"`
	}{spec.DatasetVersionRefs, spec.DatasetVersionIDs})
	return string(b)
}

// resolveVersions fills st.DatasetVersionIDs once (docs/leaderboards.md, "Dataset
// versions"): again only
// when the spec's refs/ids change or the board now points at another dataset. On an
// unknown ref or id the previous resolution stays and the problem names it.
func resolveVersions(lb *hubv1alpha1.Leaderboard, ds *hubv1alpha1.Dataset, st *hubv1alpha1.LeaderboardStatus) *problem {
	from := resolvedFrom(&lb.Spec)
	if st.VersionsResolved && st.ResolvedFrom == from && lb.Status.PackageID == hubv1alpha1.ID(ds) {
		return nil
	}
	ids, p := ResolveVersionIDs(lb.Spec.DatasetVersionRefs, lb.Spec.DatasetVersionIDs, ds.Spec.Versions)
	if p != nil {
		return p
	}
	st.DatasetVersionIDs, st.ResolvedFrom, st.VersionsResolved = ids, from, true
	return nil
}

// ResolveVersionIDs applies the rules of docs/leaderboards.md ("Dataset versions") to a
// dataset's current versions: both
// omitted means every version (oldest first); otherwise the refs ("latest" = the newest
// version, or a tag) then the ids, in order, without duplicates. status.versionsResolved
// tells "resolved to none" from "not resolved yet".
func ResolveVersionIDs(refs, ids *[]string, versions []hubv1alpha1.DatasetVersion) ([]string, *problem) {
	if refs == nil && ids == nil {
		all := dsversion.IDsByAge(versions)
		return all, nil
	}
	out := []string{}
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	var missing []string
	resolve := func(field string, keys *[]string, find func(string, []hubv1alpha1.DatasetVersion) *hubv1alpha1.DatasetVersion) {
		if keys == nil {
			return
		}
		for i, k := range *keys {
			if v := find(k, versions); v != nil {
				add(v.ID)
			} else {
				missing = append(missing, fmt.Sprintf("%s[%d] %q", field, i, k))
			}
		}
	}
	resolve("datasetVersionRefs", refs, dsversion.ByRef)
	resolve("datasetVersionIDs", ids, dsversion.ByID)
	if len(missing) > 0 {
		return nil, &problem{hubv1alpha1.ReasonVersionNotFound, "no such dataset version: " + strings.Join(missing, ", ")}
	}
	return out, nil
}

// undeclaredAccessors names every column and rankBy accessor that points at a property
// the schemas do not declare.
func undeclaredAccessors(lb *hubv1alpha1.Leaderboard, metaSchema, metricsSchema *schema.Schema) []string {
	declared := func(acc string) bool {
		root, path, ok := accessor.Split(acc)
		switch {
		case !ok:
			return false
		case root == accessor.Metadata:
			return metaSchema.Declares(path)
		}
		return metricsSchema.Declares(path)
	}
	var out []string
	for _, c := range lb.Spec.Columns {
		if !declared(c.Accessor) {
			out = append(out, fmt.Sprintf("columns[%s].accessor %q", c.ID, c.Accessor))
		}
		if c.DisplayAccessor != "" && !declared(c.DisplayAccessor) {
			out = append(out, fmt.Sprintf("columns[%s].displayAccessor %q", c.ID, c.DisplayAccessor))
		}
	}
	for i, rule := range lb.Spec.RankBy {
		for _, f := range [...]struct{ name, acc string }{
			{"accessor", rule.Accessor}, {"stderr", rule.Stderr},
			{"intervalLow", rule.IntervalLow}, {"intervalHigh", rule.IntervalHigh},
		} {
			if f.acc != "" && !declared(f.acc) {
				out = append(out, "rankBy["+strconv.Itoa(i)+"]."+f.name+" "+strconv.Quote(f.acc))
			}
		}
	}
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(" ...")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " ..."
}
