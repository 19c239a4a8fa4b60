package controllers

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
	"podium.dev/podium/internal/health"
	"podium.dev/podium/internal/provenance"
	"podium.dev/podium/internal/rowhistory"
	"podium.dev/podium/internal/schema"
)

// maxInvalidFields bounds status.invalidFields: a row with thousands of bad values
// must not make its status larger than the row.
const maxInvalidFields = 100

// RowStatus is the status the row controller writes for row, a row no run wrote, on
// board lb at time now: the status write every row costs (the floor of
// hack/bench/25-write-ratio.sh writes it, docs/performance.md, "Rows in").
func RowStatus(row *hubv1alpha1.LeaderboardRow, lb *hubv1alpha1.Leaderboard, now time.Time) hubv1alpha1.LeaderboardRowStatus {
	return rowStatus(row, lb, now)
}

// rowStatus is verifiedRowStatus of a row whose values no run wrote.
func rowStatus(row *hubv1alpha1.LeaderboardRow, lb *hubv1alpha1.Leaderboard, now time.Time) hubv1alpha1.LeaderboardRowStatus {
	return verifiedRowStatus(row, lb, provenance.NotWritten(), now)
}

// verifiedRowStatus decides a row's status from the row, its board (nil when the board
// does not exist) and the verdict on who wrote its values (provenance.Decide) at time
// now. It is pure: the reconciler writes what it returns when it differs.
func verifiedRowStatus(row *hubv1alpha1.LeaderboardRow, lb *hubv1alpha1.Leaderboard, v provenance.Verdict, now time.Time) hubv1alpha1.LeaderboardRowStatus {
	st := *row.Status.DeepCopy()
	st.UpdatedAt = specChangedAt(row, st.ObservedGeneration, st.UpdatedAt, now)
	st.TrialLinks = trialLinks(row.Spec.TrialIDs, st.TrialLinks, st.UpdatedAt)
	changedAt := now
	if st.UpdatedAt != nil {
		changedAt = st.UpdatedAt.Time
	}
	if row.Generation != st.ObservedGeneration {
		// Only then. The cache keeps a stripped history (rowhistory.StripForCache); the
		// reconciler reads the whole status before it writes one.
		st.History, st.ObservedValues = rowhistory.Record(row, &st, changedAt)
	}
	st.ObservedGeneration = row.Generation
	st.ID = hubv1alpha1.ID(row)
	st.InvalidFields = nil
	cond := metav1.Condition{Type: hubv1alpha1.ConditionValid, ObservedGeneration: row.Generation}
	switch errs, err := validateRow(row, lb); {
	case lb == nil:
		st.SchemaGeneration = 0
		cond.Status, cond.Reason = metav1.ConditionFalse, hubv1alpha1.ReasonLeaderboardNotFound
		cond.Message = fmt.Sprintf("leaderboard: no Leaderboard %q in namespace %q yet; the row is validated when it appears", row.Spec.Leaderboard, row.Namespace)
	case err != nil:
		st.SchemaGeneration = lb.Generation
		cond.Status, cond.Reason = metav1.ConditionFalse, hubv1alpha1.ReasonLeaderboardNotReady
		cond.Message = fmt.Sprintf("leaderboard %q has an invalid schema (%v); the row cannot be validated", lb.Name, err)
	case len(errs) > 0:
		st.SchemaGeneration = lb.Generation
		cond.Status, cond.Reason = metav1.ConditionFalse, hubv1alpha1.ReasonValuesInvalid
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.String()
		}
		cond.Message = truncate(strings.Join(msgs, "; "), 4096)
		if len(errs) > maxInvalidFields {
			errs = errs[:maxInvalidFields]
		}
		for _, e := range errs {
			st.InvalidFields = append(st.InvalidFields, hubv1alpha1.FieldError{Field: e.Field, Message: e.Message})
		}
	case lb.Spec.Submissions == hubv1alpha1.SubmissionsVerifiedOnly && !v.Verified():
		st.SchemaGeneration = lb.Generation
		cond.Status, cond.Reason = metav1.ConditionFalse, hubv1alpha1.ReasonNotVerified
		cond.Message = fmt.Sprintf("leaderboard %q ranks only verified rows and this row is not verified: %s", lb.Name, v.Message)
	default:
		st.SchemaGeneration = lb.Generation
		cond.Status, cond.Reason = metav1.ConditionTrue, hubv1alpha1.ReasonValuesValid
		cond.Message = "metadata and metrics match the leaderboard's schemas"
	}
	setVerified(&st, row, v)
	meta.SetStatusCondition(&st.Conditions, cond)
	health.Set(&st.Conditions, row.Generation, verdictOf(cond.Reason), cond.Reason, cond.Message)
	return st
}

// validateRow checks the row's metadata and metrics against the board's schemas; err
// is set when a schema itself is invalid (the board reports that as InvalidSchema).
func validateRow(row *hubv1alpha1.LeaderboardRow, lb *hubv1alpha1.Leaderboard) ([]schema.FieldError, error) {
	if lb == nil {
		return nil, nil
	}
	metaSchema, err := schema.Parse(rawJSON(lb.Spec.MetadataSchema))
	if err != nil {
		return nil, fmt.Errorf("metadataSchema%s", pathSep(err.Error()))
	}
	metricsSchema, err := schema.Parse(rawJSON(lb.Spec.MetricsSchema))
	if err != nil {
		return nil, fmt.Errorf("metricsSchema%s", pathSep(err.Error()))
	}
	errs := metaSchema.Validate("metadata", rawJSON(row.Spec.Metadata))
	return append(errs, metricsSchema.Validate("metrics", rawJSON(row.Spec.Metrics))...), nil
}

// trialLinks keeps the link times of the trials still linked and records the trials
// that are new in the spec as linked at specAt, the time the current spec was first
// seen (nil before the row's spec time is known: they are recorded with its next
// change).
func trialLinks(ids []string, prev []hubv1alpha1.TrialLinkGroup, specAt *metav1.Time) []hubv1alpha1.TrialLinkGroup {
	linked := make(map[string]bool, len(ids))
	for _, id := range ids {
		linked[strings.ToLower(id)] = true
	}
	var out []hubv1alpha1.TrialLinkGroup
	known := map[string]bool{}
	for _, g := range prev {
		var keep []string
		for _, id := range g.TrialIDs {
			if k := strings.ToLower(id); linked[k] && !known[k] {
				known[k] = true
				keep = append(keep, id)
			}
		}
		if len(keep) > 0 {
			out = append(out, hubv1alpha1.TrialLinkGroup{LinkedAt: g.LinkedAt, TrialIDs: keep})
		}
	}
	var fresh []string
	for _, id := range ids {
		if !known[strings.ToLower(id)] {
			fresh = append(fresh, id)
		}
	}
	if len(fresh) > 0 && specAt != nil {
		out = append(out, hubv1alpha1.TrialLinkGroup{LinkedAt: *specAt, TrialIDs: fresh})
	}
	return out
}

// setVerified writes the Verified condition and the provenance of verdict v. A row no
// Pod ever wrote has no Verified condition (read as not verified): most rows are
// written by people and CI, and their status stays as small as it was.
func setVerified(st *hubv1alpha1.LeaderboardRowStatus, row *hubv1alpha1.LeaderboardRow, v provenance.Verdict) {
	st.Provenance = v.Provenance
	if _, written := provenance.WriterOf(row); !written && meta.FindStatusCondition(st.Conditions, hubv1alpha1.ConditionVerified) == nil {
		return
	}
	meta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: hubv1alpha1.ConditionVerified, Status: v.Status, Reason: v.Reason, Message: v.Message,
		ObservedGeneration: row.Generation,
	})
}
